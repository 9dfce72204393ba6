"""``python -m benchmarks``: the core engine's figures at the seed design's scale.

1. Builds a realistic vault (16,894 files, ~50k chunks) from ``../shared/data``.
2. Times a full index, a no-change incremental run, and a run after editing one file.
3. Reports the database size.
4. Times warm queries end to end (hybrid, BM25-only, vector-only; query embedding included)
   against sqlite-vec's brute-force KNN and a bare numpy KNN over the same vectors, measured
   in the same run, and prints the ratios; then filtered hybrid queries (folders, a tag, a
   frontmatter value, a date, drawn from the vault), the signals switched on, the chunk view
   beside the default note view, and the query syntax's operators (a phrase, an exclusion,
   prefixes, a ``tag:``).
5. Times ``vaultseek search`` in fresh processes and breaks one down by stage.

Prints a Markdown table (docs/benchmarks.md's) and, with ``--json FILE``, writes the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.baselines import numpy_knn_latency, percentile, sqlite_vec_knn_latency
from benchmarks.vaultgen import VaultSpec, build_vault, edit_one_file
from vaultseek.engine import open_index
from vaultseek.search.syntax import may_have_operators


def _sample_queries(index: Any, count: int, seed: int) -> list[str]:
    """Realistic queries: 2–6 consecutive words from random chunks, plus section titles and
    a few natural-language questions, so both lists have work to do. Plain text: a section
    title the query syntax would read an operator in (``-Path``, ``Example 2: …``) is left out."""
    rng = random.Random(seed)
    total = index.conn.execute("SELECT max(id) FROM chunks").fetchall()[0][0]
    queries: list[str] = []
    while len(queries) < count:
        row = index.conn.execute(
            "SELECT section, text FROM chunks WHERE id >= ? ORDER BY id LIMIT 1",
            (rng.randint(1, total),),
        ).fetchall()
        if not row:
            continue
        section, text = row[0]
        words = [w for w in text.split() if w.isalnum()]
        if len(queries) % 3 == 0 and section:
            if not may_have_operators(section):  # plain text: the query syntax's are timed apart
                queries.append(section)
        elif len(words) >= 6:
            start = rng.randint(0, len(words) - 6)
            queries.append(" ".join(words[start : start + rng.randint(2, 6)]))
    questions = [
        "how do I list running processes",
        "copy files to a remote server over ssh",
        "convert a video to another format",
        "get the current execution policy",
        "how to compress a directory into an archive",
    ]
    return queries[: count - len(questions)] + questions


def _filters(index: Any) -> dict[str, dict[str, Any]]:
    """Filters drawn from the vault itself, from broad to narrow: its biggest top-level folder,
    a small one (the smallest holding at least 1% of the files), its commonest tag, its
    commonest frontmatter ``type``, the files modified after the median time, and two
    frontmatter comparisons — the later half of the commonest date key's values (a range on
    dates read in SQL) and every other ``type`` (``!=``, broad); each with the share of files
    it keeps."""
    conn = index.conn
    total = conn.execute("SELECT count(*) FROM files").fetchall()[0][0]
    folders = conn.execute(
        "SELECT substr(path, 1, instr(path, '/') - 1) AS d, count(*) AS n FROM files "
        "WHERE instr(path, '/') > 0 GROUP BY d ORDER BY n DESC, d"
    ).fetchall()
    small = [f for f in folders if f[1] >= total / 100][-1]
    tag = conn.execute("SELECT tag, count(*) AS n FROM file_tags GROUP BY tag ORDER BY n DESC, tag LIMIT 1").fetchall()[0]
    kind = conn.execute(
        "SELECT value, count(*) AS n FROM frontmatter_fields WHERE key = 'type' GROUP BY value ORDER BY n DESC, value LIMIT 1"
    ).fetchall()[0]
    times = sorted(row[0] for row in conn.execute("SELECT mtime_ns FROM files"))
    median = times[len(times) // 2] // 1000 * 1000  # the ISO form below keeps microseconds
    after = datetime.fromtimestamp(median / 1e9).astimezone().isoformat()
    kept = sum(1 for t in times if t >= median)
    date_key = conn.execute(
        "SELECT key FROM frontmatter_fields WHERE value GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' "
        "GROUP BY key ORDER BY count(*) DESC, key LIMIT 1"
    ).fetchall()[0][0]
    dates = sorted(row[0] for row in conn.execute("SELECT value FROM frontmatter_fields WHERE key = ?", (date_key,)))
    since = dates[len(dates) // 2][:10]
    later = sum(1 for d in dates if d[:10] >= since)
    typed = conn.execute("SELECT count(DISTINCT file_id) FROM frontmatter_fields WHERE key = 'type'").fetchall()[0][0]
    return {
        f"folder {folders[0][0]}": {"scope": {"folders": [folders[0][0]]}, "share": folders[0][1] / total},
        f"folder {small[0]}": {"scope": {"folders": [small[0]]}, "share": small[1] / total},
        f"tag {tag[0]}": {"scope": {"tags": [tag[0]]}, "share": tag[1] / total},
        f"where type:{kind[0]}": {"scope": {"where": [f"type:{kind[0]}"]}, "share": kind[1] / total},
        "modified after the median": {"scope": {"modified_after": after}, "share": kept / total},
        f"where {date_key}>={since}": {"scope": {"where": [f"{date_key}>={since}"]}, "share": later / total},
        f"where type!={kind[0]}": {"scope": {"where": [f"type!={kind[0]}"]}, "share": (typed - kind[1]) / total},
    }


def _operators(index: Any) -> dict[str, Any]:
    """The query syntax's variants of a query (name → a function of the query's words): its
    first two words as a required phrase, a common word excluded (the one closest to 20% of
    the chunks, so about that share of the notes drop out), its last word as a prefix, a
    prefix alone (its first word's first four letters), and the commonest tag typed as
    ``tag:``. Each keeps the query's own words, so it still finds what the query finds."""
    conn = index.conn
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.bench_vocab USING fts5vocab(main, chunks_fts, 'row')")
    chunks = conn.execute("SELECT count(*) FROM chunks").fetchall()[0][0]
    common = conn.execute(
        "SELECT term, doc FROM temp.bench_vocab WHERE length(term) >= 4 AND term GLOB '[a-z]*' "
        "ORDER BY abs(doc - ?) LIMIT 1", (chunks // 5,)
    ).fetchall()[0]
    tag = conn.execute("SELECT tag FROM file_tags GROUP BY tag ORDER BY count(*) DESC, tag LIMIT 1").fetchall()[0][0]

    def phrase(words: list[str]) -> str:
        return " ".join([f'"{" ".join(words[:2])}"', *words[2:]])

    def prefix(words: list[str]) -> str:
        last = words[-1]
        return " ".join([*words[:-1], last[:4] + "*" if len(last) > 4 else last])

    return {
        "a phrase: its first two words quoted": phrase,
        f"excluding a common word (-{common[0]}: {common[1] / chunks:.0%} of chunks)": lambda w: " ".join([*w, f"-{common[0]}"]),
        "its last word as a prefix (word*)": prefix,
        "a prefix alone (its first word's first four letters*)": lambda w: w[0][:4] + "*",
        f"tag:{tag} typed in the query": lambda w: " ".join([*w, f"tag:{tag}"]),
    }


def _filtered_latencies(index: Any, queries: list[str]) -> dict[str, Any]:
    """Warm hybrid latency under each of :func:`_filters`, with the signals on and with the
    query syntax's :func:`_operators`, each query run unfiltered and then under every variant
    in turn, so a shared machine's slow spells fall on all of them alike; the unfiltered figure
    of the same loop is the yardstick."""
    variants: dict[str, dict[str, Any]] = {"unfiltered": {}}
    shares: dict[str, float] = {}
    for name, chosen in _filters(index).items():
        variants[name], shares[name] = {"filters": chosen["scope"]}, chosen["share"]
    variants["signals"] = {"title_match": True, "recency_half_life_days": 30, "intent": True}
    variants["term_match_off"] = {"term_match": 0.0}
    variants["chunk_view"] = {"view": "chunks"}
    rewrites = _operators(index)
    times: dict[str, list[float]] = {name: [] for name in [*variants, *rewrites]}
    cpu: dict[str, list[float]] = {name: [] for name in times}
    found: dict[str, int] = dict.fromkeys(rewrites, 0)
    for query in queries:
        words = [w for w in query.replace('"', " ").split() if w.isalnum()] or ["query"]
        runs = [(name, query, options) for name, options in variants.items()]
        runs += [(name, rewrite(words), {}) for name, rewrite in rewrites.items()]
        for name, text, options in runs:
            t, c = time.perf_counter(), time.process_time()
            response = index.search(text, **options)
            times[name].append((time.perf_counter() - t) * 1000)
            cpu[name].append((time.process_time() - c) * 1000)
            if name in found:
                found[name] += bool(response.results)
    summary = {
        name: {"p50_ms": percentile(v, 50), "p99_ms": percentile(v, 99), "cpu_p50_ms": percentile(cpu[name], 50), "n": len(v)}
        for name, v in times.items()
    }  # CPU time is the steadier figure on a shared machine
    return {
        "interleaved_unfiltered": summary.pop("unfiltered"),
        "signals": summary.pop("signals"),
        "term_match_off": summary.pop("term_match_off"),
        "chunk_view": summary.pop("chunk_view"),
        "syntax": {name: {**summary.pop(name), "answered": found[name] / len(queries)} for name in rewrites},
        "filtered": {name: {**timing, "share": shares[name]} for name, timing in summary.items()},
    }


def _first_use_latencies(index: Any, queries: list[str]) -> dict[str, Any]:
    """Each filter's CPU time when the store has forgotten every scope it kept (a filter's
    first use, or its first after the index changed: its files are listed and marked), beside
    the unfiltered query, interleaved as :func:`_filtered_latencies` does."""
    scopes = {"unfiltered": None, **{name: f["scope"] for name, f in _filters(index).items()}}
    cpu: dict[str, list[float]] = {name: [] for name in scopes}
    for query in queries:
        for name, scope in scopes.items():
            getattr(index.store, "_scopes", {}).clear()  # (code before the scope masks has none)
            c = time.process_time()
            index.search(query, **({"filters": scope} if scope else {}))
            cpu[name].append((time.process_time() - c) * 1000)
    return {name: {"cpu_p50_ms": percentile(v, 50), "n": len(v)} for name, v in cpu.items()}


def run_filters(args: argparse.Namespace) -> dict[str, Any]:
    """``--filters-only``: the filtered rows of :func:`run`, warm and at each filter's first use."""
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="vaultseek-bench-"))
    vault, db = work / "vault", work / "index.db"
    if not vault.exists():
        build_vault(vault, VaultSpec.scaled(args.files, seed=args.seed))
    with open_index(vault, db=db, create=True) as index:
        index.sync(remember=False)
        queries = _sample_queries(index, args.queries, args.seed)
        for q in _sample_queries(index, args.queries, args.seed + 1):
            index.search(q)
        figures = _filtered_latencies(index, queries)
        figures["first_use"] = _first_use_latencies(index, queries)
    return {**figures, "queries": len(queries)}


def render_filters(r: dict[str, Any]) -> str:
    base, first = r["interleaved_unfiltered"], r["first_use"]
    lines = [
        f"{r['queries']} queries, each unfiltered and under every filter in turn; CPU time p50 (wall p50 in brackets)",
        "",
        "| warm hybrid query | filter kept | added | first use of the filter | added |",
        "|---|---:|---:|---:|---:|",
        (f"| unfiltered | {base['cpu_p50_ms']:.2f} ms ({base['p50_ms']:.2f}) | — | "
         f"{first['unfiltered']['cpu_p50_ms']:.2f} ms | — |"),
    ]  # fmt: skip
    for name, f in r["filtered"].items():
        cold = first[name]["cpu_p50_ms"]
        lines.append(
            f"| {name} ({f['share']:.0%} of files) | {f['cpu_p50_ms']:.2f} ms ({f['p50_ms']:.2f}) | "
            f"{f['cpu_p50_ms'] - base['cpu_p50_ms']:+.2f} ms | {cold:.2f} ms | "
            f"{cold - first['unfiltered']['cpu_p50_ms']:+.2f} ms |"
        )
    return "\n".join(lines)


def _latencies(fn: Any, items: list[str]) -> dict[str, float]:
    times = []
    for item in items:
        t = time.perf_counter()
        fn(item)
        times.append((time.perf_counter() - t) * 1000)
    return {"p50_ms": percentile(times, 50), "p99_ms": percentile(times, 99), "n": len(times)}


def _fresh_process(db: Path, vault: Path, query: str, runs: int) -> dict[str, Any]:
    """Wall time of the real command, of a bare interpreter, and the stage breakdown."""
    def wall(cmd: list[str]) -> float:
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        return (time.perf_counter() - t) * 1000

    cli = [sys.executable, "-m", "vaultseek.cli.main", "search", query, "--db", str(db), "--vault", str(vault), "--json"]
    bare = [sys.executable, "-c", "pass"]
    probe = [sys.executable, "-m", "benchmarks.coldstart", "--db", str(db), "--vault", str(vault), query]
    wall(cli)  # warm the OS file cache once
    cli_ms = [wall(cli) for _ in range(runs)]
    bare_ms = [wall(bare) for _ in range(runs)]
    stages = [json.loads(subprocess.run(probe, check=True, capture_output=True, text=True).stdout) for _ in range(runs)]
    breakdown = {k: statistics.median(s[k] for s in stages) for k in stages[0] if k.endswith("_ms")}
    return {
        "cli_p50_ms": statistics.median(cli_ms),
        "python_startup_p50_ms": statistics.median(bare_ms),
        "stages_p50_ms": breakdown,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="vaultseek-bench-"))
    vault, db = work / "vault", work / "index.db"
    results: dict[str, Any] = {"files_target": args.files}
    try:
        if not vault.exists():
            stats = build_vault(vault, VaultSpec.scaled(args.files, seed=args.seed))
            results["vault_build_s"] = round(stats.seconds, 2)
        for stale in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            stale.unlink(missing_ok=True)

        with open_index(vault, db=db, create=True) as index:
            t = time.perf_counter()
            report = index.sync()
            results["full_index_s"] = time.perf_counter() - t
            results["files"] = report.added
            results["skipped"] = len(report.skipped)
            t = time.perf_counter()
            noop = index.sync()
            results["noop_incremental_s"] = time.perf_counter() - t
            assert noop.added + noop.updated == 0
            edited = edit_one_file(vault, seed=args.seed)
            t = time.perf_counter()
            one = index.sync()
            results["one_edit_s"] = time.perf_counter() - t
            results["one_edit_file"] = edited.name
            assert one.updated == 1, one
            status = index.status()
            results["chunks"] = status.chunks
            index.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            results["db_mb"] = db.stat().st_size / 1e6

            queries = _sample_queries(index, args.queries, args.seed)
            # Warm up as a long-running process would be: model and matrix loaded, the file in
            # the page cache. With *other* queries, so measured ones still read new postings.
            for q in _sample_queries(index, args.queries, args.seed + 1):
                index.search(q)
            results["hybrid"] = _latencies(lambda q: index.search(q), queries)
            results["bm25"] = _latencies(lambda q: index.search(q, mode="bm25"), queries)
            results["vector"] = _latencies(lambda q: index.search(q, mode="vector"), queries)
            results.update(_filtered_latencies(index, queries))
            model = index.embedder()
            results["embed_query"] = _latencies(model.embed_one, queries)
            vectors = index._sides.vector_index()
            query_vectors = model.embed(queries)
            floats = vectors.vectors(np.arange(len(vectors)))
            vec0 = sqlite_vec_knn_latency(floats, query_vectors, k=30)
            bare = numpy_knn_latency(floats, query_vectors, k=30)
            results["sqlite_vec_knn"] = {"p50_ms": vec0.p50_ms, "p99_ms": vec0.p99_ms}
            results["numpy_knn"] = {"p50_ms": bare.p50_ms, "p99_ms": bare.p99_ms}
        results["fresh_process"] = _fresh_process(db, vault, "how do I list running processes", args.runs)
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    return results


def render(r: dict[str, Any]) -> str:
    h, vec0 = r["hybrid"], r["sqlite_vec_knn"]
    fp = r["fresh_process"]
    st = fp["stages_p50_ms"]
    rows = [
        ("vault", f"{r['files']:,} files, {r['chunks']:,} chunks", "16,894 files / ~50k chunks"),
        ("full index", f"{r['full_index_s']:.1f} s", "≤ 60 s"),
        ("no-change incremental run", f"{r['noop_incremental_s']:.2f} s", "≤ 1 s"),
        ("one edited file re-indexed", f"{r['one_edit_s']:.2f} s", "≤ 1 s"),
        ("database size", f"{r['db_mb']:.1f} MB", "≤ 83 MB"),
        ("warm hybrid query p50 / p99", f"{h['p50_ms']:.2f} / {h['p99_ms']:.2f} ms", "≤ 5 / ≤ 15 ms"),
        ("warm BM25-only query p50 / p99", f"{r['bm25']['p50_ms']:.2f} / {r['bm25']['p99_ms']:.2f} ms", ""),
        ("warm vector-only query p50 / p99", f"{r['vector']['p50_ms']:.2f} / {r['vector']['p99_ms']:.2f} ms", ""),
        *_filtered_rows(r),
        ("query embedding p50", f"{r['embed_query']['p50_ms']:.3f} ms", ""),
        ("baseline: sqlite-vec vec0 KNN alone p50 / p99", f"{vec0['p50_ms']:.2f} / {vec0['p99_ms']:.2f} ms", ""),
        ("baseline: numpy KNN alone p50", f"{r['numpy_knn']['p50_ms']:.2f} ms", ""),
        ("ratio: our whole hybrid query / vec0 KNN alone (p50)", f"{h['p50_ms'] / vec0['p50_ms']:.2f}×", "< 1 is faster"),
        ("fresh `vaultseek search` process p50", f"{fp['cli_p50_ms']:.0f} ms", "report"),
        ("… of which bare Python start-up", f"{fp['python_startup_p50_ms']:.0f} ms", ""),
        ("… imports (numpy, apsw, engine)", f"{st['import_ms']:.0f} ms", ""),
        ("… open database", f"{st['open_db_ms']:.0f} ms", ""),
        ("… load model", f"{st['model_load_ms']:.0f} ms", ""),
        ("… load vectors", f"{st['vector_load_ms']:.0f} ms", ""),
        ("… the query itself", f"{st['query_ms']:.0f} ms", ""),
    ]
    lines = ["| figure | measured | target |", "|---|---:|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def _filtered_rows(r: dict[str, Any]) -> list[tuple[str, str, str]]:
    if "filtered" not in r:
        return []
    base = r["interleaved_unfiltered"]
    unfiltered = f"{base['p50_ms']:.2f} / {base['p99_ms']:.2f} ms{_cpu(base)}"
    rows = [("… unfiltered, interleaved with the filtered runs below", unfiltered, "")]
    rows += [
        (f"… filter {name} ({f['share']:.0%} of files)", f"{f['p50_ms']:.2f} / {f['p99_ms']:.2f} ms{_cpu(f)}",
         "a few ms over unfiltered")
        for name, f in r["filtered"].items()
    ]  # fmt: skip
    s = r["signals"]
    rows.append(("… title match + recency + intent on", f"{s['p50_ms']:.2f} / {s['p99_ms']:.2f} ms", ""))
    if "term_match_off" in r:
        t = r["term_match_off"]
        rows.append(("… term matching off", f"{t['p50_ms']:.2f} / {t['p99_ms']:.2f} ms{_cpu(t)}", ""))
    if "chunk_view" in r:
        c = r["chunk_view"]
        rows.append(("… the chunk view (`view` chunks; the rows above are the note view)", f"{c['p50_ms']:.2f} / {c['p99_ms']:.2f} ms{_cpu(c)}", ""))
        rows.append(("ratio: note view / chunk view (p50, interleaved)", f"{base['p50_ms'] / c['p50_ms']:.2f}× (CPU {base['cpu_p50_ms'] / c['cpu_p50_ms']:.2f}×)", "a few rows more"))
    rows += [
        (f"… query syntax: {name} (answered {f['answered']:.0%})", f"{f['p50_ms']:.2f} / {f['p99_ms']:.2f} ms{_cpu(f)}",
         "a few ms over unfiltered")
        for name, f in r.get("syntax", {}).items()
    ]  # fmt: skip
    return rows


def _cpu(figure: dict[str, Any]) -> str:
    return f" (CPU p50 {figure['cpu_p50_ms']:.2f} ms)" if "cpu_p50_ms" in figure else ""


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=16_894, help="vault size in files")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--runs", type=int, default=10, help="fresh-process repetitions")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", help="reuse this folder (the vault is built once)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary vault and index")
    parser.add_argument("--json", metavar="FILE", help="also write the raw numbers here")
    parser.add_argument("--filters-only", action="store_true",
                        help="only the filtered queries, on the --workdir's index (indexed when missing): "
                             "each filter's warm cost and its first use's")  # fmt: skip
    args = parser.parse_args()
    np.random.seed(args.seed)
    if args.filters_only:
        figures = run_filters(args)
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2, default=float))
        print(render_filters(figures))
        return
    results = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=float))
    print(render(results))


if __name__ == "__main__":
    main()
