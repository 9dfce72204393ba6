"""``python -m benchmarks.coverage``: search quality while the deep tier is partly done.

Right after ``vaultseek index`` no chunk has a deep vector; hours later every chunk has one; a
note saved a minute ago has none while the rest do. For each judged set whose index has every
deep vector, this benchmark makes copies of that index in which only a share of the chunks
keep theirs (0 %, 10 %, 50 %, 90 %, 100 %) and evaluates the default hybrid search on each,
beside the fast tiers alone (the deep list's weight 0) on the full copy. It also asks **known
items** at every level: a note's title, and a word that only one note holds, each of which
should bring that note first; **shared words**, a word two to six sections hold (a name met
in a meeting note and in a code example): how often the first note holds it, and how often
it matches (``shared matched``); and how many of the judged questions still **match** (no
"nothing matches" notice) and how many made-up queries (``unrelated.jsonl``'s nonsense in the
set's language and English) are told that nothing does.

Which chunks keep their vectors (``--order``): ``random``, a seeded random choice, since any
chunk may be the one waiting (a note edited here and there); or ``worker``, the chunks the
background worker embeds first — every note's opening, newest file first, then the other
chunks in the same order, file by file — which is what a search meets in the hours after
``vaultseek index``. Either is one draw of which chunks wait (in the worker's order, the
vault's modification times decide which files come first): ``--seeds`` draws several (in the
worker's order, each seed a random order of the files in place of their ages) and reports each
level's mean over them and, per set, the worst single draw's nDCG@10 against the fast tiers.

A golden file names the pages its author had in mind; a search can answer with another page
that answers the question as well. ``--reader-pages`` also counts as relevant (grade 1) the
pages of the sections a reader labelled relevant among the pooled results of the fast and the
deep tier (``golden/labels/``, the sets that have them).

    python -m benchmarks.coverage --data ../shared/data --workdir DIR \\
        [--sets tldr-de,psdocs-en] [--beir scifact,cranfield] [--levels 0,10,50,90,100] \\
        [--split tune] [--beir-split train] [--known 150] [--order random|worker] [--seeds 11,0,1]
        [--reader-pages]

The indexes are read where ``python -m benchmarks.golden`` and ``vaultseek eval --workdir``
leave them: ``DIR/<lang>.db`` for a tldr set, ``DIR/psdocs.db`` and ``DIR/psref.db`` for the
PowerShell sets, ``DIR/beir/<name>/`` for a BEIR collection; give them their deep vectors
first with ``vaultseek deep --vault … --db …``.
They are only read: the copies (every row, the fast tiers' too, is measured on one) go to
``DIR/coverage-<pid>/`` and are removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.golden import vault_of
from benchmarks.judgment import with_reader_pages
from vaultseek.engine import Index, open_index
from vaultseek.errors import NotFoundError, VaultseekError
from vaultseek.evaluation.harness import NO_DEEP, Configuration, run_configurations
from vaultseek.evaluation.judged_sets import EvalQuery, load_beir, load_golden
from vaultseek.storage.db import copy_database, open_connection

GOLDEN = Path(__file__).resolve().parent / "golden"
HYBRID = Configuration("hybrid", "hybrid")
SHOWN = ("nDCG@10", "nDCG@5", "Recall@10", "Hit@1")
"""The metrics the table shows, those of them the harness computes."""


@dataclass(frozen=True, slots=True)
class Source:
    """A judged set and the index (with every deep vector) it is measured on."""

    name: str
    vault: Path
    db: Path
    queries: list[EvalQuery]
    document_of: Callable[[str], str]
    nonsense: list[str]
    """Made-up queries no note of the vault answers (none where ``unrelated.jsonl`` does not
    name the vault)."""


def golden_source(name: str, data: Path, workdir: Path, split: str, *, reader_pages: bool = False) -> Source:
    """A judged set's questions of ``split``; with ``reader_pages``, each question's judgments
    also hold the pages a reader found relevant among pooled results
    (:func:`benchmarks.judgment.with_reader_pages`)."""
    vault, db_name = vault_of(data, name)
    queries, _skipped = load_golden(GOLDEN / f"{name}.jsonl", split)
    if reader_pages:
        queries, _added = with_reader_pages(name, queries)
    return Source(name, vault, workdir / f"{db_name}.db", queries, lambda path: path, nonsense_of(name.split("-")[0], name.split("-")[1], split))


def beir_source(name: str, data: Path, workdir: Path, split: str | None, prompts: str) -> Source:
    """A BEIR collection's questions of ``split``, and the nonsense prompts of ``prompts``."""
    collection = load_beir(data / "ir" / name, split)
    home = workdir / "beir" / name
    notes: dict[str, str] = json.loads((home / "manifest.json").read_text("utf-8"))["notes"]
    return Source(name, home / "vault", home / "index.db", list(collection.queries), notes.__getitem__, nonsense_of(name, "en", prompts))


def nonsense_of(vault: str, language: str, split: str) -> list[str]:
    """The nonsense prompts of ``unrelated.jsonl``'s ``split`` checked against ``vault``, in
    ``language`` or English."""
    lines = map(json.loads, (GOLDEN / "unrelated.jsonl").open(encoding="utf-8"))
    return [
        line["query"] for line in lines
        if line["kind"] == "nonsense" and line["split"] == split and vault in line["unrelated_to"] and line["lang"] in {"en", language}
    ]  # fmt: skip


def match_shares(index: Index, source: Source, **options: Any) -> list[str]:
    """The share of the judged questions that match (no "nothing matches" notice) and of the
    nonsense prompts told that nothing does, as table cells."""
    matched = sum(not index.search(q.text, **options).no_match for q in source.queries)
    silent = sum(index.search(text, **options).no_match for text in source.nonsense)
    return [f"{matched / len(source.queries):.3f}", f"{silent / len(source.nonsense):.3f}" if source.nonsense else "—"]


def known_items(index: Index, count: int, seed: int = 5) -> list[tuple[str, str, str]]:
    """Up to ``count`` notes' (kind, query, path): the note's title, and a word of at least
    five letters that no other chunk of the index holds."""
    rng = random.Random(seed)
    paths = sorted(f["path"] for f in index.files() if f.get("status") == "indexed")
    rng.shuffle(paths)
    items: list[tuple[str, str, str]] = []
    for path in paths[:count]:
        try:
            rows = index.get_note(path)
        except NotFoundError:  # an empty file: indexed, but with no chunk to ask for
            continue
        title = rows[0].heading_context.split("|")[0].strip()
        if title:
            items.append(("title", title, path))
        words = sorted(set(re.findall(r"[^\W\d_]{5,}", " ".join(r.text for r in rows).lower())))
        rng.shuffle(words)
        words = words[:40]
        rare = [w for w, df in zip(words, index.store.document_frequencies(words), strict=True) if df == 1]
        if rare:
            items.append(("word", rare[0], path))
    return items


def shared_words(index: Index, count: int, seed: int = 6) -> list[tuple[str, str, str]]:
    """Up to ``count`` notes' ("word", word, path): a word of at least four letters that two to
    :data:`SHARED` chunks hold, this note's among them — a name met in a meeting note and in
    a code example, which no note holds alone."""
    rng = random.Random(seed)
    paths = sorted(f["path"] for f in index.files() if f.get("status") == "indexed")
    rng.shuffle(paths)
    items: list[tuple[str, str, str]] = []
    taken: set[str] = set()
    for path in paths:
        if len(items) >= count:
            break
        try:
            rows = index.get_note(path)
        except NotFoundError:
            continue
        words = sorted(set(re.findall(r"[^\W\d_]{4,}", " ".join(r.text for r in rows).lower())) - taken)
        rng.shuffle(words)
        words = words[:40]
        held = [w for w, df in zip(words, index.store.document_frequencies(words), strict=True) if 2 <= df <= SHARED]
        if held:
            items.append(("word", held[0], path))
            taken.add(held[0])
    return items


SHARED = 6
""":func:`shared_words`: the most chunks that may hold the word."""


def matched_share(index: Index, items: Sequence[tuple[str, str, str]], **options: Any) -> float:
    """The share of ``items``' queries not told that nothing matches."""
    matched = sum(not index.search(query, k=8, **options).no_match for _kind, query, _path in items)
    return matched / len(items) if items else float("nan")


def known_share(index: Index, items: Sequence[tuple[str, str, str]], **options: Any) -> float:
    """The share of known items whose note comes first: for a title, a note with that title
    (several notes may share one); for a word, a note that holds it or its stem. ``options`` go
    to the search."""
    found = 0
    for kind, query, path in items:
        results = index.search(query, k=1, **options).results
        if not results:
            continue
        top = results[0].path
        if kind == "title":
            found += top == path or index.get_note(top)[0].heading_context.split("|")[0].strip() == query
        else:  # the word, or its stem as BM25 reads it (``negates`` is found in ``negate``)
            found += results[0].bm25_rank is not None or any(query in row.text.lower() for row in index.get_note(top))
    return found / len(items) if items else float("nan")


RANDOM_SEED = 11
"""The random order's seed when none is given."""


def partial_copy(source: Index, dest: Path, fraction: float, seed: int | None, order: str = "random") -> None:
    """A copy of ``source``'s index at ``dest`` in which a ``fraction`` of the chunks keep their
    deep vectors: a seeded random choice (no seed: :data:`RANDOM_SEED`), or the first of
    :func:`worker_order`."""
    _remove(dest)
    copy_database(source.conn, dest)
    ids, _codes = source.store.load_deep_vectors()
    if order == "worker":
        ranked = worker_order(source, ids.tolist(), seed)
        dropped = ranked[round(fraction * len(ranked)) :]
    else:
        drawn = np.random.default_rng(RANDOM_SEED if seed is None else seed).random(len(ids))
        dropped = ids[drawn >= fraction].tolist()
    with open_index(source.vault, db=dest) as copy:
        copy.store.drop_deep_vectors(dropped)


def worker_order(index: Index, ids: list[int], seed: int | None = None) -> list[int]:
    """``ids`` (chunks) in the order the deep worker embeds them (``Store.deep_pending``):
    every file's opening first, then the other chunks, each pass newest file first (ties: the
    file indexed last), a file's chunks in order. With a ``seed``, the files' ages are drawn
    instead: a seeded random order of the files stands in for newest first (a benchmark
    vault's modification times are when it was unpacked, not when its notes were written)."""
    files = index.store.chunk_files(ids)
    openings = {chunk for chunk, _mtime in index.store.first_chunks(sorted({f for f, _m in files.values()})).values()}
    age = {f: (-mtime, -f) for f, mtime in files.values()}
    if seed is not None:
        drawn = np.random.default_rng(seed).permutation(len(age)).tolist()
        age = {f: (rank, 0) for f, rank in zip(sorted(age), drawn, strict=True)}
    return sorted(files, key=lambda chunk: (chunk not in openings, age[files[chunk][0]], chunk))


def measure(
    source: Source, levels: Sequence[int], scratch: Path, known: int, seeds: Sequence[int | None], order: str = "random"
) -> tuple[list[list[str]], float]:
    """The fast tiers' row and a row per level, and the worst single draw's nDCG@10 against the
    fast tiers. A level strictly between 0 and 100 % is drawn once per seed (:func:`partial_copy`)
    and its row is the draws' mean (:func:`mean_row`); 0 and 100 % are one draw. Every row is
    measured on a copy opened the same way (the source is read through a plain read-only
    connection, so an index of an older schema is upgraded in the copies only, and the fast row
    and the 0 % row can only differ by the deep model's presence)."""
    rows: list[list[str]] = []
    worst = math.inf
    scratch.mkdir(parents=True, exist_ok=True)
    whole = scratch / f"{source.name}-whole.db"
    _remove(whole)
    original = open_connection(source.db, create=False, read_only=True)
    try:
        copy_database(original, whole)
    finally:
        original.close()
    try:
        with open_index(source.vault, db=whole) as full:
            deep = full.deep_status()
            if deep is None or deep.embedded < deep.chunks:
                share = f"{deep.embedded:,} of {deep.chunks:,}" if deep else "none"
                raise SystemExit(f"{source.name}: the index {source.db} needs every deep vector (has {share}); run `vaultseek deep`")
            items, shared = known_items(full, known), shared_words(full, known)
            (fast,) = run_configurations(full, source.queries, source.document_of, (NO_DEEP,))
            rows.append([source.name, "fast tiers", *_cells(fast.scores), f"{known_share(full, items, deep_weight=0.0):.3f}",
                         *_shared_cells(full, shared, deep_weight=0.0), *match_shares(full, source, deep_weight=0.0)])  # fmt: skip
            for level in levels:
                draws: list[list[str]] = []
                for seed in seeds if 0 < level < 100 else seeds[:1]:
                    dest = scratch / f"{source.name}-{level}.db"
                    partial_copy(full, dest, level / 100, seed, order)
                    try:
                        with open_index(source.vault, db=dest, read_only=True) as index:
                            (hybrid,) = run_configurations(index, source.queries, source.document_of, (HYBRID,))
                            draws.append([source.name, f"{level} %", *_cells(hybrid.scores), f"{known_share(index, items):.3f}",
                                          *_shared_cells(index, shared), *match_shares(index, source)])  # fmt: skip
                    finally:
                        _remove(dest)
                worst = min(worst, *(float(draw[2]) - float(rows[0][2]) for draw in draws))
                rows.append(mean_row(draws))
    finally:
        _remove(whole)
    return rows, worst


def mean_row(draws: Sequence[list[str]]) -> list[str]:
    """One row of cells from the rows of several draws of a level: each numeric cell their mean
    (to three decimals, as measured), each other cell the first draw's."""
    row = list(draws[0])
    for column in range(len(row)):
        try:
            values = [float(draw[column]) for draw in draws]
        except ValueError:
            continue
        row[column] = f"{sum(values) / len(values):.3f}"
    return row


def _remove(db: Path) -> None:
    for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}.writer.lock"), Path(f"{db}.deep.lock")):
        path.unlink(missing_ok=True)


def _shared_cells(index: Index, items: Sequence[tuple[str, str, str]], **options: Any) -> list[str]:
    """The shared words' cells: the share whose first note holds the word, and the share matched."""
    return [f"{known_share(index, items, **options):.3f}", f"{matched_share(index, items, **options):.3f}"]


def _cells(scores: dict[str, float]) -> list[str]:
    return [f"{scores[name]:.3f}" if name in scores else "—" for name in SHOWN]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coverage", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--sets", default="", help="judged sets, e.g. tldr-de,psdocs-en")
    parser.add_argument("--beir", default="", help="BEIR collections, e.g. scifact,cranfield")
    parser.add_argument("--levels", default="0,10,50,90,100", help="deep coverage levels, in percent")
    parser.add_argument("--split", default="tune", help="golden sets: the split")
    parser.add_argument("--beir-split", default=None, help="BEIR: the queries of this split (default: its test queries)")
    parser.add_argument("--known", type=int, default=150, help="notes asked for by title and by a rare word")
    parser.add_argument("--seeds", default=None,
                        help="draws, e.g. 11,0,1: each level between 0 and 100 %% is drawn once per seed and reported as "
                             "the draws' mean (random order: which chunks wait, default 11; worker order: a random order "
                             "of the files in place of their ages, default their modification times)")  # fmt: skip
    parser.add_argument("--order", choices=("random", "worker"), default="random",
                        help="which chunks keep their deep vectors: a random choice, or the worker's first")  # fmt: skip
    parser.add_argument("--reader-pages", action="store_true",
                        help="judged sets: also count the pages a reader labelled relevant among pooled results "
                             "(benchmarks/golden/labels/) as relevant, at grade 1")  # fmt: skip
    args = parser.parse_args(argv)
    data, workdir = Path(args.data), Path(args.workdir)
    try:
        levels = [int(v) for v in args.levels.split(",")]
    except ValueError:
        parser.error("--levels takes whole percentages, e.g. 0,10,50,90,100")
    if any(not 0 <= v <= 100 for v in levels):
        parser.error("--levels are percentages from 0 to 100")
    try:
        seeds: list[int | None] = [None] if args.seeds is None else [int(v) for v in args.seeds.split(",")]
    except ValueError:
        parser.error("--seeds takes whole numbers, e.g. 11,0,1")
    sources = [golden_source(n, data, workdir, args.split, reader_pages=args.reader_pages) for n in filter(None, args.sets.split(","))]
    try:
        sources += [beir_source(n, data, workdir, args.beir_split, args.split) for n in filter(None, args.beir.split(","))]
    except (OSError, KeyError, ValueError, VaultseekError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    head = ["set", "deep coverage", *SHOWN, "known items", "shared words", "shared matched", "matched", "nonsense told"]
    print("  ".join(head))
    scratch = workdir / f"coverage-{os.getpid()}"  # two runs on one workdir keep apart
    try:
        for source in sources:
            try:
                rows, worst_draw = measure(source, levels, scratch, args.known, seeds, args.order)
            except VaultseekError as exc:
                print(f"error: {source.name}: {exc.message}", file=sys.stderr)
                return 2
            for row in rows:
                print("  ".join(row), flush=True)
            fast = {name: float(v) for name, v in zip(SHOWN, rows[0][2:], strict=False) if v != "—"}
            worst = min(float(row[2]) - fast["nDCG@10"] for row in rows[1:])
            drawn = f" (the worst single draw: {worst_draw:+.3f})" if worst_draw < worst - 5e-4 else ""
            print(f"{source.name}: worst nDCG@10 against the fast tiers: {worst:+.3f}{drawn}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
