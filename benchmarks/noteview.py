"""``python -m benchmarks.noteview``: the note view beside the chunk view on long, sectioned notes.

The conceptual pages of the PowerShell documentation
(``<data>/powershell-docs/reference/docs-conceptual``: 638 pages, about 4,800 chunks, many of
them long pages of many ``##`` sections) are indexed by the real engine, once, into
``--workdir``. Two query sets are drawn, seeded, from the pages that have four chunks or more:
their **titles** (a reader looking for a page) and their **section headings** (a reader looking
for a topic several pages touch). No judgments are needed: each query is asked in both views at
k = 10 and the table reports, per set,

- the distinct notes among the ten results: the chunk view's repeats take places, the note
  view's ten are ten notes whenever the vault holds them;
- the sections the note view shows per note (``search/grouping.py``'s rule), and how many of
  the chunk view's ten places a note's second or later section takes;
- what other rules for a note's extra sections would show: the cap of three alone, the cap and
  the position test, the cap and the score share, and all three (the shipped rule, checked
  against what the note view showed);
- the size of the JSON answer (what MCP and HTTP send; tokens at 4 characters each);
- warm latency, the two views interleaved query by query (each query three times), and the
  ratio of the p50s, of wall time and of CPU time (the steadier on a shared machine).

    python -m benchmarks.noteview --data ../shared/data [--workdir DIR] [--queries 40] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.baselines import percentile
from vaultseek.engine import Index, open_index
from vaultseek.records import SearchResult
from vaultseek.search.grouping import MAX_SECTIONS, PAGE, SECTION_SHARE, note_order

PAGES = Path("powershell-docs") / "reference" / "docs-conceptual"
K = 10
MIN_CHUNKS = 4
_HEADING = re.compile(r"^## +(.+?)\s*#*\s*$", re.MULTILINE)


def query_sets(index: Index, vault: Path, count: int, seed: int) -> dict[str, list[str]]:
    """``count`` page titles and ``count`` section headings, drawn from the pages that have at
    least :data:`MIN_CHUNKS` chunks (each set without repeats)."""
    rows = [r for r in index.store.file_rows() if r["status"] == "indexed" and int(str(r["chunks"])) >= MIN_CHUNKS]
    rng = random.Random(seed)
    titles = sorted({str(r["title"]) for r in rows if r["title"]})
    headings: set[str] = set()
    for row in rows:
        text = (vault / str(row["path"])).read_text("utf-8", errors="replace")
        headings.update(h for h in _HEADING.findall(text) if len(h) > 3)
    return {
        "page titles": rng.sample(titles, min(count, len(titles))),
        "section headings": rng.sample(sorted(headings), min(count, len(headings))),
    }


RULES = ("cap", "cap+position", "cap+share", "cap+position+share")


def sections_by_rule(ranked: list[SearchResult], notes: int) -> dict[str, list[int]]:
    """Sections each of the first ``notes`` notes of a ranked chunk list would show under each
    of :data:`RULES` (the last is ``grouping.py``'s)."""
    firsts: dict[str, int] = {}
    for position, hit in enumerate(ranked):
        firsts.setdefault(hit.path, position)
    order = note_order((hit.path, hit.score, hit.signals.get("title", 0.0) > 0) for hit in ranked)
    page_end = max(firsts[path] for path in order[:PAGE]) if len(order) >= PAGE else len(ranked)
    out: dict[str, list[int]] = {rule: [] for rule in RULES}
    for path in order[:notes]:
        chunks = [(i, hit) for i, hit in enumerate(ranked) if hit.path == path]
        best = chunks[0][1]
        floor = SECTION_SHARE * (best.score - best.signals.get("title", 0.0))
        for rule in RULES:
            extra = [h for i, h in chunks[1:] if ("position" not in rule or i < page_end) and ("share" not in rule or h.score >= floor)]
            out[rule].append(1 + len(extra[: MAX_SECTIONS - 1]))
    return out


def measure(index: Index, queries: list[str]) -> dict[str, Any]:
    """Both views of every query (untimed first, so the model and vectors are loaded), then
    both again interleaved and timed."""
    distinct: dict[str, list[int]] = {"chunks": [], "notes": []}
    repeats: list[int] = []
    per_note: list[int] = []
    sizes: dict[str, list[int]] = {"chunks": [], "notes": []}
    rules: dict[str, list[int]] = {rule: [] for rule in RULES}
    mismatches = 0
    for query in queries:
        chunks = index.search(query, view="chunks", k=K)
        notes = index.search(query, view="notes", k=K)
        ranked = list(index.search(query, view="chunks", k=100).results)
        for rule, counts in sections_by_rule(ranked, len(notes.notes)).items():
            rules[rule] += counts
        mismatches += rules[RULES[-1]][-len(notes.notes) :] != [len(n.sections) for n in notes.notes]
        chunk_paths = [r.path for r in chunks.results]
        distinct["chunks"].append(len(set(chunk_paths)))
        distinct["notes"].append(len({n.path for n in notes.notes}))
        repeats.append(len(chunk_paths) - len(set(chunk_paths)))
        per_note += [len(n.sections) for n in notes.notes]
        for view, response in (("chunks", chunks), ("notes", notes)):
            sizes[view].append(len(json.dumps(response.to_dict(), ensure_ascii=False)))
    wall: dict[str, list[float]] = {"chunks": [], "notes": []}
    cpu: dict[str, list[float]] = {"chunks": [], "notes": []}
    for _round in range(3):
        for query in queries:
            for view in ("chunks", "notes"):
                started, used = time.perf_counter(), time.process_time()
                index.search(query, view=view, k=K)
                wall[view].append((time.perf_counter() - started) * 1000)
                cpu[view].append((time.process_time() - used) * 1000)
    return {
        "queries": len(queries),
        "distinct_in_top10": {view: statistics.mean(values) for view, values in distinct.items()},
        "queries_with_repeats": sum(1 for r in repeats if r) / len(queries),
        "repeat_places": statistics.mean(repeats),
        "sections_per_note": statistics.mean(per_note),
        "notes_with_several_sections": sum(1 for n in per_note if n > 1) / len(per_note),
        "json_bytes": {view: statistics.mean(values) for view, values in sizes.items()},
        "p50_ms": {view: percentile(values, 50) for view, values in wall.items()},
        "cpu_p50_ms": {view: percentile(values, 50) for view, values in cpu.items()},
        "sections_per_note_by_rule": {rule: statistics.mean(counts) for rule, counts in rules.items()},
        "rule_mismatches": mismatches,
    }


def render(results: dict[str, dict[str, Any]], chunks: int, files: int) -> str:
    lines = [
        f"PowerShell conceptual docs: {files:,} pages, {chunks:,} chunks; k = {K}; queries drawn from pages of {MIN_CHUNKS}+ chunks",
        "",
        ("| query set | queries | distinct notes in the first 10: chunk view | note view | places a repeat takes (chunk view) "
         "| queries with a repeat | sections per note (note view) | notes showing 2+ sections | JSON answer, chunk / note view "
         "| warm p50, chunk / note view | note / chunk |"),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        kb = {view: r["json_bytes"][view] / 1000 for view in ("chunks", "notes")}
        tokens = {view: r["json_bytes"][view] / 4 for view in ("chunks", "notes")}
        lines.append(
            f"| {name} | {r['queries']} | {r['distinct_in_top10']['chunks']:.2f} | {r['distinct_in_top10']['notes']:.2f} "
            f"| {r['repeat_places']:.2f} | {r['queries_with_repeats']:.0%} | {r['sections_per_note']:.2f} "
            f"| {r['notes_with_several_sections']:.0%} "
            f"| {kb['chunks']:.1f} / {kb['notes']:.1f} kB (~{tokens['chunks']:,.0f} / ~{tokens['notes']:,.0f} tokens) "
            f"| {r['p50_ms']['chunks']:.2f} / {r['p50_ms']['notes']:.2f} ms | {r['p50_ms']['notes'] / r['p50_ms']['chunks']:.2f}× "
            f"(CPU {r['cpu_p50_ms']['notes'] / r['cpu_p50_ms']['chunks']:.2f}×) |"
        )
    lines += [
        "",
        "Sections per note among the first ten notes, by the rule for a note's extra sections:",
        "",
        "| query set | " + " | ".join(RULES) + " | queries where the note view differs from its rule |",
        "|---|" + "---:|" * (len(RULES) + 1),
    ]
    for name, r in results.items():
        cells = [f"{r['sections_per_note_by_rule'][rule]:.2f}" for rule in RULES]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {r['rule_mismatches']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.noteview", description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", help="the folder holding powershell-docs/ (default: %(default)s)")
    parser.add_argument("--workdir", help="keep the index here (reused by later runs)")
    parser.add_argument("--queries", type=int, default=40, help="queries per set (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", metavar="FILE", help="also write the raw figures here")
    args = parser.parse_args(argv)
    vault = Path(args.data).expanduser() / PAGES
    if not vault.is_dir():
        print(f"error: no {vault}\nhint: pass --data, the folder holding powershell-docs/", file=sys.stderr)
        return 2
    scratch = None if args.workdir else tempfile.TemporaryDirectory(prefix="vaultseek-noteview-")
    workdir = Path(scratch.name if scratch else args.workdir).expanduser()
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        with open_index(vault, db=workdir / "powershell.db", create=True, deep_tier=False) as index:
            index.sync(remember=False)
            status = index.status()
            sets = query_sets(index, vault, args.queries, args.seed)
            results = {name: measure(index, queries) for name, queries in sets.items()}
    finally:
        if scratch:
            scratch.cleanup()
    if args.json:
        Path(args.json).write_text(json.dumps({"queries": sets, "results": results}, indent=2, ensure_ascii=False), "utf-8")
    print(render(results, status.chunks, status.files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
