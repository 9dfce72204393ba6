"""``python -m benchmarks.smallvault``: the relevance judgment in a small vault.

A new user tries vaultseek on a folder of a dozen notes before pointing it at the real vault,
and a project folder is small too. The judged sets' vaults hold hundreds to thousands of pages,
so this benchmark carves small vaults out of them:

- questions of the chosen split are drawn at random (seeded) and each brings its best-graded
  pages, until those make about half the vault;
- other pages of the same vault, drawn at random, fill it to ``--notes`` pages.

Each small vault is indexed by the real engine, and its questions and the unrelated prompts
(``benchmarks/golden/unrelated.jsonl``, as :mod:`benchmarks.judgment` picks them) are asked
twice: right after indexing, with the fast tiers alone, and after the deep tier has embedded
every section. Per set, size and tier, the table gives the share of answerable questions that
get results rather than "nothing matches" (the bar is 95 %), of unrelated prompts and of
nonsense told "nothing matches", Hit@1, and the precision and recall of the sections judged
relevant (:data:`vaultseek.search.relevance.RELEVANT`) among the first eight, every result
labelled as :mod:`benchmarks.judgment` labels it.

    python -m benchmarks.smallvault --data ../shared/data --workdir DIR \\
        [--sets tldr-en,psdocs-en] [--notes 12,60] [--vaults 2] [--split test] [--examples FILE]

The small vaults and their indexes are made in ``DIR/small/``. ``--examples`` keeps what the
searches gave in a file and reads it on the next run (``python -m benchmarks.judgment --small``
fits on the same examples).
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.golden import vault_of
from benchmarks.judgment import (
    DEEP_MODEL,
    GOLDEN,
    SETS,
    STATIC_MODEL,
    Gathered,
    gathered,
    golden_lines,
    load_labels,
    page_counts,
    prompts_asked,
)
from vaultseek.engine import Index, open_index
from vaultseek.errors import VaultseekError
from vaultseek.evaluation.calibration import Query, judge_scores
from vaultseek.search import relevance

SIZES = (12, 60)
ANSWERS_SHARE = 0.5
"""The share of a small vault's pages that answer its questions; the rest are other pages."""


def best_pages(line: dict[str, Any]) -> list[str]:
    """A question's best-graded pages."""
    top = max(line["relevant"].values())
    return sorted(path for path, grade in line["relevant"].items() if grade == top)


def draw_vault(pages: list[str], lines: list[dict[str, Any]], notes: int, seed: int) -> tuple[list[str], list[dict[str, Any]]]:
    """The pages of one small vault of ``notes`` pages and the questions it answers: questions
    in a seeded order, each bringing its best pages while they make at most
    :data:`ANSWERS_SHARE` of the vault, then other pages."""
    rng = random.Random(seed)
    chosen: set[str] = set()
    asked = []
    held = set(pages)
    for line in rng.sample(lines, len(lines)):
        best = [p for p in best_pages(line) if p in held]
        if not best or len(chosen | set(best)) > max(ANSWERS_SHARE * notes, 1):
            continue
        chosen |= set(best)
        asked.append(line)
    others = [p for p in pages if p not in chosen]
    chosen |= set(rng.sample(others, min(max(notes - len(chosen), 0), len(others))))
    return sorted(chosen), asked


def build(source: Path, pages: list[str], root: Path) -> Path:
    """``pages`` of ``source`` copied into ``root/vault`` (kept when it already holds them)."""
    vault = root / "vault"
    done = root / "pages.json"
    if done.is_file() and json.loads(done.read_text("utf-8")) == pages:
        return vault
    shutil.rmtree(root, ignore_errors=True)
    for rel in pages:
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, vault / rel)
    done.write_text(json.dumps(pages), "utf-8")
    return vault


def small_vaults(data: Path, workdir: Path, name: str, split: str, sizes: list[int], vaults: int) -> Iterator[tuple[str, Index, list[dict[str, Any]], bool]]:
    """Each small vault drawn from the set's vault, freshly indexed: its label
    (``set·notes``), its open index, the questions it answers and whether the deep tier has
    embedded it. Each vault is yielded twice, right after indexing (the fast tiers alone) and
    with every deep vector."""
    source, _db = vault_of(data, name)
    pages = sorted(p.relative_to(source).as_posix() for p in source.rglob("*.md"))
    lines = golden_lines(name, split)
    model = None
    for notes in sizes:
        for sample in range(vaults):
            vault_pages, asked = draw_vault(pages, lines, notes, seed=sample)
            root = workdir / "small" / f"{name}-{notes}-{sample}"
            vault = build(source, vault_pages, root)
            for stale in root.glob("index.db*"):
                stale.unlink()
            with open_index(vault, db=root / "index.db", create=True, deep_tier=True) as index:
                index.sync(remember=False)
                yield f"{name}·{notes}", index, asked, False
                model = model or index.deep_model()
                index.deepen(model=model)
                yield f"{name}·{notes}", index, asked, True


def collect(data: Path, workdir: Path, sets: list[str], split: str, unrelated: Path, sizes: list[int], vaults: int) -> Iterator[Gathered]:
    """:data:`benchmarks.judgment.Gathered` per question and unrelated prompt of each small
    vault, its set named ``set·notes``."""
    for name in sets:
        labels = load_labels(name)
        prompts = prompts_asked(unrelated, name, split)
        for label, index, asked, deep in small_vaults(data, workdir, name, split, sizes, vaults):
            for line in asked + prompts:
                yield gathered(index, label, line, labels, deep=deep)
            tier = "deep tier complete" if deep else "fast tiers"
            print(f"  {label} ({tier}): {len(asked)} questions", file=sys.stderr, flush=True)


Asked = tuple[str, Query]
"""A query's kind (``unrelated:nonsense`` …) and its examples."""


def row(asked: list[Asked], judges: relevance.Judges) -> str:
    """One table row's cells: answerable questions matched, unrelated prompts and nonsense
    told "no match", Hit@1, the results' precision and recall, the number of questions."""
    related = [q for _kind, q in asked if not q.unrelated]
    scores = judge_scores(judges, related)
    hits = sum(bool(q.examples) and q.examples[0][1] for q in related)
    cells = [f"{scores.answered:.3f}"]
    for wanted in ("unrelated:", "unrelated:nonsense"):
        prompts = [q for kind, q in asked if kind.startswith(wanted)]
        cells.append(f"{judge_scores(judges, prompts).silent:.3f}" if prompts else "—")
    cells += [f"{hits / max(len(related), 1):.3f}", f"{scores.precision:.3f}", f"{scores.recall:.3f}", str(len(related))]
    return " | ".join(cells)


def table(found: list[Gathered]) -> list[str]:
    """The Markdown table: a row per set, size and tier, then per size and tier over every set."""
    judges = {False: relevance.judges_for(STATIC_MODEL, None), True: relevance.judges_for(STATIC_MODEL, DEEP_MODEL)}
    groups: dict[tuple[str, bool], list[Asked]] = {}
    for label, kind, deep, query, _text, _shown in found:
        notes = label.split("·")[1]
        for group in (label, f"every set·{notes}"):
            groups.setdefault((group, deep), []).append((kind, query))
    lines = [
        "| small vault | tier | answerable matched | unrelated told no match | nonsense told no match | Hit@1 | results P | results R | questions |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    labels = sorted({label for label, _deep in groups}, key=lambda s: (s.startswith("every"), s.split("·")[0], int(s.split("·")[1])))
    for label in labels:
        for deep in (False, True):
            if (label, deep) in groups:
                tier = "deep tier complete" if deep else "fast tiers"
                lines.append(f"| {label.replace('·', ', ')} notes | {tier} | {row(groups[label, deep], judges[deep])} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.smallvault", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--workdir", required=True, help="the small vaults and their indexes are made here")
    parser.add_argument("--sets", default=",".join(SETS), help="judged sets to carve vaults from (default: the judgment's)")
    parser.add_argument("--notes", type=page_counts, default=list(SIZES), help="pages per small vault, e.g. 12,60")
    parser.add_argument("--vaults", type=int, default=2, help="small vaults drawn per set and size")
    parser.add_argument("--split", default="tune")
    parser.add_argument("--unrelated", default=str(GOLDEN / "unrelated.jsonl"), help="prompts nothing answers")
    parser.add_argument("--examples", help="keep what the searches gave in this file (pickle) and reuse it")
    args = parser.parse_args(argv)
    kept = Path(args.examples) if args.examples else None
    if kept is not None and kept.is_file():
        found: list[Gathered] = pickle.loads(kept.read_bytes())  # the benchmark's own file
    else:
        try:
            found = list(collect(Path(args.data), Path(args.workdir), args.sets.split(","), args.split,
                                 Path(args.unrelated), args.notes, args.vaults))  # fmt: skip
        except VaultseekError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 2
        if kept is not None:
            kept.write_bytes(pickle.dumps(found))
    print(f"Small vaults ({args.vaults} per set and size, the {args.split} questions):\n")
    print("\n".join(table(found)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
