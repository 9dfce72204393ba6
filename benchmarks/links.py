"""``python -m benchmarks.links``: the link features' figures on the benchmark vault.

1. Builds (or reuses) the benchmark vault (16,894 files, ~50k chunks) and indexes it.
2. Times link resolution: every link from scratch (what a first index pays), and what a
   sync pays after an edit of the most linked-to note and after renaming it (moved into
   another folder and back; the vault is left as it was); the link graph's build (once per
   index state); ``Index.links`` and ``Index.related``.
3. Times warm hybrid searches with the link boost off and on (both signals), interleaved
   query by query so machine load hits both alike (wall and CPU time), and the boost step
   alone.
4. A known-item quality probe, nDCG@10 and MRR@10 with the boost off and at several weights
   of each signal, on two kinds of note: the PowerShell reference (densely linked by markdown
   links; each cmdlet's SYNOPSIS line as the query, every version of its page relevant) and
   the tldr pages under ``cli/`` (sparsely linked; each page's description line as the
   query, that page relevant). Only a probe — whether a signal helps *your* vault is for
   ``vaultseek eval --golden`` with ``VAULTSEEK_LINK_BOOST`` set to say.
5. With ``--judged``: the same sweep over the judged sets :mod:`benchmarks.vaultgolden`
   takes from the PowerShell docs' own aliases, titles, descriptions and links (the sets
   ``python -m benchmarks.signals`` uses), as paired per-query nDCG@10 differences.

Prints Markdown tables and, with ``--json FILE``, writes the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.vaultgen import VaultSpec, build_vault
from vaultseek.engine import Index, open_index
from vaultseek.evaluation.metrics import (
    first_occurrences,
    ndcg_at_k,
    percentile,
    reciprocal_rank_at_k,
)
from vaultseek.index.sync import Syncer
from vaultseek.links.linking import relink
from vaultseek.search.candidates import lexical_hits
from vaultseek.search.combine import fuse
from vaultseek.search.fusion import Fused
from vaultseek.search.linkgraph import boost, contenders
from vaultseek.search.params import SearchParams
from vaultseek.text.lexical import parse_query

_SYNOPSIS = re.compile(r"^## SYNOPSIS\s*\n+([^\n#][^\n]*)", re.MULTILINE)
_DESCRIPTION = re.compile(r"^> ([^\n]+)", re.MULTILINE)
_WIKILINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
WEIGHTS = (0.1, 0.3, 1.0)


def _ms(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def _wall_and_cpu(fn: Callable[[], Any]) -> tuple[float, float]:
    """Wall time and this process's CPU time (all threads), in ms. On a busy machine the CPU
    time still says what a query costs; on a quiet one the two agree."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def _summary(times: list[float]) -> dict[str, float]:
    return {"p50_ms": percentile(times, 50), "p99_ms": percentile(times, 99), "n": len(times)}


Probe = list[tuple[str, dict[str, float]]]


def probe_queries(vault: Path, limit: int, seed: int) -> dict[str, Probe]:
    """Known-item queries, a sample of ``limit`` per kind: ``reference`` (a cmdlet's SYNOPSIS
    line → every version of its page) and ``cli`` (a tldr page's description → that page)."""
    pages: dict[str, list[str]] = {}
    synopsis: dict[str, str] = {}
    for path in sorted((vault / "reference").rglob("*.md")):
        found = _SYNOPSIS.search(path.read_text("utf-8", "replace"))
        if found is not None:
            pages.setdefault(path.name, []).append(path.relative_to(vault).as_posix())
            synopsis.setdefault(path.name, found.group(1).strip())
    reference = [(synopsis[n], dict.fromkeys(pages[n], 1.0)) for n in sorted(synopsis)]
    cli = []
    for path in sorted((vault / "cli").rglob("*.md")):
        found = _DESCRIPTION.search(path.read_text("utf-8", "replace"))
        if found is not None:
            cli.append((_WIKILINK.sub(r"\1", found.group(1)).strip(), {path.relative_to(vault).as_posix(): 1.0}))
    out = {}
    for kind, items in (("reference", reference), ("cli", cli)):
        usable = [item for item in items if len(item[0].split()) >= 4]
        out[kind] = sorted(random.Random(seed).sample(usable, min(limit, len(usable))))
    return out


def _resolve_after(index: Index, change: Callable[[], None]) -> tuple[float, int]:
    """Make a change in the vault, index it, then time the link resolution that follows
    (what ``Index.sync`` does in one call, split to time the second half)."""
    change()
    Syncer(index.store, index.config, index.embedder).run()
    started = time.perf_counter()
    count = relink(index.store)
    return (time.perf_counter() - started) * 1000, count


def time_links(index: Index, vault: Path, seed: int) -> dict[str, Any]:
    store = index.store
    links = int(str(index.conn.execute("SELECT count(*) FROM links").fetchall()[0][0]))
    out: dict[str, Any] = {"links": links}
    full = []
    for _ in range(3):  # what a first index (or an upgrade) pays: every name, every link
        with index.conn:
            index.conn.execute("UPDATE links SET via = NULL, resolved = NULL")
            index.conn.execute("DELETE FROM link_names")
            index.conn.execute("INSERT INTO link_changes(path) SELECT path FROM files")
        full.append(_ms(lambda: relink(store)))
    out["resolve_all_ms"] = statistics.median(full)
    hub = str(index.conn.execute(
        "SELECT resolved FROM links WHERE resolved IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    ).fetchall()[0][0])
    out["hub"], out["hub_backlinks"] = hub, index.link_graph().backlinks(hub)
    original, moved = vault / hub, vault / "archive-moved" / Path(hub).name
    text = original.read_text("utf-8")
    edits, renames = [], []
    try:
        for n in range(3):

            def edit(n: int = n) -> None:
                original.write_text(f"{text}\nedit {n}\n", "utf-8")

            def move(source: Path, target: Path) -> Callable[[], None]:
                def run() -> None:
                    source.rename(target)

                return run

            edits.append(_resolve_after(index, edit))
            moved.parent.mkdir(exist_ok=True)
            renames.append(_resolve_after(index, move(original, moved)))
            _resolve_after(index, move(moved, original))
    finally:
        if moved.exists():
            moved.rename(original)
        original.write_text(text, "utf-8")
        index.sync(remember=False)
        if moved.parent.exists():
            moved.parent.rmdir()
    out["resolve_after_edit_ms"] = statistics.median(ms for ms, _n in edits)
    out["resolve_after_edit_links"] = edits[0][1]
    out["resolve_after_rename_ms"] = statistics.median(ms for ms, _n in renames)
    out["resolve_after_rename_links"] = renames[0][1]
    graph = []
    for _ in range(5):
        index._graph.forget_graph()
        graph.append(_ms(index.link_graph))
    out["graph_build_ms"] = statistics.median(graph)
    built = index.link_graph()
    out["graph"] = {"nodes": len(built), "edges": built.edges}
    rng = random.Random(seed)
    paths = sorted(row["path"] for row in index.files() if row["status"] == "indexed")
    sample = rng.sample(paths, min(200, len(paths)))
    index.related(sample[0])  # model and vectors loaded
    out["links_call"] = _summary([_ms(partial(index.links, p)) for p in sample])
    out["related_call"] = _summary([_ms(partial(index.related, p)) for p in sample])
    return out


SETTINGS: dict[str, dict[str, Any]] = {
    "off": {},
    "backlinks 0.3": {"link_boost": 0.3, "link_signal": "backlinks"},
    "neighbours 0.3": {"link_boost": 0.3, "link_signal": "neighbours"},
}


def time_search(index: Index, queries: list[str]) -> dict[str, Any]:
    for query in queries[:50]:  # warm: model, matrix, graph, page cache
        for options in SETTINGS.values():
            index.search(query, **options)
    times: dict[str, list[float]] = {label: [] for label in SETTINGS}
    cpu: dict[str, list[float]] = {label: [] for label in SETTINGS}
    for query in queries:
        for label, options in SETTINGS.items():
            wall, used = _wall_and_cpu(lambda: index.search(query, **options))  # noqa: B023
            times[label].append(wall)
            cpu[label].append(used)
    out: dict[str, Any] = {label: _summary(values) for label, values in times.items()}
    out["cpu"] = {label: _summary(values) for label, values in cpu.items()}
    vectors, model = index._sides.vector_side()
    graph = index.link_graph()
    params = SearchParams()
    step = []
    for query in queries:
        fused: list[Fused] = fuse(
            {"bm25": lexical_hits(index.store, parse_query(query), 100), "vector": vectors.search(model.embed_one(query), 100)},
            params,
        )
        def step_once(fused: list[Fused] = fused) -> None:  # what run_search does with the fused list
            head = contenders(fused, 10, 0.3)
            boost(head, index.store.chunk_paths([f.item for f in head]), graph, 0.3)

        step.append(_ms(step_once))
    out["boost_step"] = _summary(step)
    return out


def probe_quality(index: Index, probes: dict[str, Probe]) -> list[dict[str, Any]]:
    rows = []
    settings: list[tuple[str, dict[str, Any]]] = [("off", {})]
    settings += [(f"{signal} {w}", {"link_boost": w, "link_signal": signal}) for signal in ("backlinks", "neighbours") for w in WEIGHTS]
    for label, options in settings:
        row: dict[str, Any] = {"setting": label}
        for kind, probe in probes.items():
            ndcg, rr = [], []
            for query, judged in probe:
                ranking = first_occurrences(hit.path for hit in index.search(query, view="chunks", k=100, **options).results)
                ndcg.append(ndcg_at_k(ranking, judged, 10))
                rr.append(reciprocal_rank_at_k(ranking, judged, 10))
            row[kind] = {"ndcg@10": statistics.fmean(ndcg), "mrr@10": statistics.fmean(rr)}
        rows.append(row)
    return rows


def judged_sets(workdir: Path, data: Path) -> dict[str, list[dict[str, Any]]]:
    """The boost swept over the vaultgolden sets: per set and setting, nDCG@10, its paired
    difference from the boost off (± standard error) and the MRR@10 difference."""
    from benchmarks import vaultgolden
    from benchmarks.signals import paired
    from vaultseek.evaluation.harness import Configuration, evaluate_golden

    root = workdir / "powershell-judged"
    vault, golden, db = root / "vault", root / "golden", root / "index.db"
    if not (golden / "title.jsonl").is_file():
        notes = vaultgolden.build_vault(vaultgolden.powershell_source(data), vault)
        vaultgolden.write_golden(vaultgolden.golden_sets(notes), golden)
        db.unlink(missing_ok=True)
    chosen = [Configuration("off", "hybrid", None, (("link_boost", 0.0),))]
    chosen += [Configuration(f"{signal} {w}", "hybrid", None, (("link_boost", w), ("link_signal", signal)))
               for signal in ("backlinks", "neighbours") for w in WEIGHTS]  # fmt: skip
    out: dict[str, list[dict[str, Any]]] = {}
    with open_index(vault, db=db, create=True) as index:
        index.sync(remember=False)
        for name in vaultgolden.SETS:
            report = evaluate_golden(index, golden / f"{name}.jsonl", chosen=chosen)
            base = report.results[0]
            out[name] = [
                {"setting": r.configuration.label, "queries": report.queries, "ndcg@10": r.scores["nDCG@10"],
                 "delta": paired(base.per_query_ndcg, r.per_query_ndcg).render(),
                 "mrr_delta": r.scores["MRR@10"] - base.scores["MRR@10"]}
                for r in report.results
            ]  # fmt: skip
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="vaultseek-links-"))
    vault, db = work / "vault", work / "index.db"
    if not vault.exists():
        build_vault(vault, VaultSpec.scaled(args.files, seed=args.seed))
    results: dict[str, Any] = {}
    with open_index(vault, db=db, create=True) as index:
        report = index.sync(remember=False)
        results["files"], results["chunks"] = report.scanned, index.status().chunks
        probes = probe_queries(vault, args.queries, args.seed)
        results["probe_queries"] = {kind: len(items) for kind, items in probes.items()}
        results["timing"] = time_links(index, vault, args.seed)
        results["search"] = time_search(index, [q for items in probes.values() for q, _j in items])
        results["quality"] = probe_quality(index, probes)
    if args.judged:
        results["judged"] = judged_sets(work, Path(args.data))
    results["load"] = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    return results


def render(r: dict[str, Any]) -> str:
    t, s = r["timing"], r["search"]
    rows = [
        ("vault", f"{r['files']:,} files, {r['chunks']:,} chunks, {t['links']:,} links", ""),
        ("link graph", f"{t['graph']['nodes']:,} notes with links, {t['graph']['edges']:,} edges", ""),
        ("resolve every link (first index)", f"{t['resolve_all_ms']:.0f} ms", ""),
        ("resolution after an edit of the most linked-to note", f"{t['resolve_after_edit_ms']:.1f} ms",
         f"{t['resolve_after_edit_links']} links ({t['hub']}, {t['hub_backlinks']} backlinks)"),
        ("resolution after renaming it into another folder", f"{t['resolve_after_rename_ms']:.1f} ms",
         f"{t['resolve_after_rename_links']} links"),
        ("build the link graph (once per index state)", f"{t['graph_build_ms']:.0f} ms", ""),
        ("`Index.links` p50 / p99", f"{t['links_call']['p50_ms']:.2f} / {t['links_call']['p99_ms']:.2f} ms", ""),
        ("`Index.related` p50 / p99", f"{t['related_call']['p50_ms']:.1f} / {t['related_call']['p99_ms']:.1f} ms", ""),
    ]
    rows += [(f"warm hybrid search, link boost {label}, p50 / p99", f"{s[label]['p50_ms']:.2f} / {s[label]['p99_ms']:.2f} ms",
              f"CPU p50 {s['cpu'][label]['p50_ms']:.2f} ms") for label in SETTINGS]  # fmt: skip
    rows.append(("… the boost step alone p50 / p99", f"{s['boost_step']['p50_ms']:.2f} / {s['boost_step']['p99_ms']:.2f} ms", ""))
    lines = ["| figure | measured | |", "|---|---:|---|", *(f"| {a} | {b} | {c} |" for a, b, c in rows)]
    lines.append(f"\n(load average during the run: {r['load']})")
    n = r["probe_queries"]
    lines += ["", f"Known-item probe, hybrid ({n['reference']} PowerShell SYNOPSIS queries; {n['cli']} tldr descriptions):", "",
              "| link boost | reference nDCG@10 | reference MRR@10 | cli nDCG@10 | cli MRR@10 |", "|---|---:|---:|---:|---:|"]  # fmt: skip
    lines += [f"| {q['setting']} | {q['reference']['ndcg@10']:.4f} | {q['reference']['mrr@10']:.4f} | "
              f"{q['cli']['ndcg@10']:.4f} | {q['cli']['mrr@10']:.4f} |" for q in r["quality"]]  # fmt: skip
    for name, rows in r.get("judged", {}).items():
        lines += ["", f"PowerShell judged set `{name}` ({rows[0]['queries']} queries, hybrid):", "",
                  "| link boost | nDCG@10 | Δ nDCG@10 (paired) | Δ MRR@10 |", "|---|---:|---:|---:|"]  # fmt: skip
        lines += [f"| {q['setting']} | {q['ndcg@10']:.4f} | {q['delta']} | {q['mrr_delta']:+.4f} |" for q in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.links", description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=16_894, help="vault size in files")
    parser.add_argument("--queries", type=int, default=300, help="probe queries (one per cmdlet)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", help="reuse this folder (the vault is built once)")
    parser.add_argument("--json", metavar="FILE", help="also write the raw numbers here")
    parser.add_argument("--judged", action="store_true", help="also sweep the PowerShell judged sets (~15 min)")
    parser.add_argument("--data", default="../shared/data", help="the shared data folder, for --judged")
    args = parser.parse_args()
    results = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    print(render(results))


if __name__ == "__main__":
    main()
