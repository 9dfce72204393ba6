"""Where "close" begins for related notes (``links.related.CLOSE``), and what it tells.

``vaultseek related`` lists a note's nearest notes even when nothing in the vault is about it;
each result says whether it is *close*: linked, or its cosine at or above its model's line.
Three kinds of notes test the lines, in the English vaults whose indexes ``python -m
benchmarks.golden --workdir DIR`` keeps (``en``: the tldr pages; ``psdocs`` and ``psref``: the
PowerShell docs and cmdlet reference):

* **outsiders** — abstracts from collections none of these vaults is about (medicine,
  aeronautics, library science, physics: ``ir/{medline,cranfield,cisi,npl}``), embedded by the
  index's own models as a note's sections are and set against the vault as a note of it would
  be: their nearest notes should not be close. Each collection's abstracts alternate between
  the ``tune`` and the ``test`` half in a seeded order;
* **family pages** (tldr) — a page's related notes should hold a close page of its tool's
  family (``benchmarks.related``'s families and split), through ``Index.related``;
* **linked pages** (PowerShell) — how often the notes a page links with are close by meaning
  alone (links make them close anyway: this says how far meaning agrees with the author).

    python -m benchmarks.closeness --data ../shared/data --workdir DIR --split tune [--fit]

``--fit`` prints each model's line: the cosine, rounded up to 0.01, that 95 % of the tune
half's outsiders' nearest notes stay under in every vault. Each set is measured with the fast
tiers and, where its index has deep vectors, with the deep tier too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import sys
from pathlib import Path

import numpy as np

from benchmarks.golden import vault_of
from benchmarks.related import families, print_table
from vaultseek import Index, open_index
from vaultseek.cli.terminal import ProgressBar
from vaultseek.errors import VaultseekError
from vaultseek.links.related import CLOSE, Lines, nearest_files

SETS = {"en": "tldr-en", "psdocs": "psdocs-en", "psref": "psref-en"}
"""Index name in ``--workdir`` → the golden set whose vault it indexes."""
OUTSIDERS = ("medline", "cranfield", "cisi", "npl")
PER_COLLECTION = 120
"""Abstracts drawn from each collection: half for each split."""
LINKED_PAGES = 200
"""Pages with direct links sampled per PowerShell vault."""
KEPT = 0.95
"""The share of outsiders a line keeps from being close, in every vault (``--fit``)."""
DEPTH = 20


def outsiders(data: Path, split: str, per: int = PER_COLLECTION) -> list[tuple[str, str]]:
    """(id, text) of the abstracts of ``split``: per collection, a seeded shuffle of its
    documents, the first ``per``, alternating tune / test."""
    chosen = []
    for name in OUTSIDERS:
        lines = [
            json.loads(line)
            for line in (data / "ir" / name / "corpus.jsonl").open(encoding="utf-8")
        ]
        lines.sort(key=lambda doc: str(doc["_id"]))
        random.Random(0).shuffle(lines)
        half = lines[:per][0::2] if split == "tune" else lines[:per][1::2]
        chosen += [
            (f"{name}/{doc['_id']}", f"{doc.get('title') or ''}\n\n{doc['text']}".strip())
            for doc in half
        ]
    return chosen


def nearest_cosines(
    index: Index, texts: list[str], deep: bool
) -> tuple[list[float], list[float] | None]:
    """Each text's best cosine to a note of the vault: by the static model, and by the deep
    model with its hub offsets as ``related`` scores it (None: no deep vectors)."""
    vectors, model = index._sides.vector_side()
    static = []
    for vector in model.embed(texts):
        static.append(_best(index, vectors, vector))
    if not deep:
        return static, None
    deep_vectors = index._sides.deep_side()[0]
    return static, [_best(index, deep_vectors, vector) for vector in index.deep_model().embed_passages(texts)]


def _best(index: Index, vectors: object, vector: np.ndarray) -> float:
    norm = float(np.linalg.norm(vector))
    found = nearest_files(index.store, vectors, vector / norm, 1) if norm > 0 else {}  # type: ignore[arg-type]
    return max(found.values(), default=-1.0)


def family_pages(index: Index, split: str) -> tuple[int, int, int]:
    """(pages, pages whose related notes hold a close page of their family, pages told
    nothing is close) over the tldr families of ``split``."""
    groups = families([f["path"] for f in index.files()], split)
    pages = held = lonely = 0
    for members in groups.values():
        for page in members:
            found = index.related(page, k=10)
            pages += 1
            held += any(r.close and r.path in members for r in found.results)
            lonely += found.nothing_close
    return pages, held, lonely


def linked_pages(index: Index, lines: Lines) -> tuple[int, int, int]:
    """(pages with direct links, their directly linked notes, those close by meaning alone)."""
    graph = index.link_graph()
    paths = sorted(f["path"] for f in index.files())
    with_links = [p for p in paths if any(n.linked for n in graph.related(p))]
    random.Random(0).shuffle(with_links)
    notes = close = 0
    for page in with_links[:LINKED_PAGES]:
        for r in index.related(page, k=50).results:
            if r.linked:
                notes += 1
                close += bool(lines.close(False, r.similarity, r.deep_similarity))
    return min(len(with_links), LINKED_PAGES), notes, close


def line_for(cosines_by_set: dict[str, list[float]]) -> float:
    """The cosine, rounded up to 0.01, that :data:`KEPT` of each set's outsiders stay under."""
    return max(math.ceil(float(np.quantile(c, KEPT)) * 100) / 100 for c in cosines_by_set.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.closeness", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--data",
        default="../shared/data",
        help="the folder holding ir/, tldr/ and powershell-docs/",
    )
    parser.add_argument(
        "--workdir",
        metavar="DIR",
        required=True,
        help="where the indexes are kept (en.db, psdocs.db, psref.db)",
    )
    parser.add_argument("--split", default="tune", choices=("tune", "test"))
    parser.add_argument(
        "--sets", metavar="LIST", default=",".join(SETS), help="default: %(default)s"
    )
    parser.add_argument("--fit", action="store_true", help="print the lines the tune half gives")
    args = parser.parse_args(argv)
    data, bar = Path(args.data), ProgressBar()
    texts = outsiders(data, args.split)
    rows: list[tuple[str, ...]] = [("set", "tiers", "outsiders", "nothing close", "family pages", "with a close one", "told nothing close",
             "linked notes", "close by meaning")]  # fmt: skip
    fitted: dict[str, dict[str, list[float]]] = {"static": {}, "deep": {}}
    try:
        for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
            vault, db = vault_of(data, SETS[name])
            with open_index(vault, db=Path(args.workdir) / f"{db}.db", create=True) as index:
                index.sync(progress=bar, remember=False)
                bar.clear()
                status = index.deep_status()
                has_deep = status is not None and status.embedded > 0
                static, deep = nearest_cosines(index, [text for _id, text in texts], has_deep)
                fitted["static"][name] = static
                if deep is not None:
                    fitted["deep"][name] = deep
                tiers = [("fast", False), *([("deep", True)] if has_deep else [])]
                for label, with_deep in tiers:
                    index.config = dataclasses.replace(index.config, deep_tier=with_deep)
                    lines = Lines(
                        CLOSE.get(index.embedder().name),
                        CLOSE.get(index.deep_model().name) if with_deep else None,
                    )
                    deeps: list[float | None] = [*deep] if deep is not None else [None] * len(static)
                    apart = sum(not lines.close(False, s, d) for s, d in zip(static, deeps, strict=True))
                    row = [name, label, str(len(texts)), f"{apart / len(texts):.3f}"]
                    if name == "en":
                        pages, held, lonely = family_pages(index, args.split)
                        row += [
                            str(pages),
                            f"{held / max(pages, 1):.3f}",
                            f"{lonely / max(pages, 1):.3f}",
                            "",
                            "",
                        ]
                    else:
                        _pages, notes, close = linked_pages(index, lines)
                        row += ["", "", "", str(notes), f"{close / max(notes, 1):.3f}"]
                    rows.append(tuple(row))
                    sys.stderr.write(f"{name} {label}: done\n")
    except VaultseekError as exc:
        sys.stderr.write(f"error: {exc.message}\n" + (f"hint: {exc.hint}\n" if exc.hint else ""))
        return exc.exit_code
    print_table(rows)
    if args.fit:
        for side, by_set in fitted.items():
            if by_set:
                quantiles = ", ".join(
                    f"{n} {float(np.quantile(c, KEPT)):.3f}" for n, c in by_set.items()
                )
                sys.stdout.write(
                    f"{side} line: {line_for(by_set):.2f} ({KEPT:.0%} of outsiders under: {quantiles})\n"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
