"""``python -m benchmarks.typos``: the judged questions with a typo in them, against as typed.

People type fast. Each question of the judged sets (``benchmarks/golden``) that has a word of
five letters or more gets one typo in one such word, chosen by a seeded draw per question:
two neighbouring letters swapped, a letter dropped, a letter doubled, or a letter replaced by
its neighbour on a QWERTY keyboard — never the first letter, which people rarely miss and the
correction keeps (``search/vocabulary.py``). Both versions of every question are searched the
way ``python -m benchmarks.golden`` searches them (the hybrid, the note view's nDCG@10 and
Hit@1), and each once more as a user's search is (the note view) to read whether the relevance
judgment matched it or said nothing matches, and whether a notice says what it searched
instead (a correction, the vault's word of like meaning). *as typed* is the share of the
typo'd questions whose nDCG@10 is the one the question has as typed (within 0.005): a slip
the search corrects should change nothing.

    python -m benchmarks.typos --data ../shared/data --workdir DIR [--split tune]
        [--sets psref-en,tldr-de] [--seed 0] [--examples FILE]

The indexes are the golden benchmark's (``--workdir``: built there when missing). Only sets in
Latin script are taken by default (a typo in Chinese or Japanese is another matter: a wrong
character from the input method). ``--examples`` writes each question, its typo'd form and
the two nDCG@10 as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.golden import GOLDEN_DIR, find_sets, vault_of
from vaultseek.cli.terminal import ProgressBar
from vaultseek.engine import open_index
from vaultseek.engine.index import Index
from vaultseek.errors import VaultseekError
from vaultseek.evaluation.harness import Configuration, evaluate_golden
from vaultseek.text.lexical import STOPWORDS

LATIN_SETS = ("tldr-en", "tldr-de", "tldr-es", "psdocs-en", "psdocs-de", "psref-en", "psref-de")
"""The sets a typo is typed into by default: those asked in a language written in Latin script."""
HYBRID = Configuration("hybrid", "hybrid")
WORD = re.compile(r"(?<![\w$-])([^\W\d_]{5,})(?![\w-])")
"""A word a typo may go into: five letters or more, not part of an identifier (``Get-Item``,
``$PSItem``, ``snake_case``)."""
QWERTY = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
SAID = ("searched for ", "no chunk has ")
"""How the notices that say what was searched for a word no chunk holds begin (a correction,
a word of like meaning)."""


def neighbours(letter: str) -> str:
    """The letters beside ``letter`` on its QWERTY row (``g`` → ``fh``); none off the rows."""
    for row in QWERTY:
        at = row.find(letter.lower())
        if at >= 0:
            return row[max(0, at - 1) : at] + row[at + 1 : at + 2]
    return ""


def with_typo(question: str, rng: random.Random) -> str | None:
    """``question`` with one typo in one of its longer words (none: no word to put it in)."""
    words = [m for m in WORD.finditer(question) if m.group(1).lower() not in STOPWORDS]
    if not words:
        return None
    match = rng.choice(words)
    word = match.group(1)
    kinds = ["swap", "drop", "double"] + (["key"] if any(neighbours(c) for c in word[1:]) else [])
    kind = rng.choice(kinds)
    if kind == "swap":
        at = rng.randrange(1, len(word) - 1)
        typed = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
        if typed == word:  # two equal letters ("committee"): drop one instead
            typed = word[:at] + word[at + 1 :]
    elif kind == "drop":
        at = rng.randrange(1, len(word))
        typed = word[:at] + word[at + 1 :]
    elif kind == "double":
        at = rng.randrange(1, len(word))
        typed = word[: at + 1] + word[at] + word[at + 1 :]
    else:
        at = rng.choice([i for i in range(1, len(word)) if neighbours(word[i])])
        swap = rng.choice(neighbours(word[at]))
        typed = word[:at] + (swap.upper() if word[at].isupper() else swap) + word[at + 1 :]
    return question[: match.start(1)] + typed + question[match.end(1) :]


@dataclass(slots=True)
class SetScores:
    """One set's figures, as typed and with the typo."""

    questions: int = 0
    ndcg: tuple[float, float] = (0.0, 0.0)
    hit1: tuple[float, float] = (0.0, 0.0)
    matched: tuple[int, int] = (0, 0)
    """Questions the relevance judgment matched (not "nothing matches"): as typed, with the typo."""
    said: int = 0
    """Typo'd questions whose response names what it searched for the mistyped word."""
    same: int = 0
    """Typo'd questions whose nDCG@10 is their nDCG@10 as typed (within :data:`SAME`)."""


SAME = 0.005
"""How close a typo'd question's nDCG@10 must be to its nDCG@10 as typed to count as the same."""


def measure_set(index: Index, golden: Path, split: str, seed: int, examples: list[dict[str, object]]) -> SetScores:
    """Both versions of the set's questions of ``split`` through the golden benchmark's scoring,
    then each through a user's search for the judgment's verdict."""
    lines = [json.loads(line) for line in golden.read_text("utf-8").splitlines() if line.strip()]
    chosen = []
    for line in lines:
        if line.get("split") != split:
            continue
        typed = with_typo(line["query"], random.Random(f"{seed}:{line['id']}"))
        if typed is not None:
            chosen.append((line, typed))
    if not chosen:
        return SetScores()
    with tempfile.TemporaryDirectory(prefix="vaultseek-typos-") as scratch:
        clean, typo = Path(scratch) / "clean.jsonl", Path(scratch) / "typo.jsonl"
        clean.write_text("".join(json.dumps(line) + "\n" for line, _typed in chosen), "utf-8")
        typo.write_text("".join(json.dumps({**line, "query": typed}) + "\n" for line, typed in chosen), "utf-8")
        reports = [evaluate_golden(index, path, split=split, chosen=(HYBRID,)).results[0] for path in (clean, typo)]
    scores = SetScores(len(chosen))
    scores.ndcg = (reports[0].scores["nDCG@10"], reports[1].scores["nDCG@10"])
    scores.hit1 = (reports[0].scores["Hit@1"], reports[1].scores["Hit@1"])
    matched = [0, 0]
    for line, typed in chosen:
        for n, text in enumerate((line["query"], typed)):
            response = index.search(text, syntax=False)
            matched[n] += not response.no_match
            if n == 1 and any(notice.startswith(SAID) for notice in response.notices):
                scores.said += 1
        pair = [reports[0].per_query_ndcg[line["id"]], reports[1].per_query_ndcg[line["id"]]]
        scores.same += abs(pair[0] - pair[1]) <= SAME
        examples.append({"id": line["id"], "query": line["query"], "typo": typed, "ndcg@10": pair})
    scores.matched = (matched[0], matched[1])
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.typos", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="the shared data folder (tldr/, powershell-docs/)")
    parser.add_argument("--workdir", required=True, help="the golden benchmark's indexes (built there when missing)")
    parser.add_argument("--split", default="tune", choices=("tune", "test"))
    parser.add_argument("--sets", help=f"comma-separated set names (default: {','.join(LATIN_SETS)})")
    parser.add_argument("--seed", type=int, default=0, help="which typos are drawn (default 0)")
    parser.add_argument("--examples", metavar="FILE", help="write each question, its typo and both nDCG@10 as JSON lines")
    args = parser.parse_args(argv)
    try:
        sets = find_sets(GOLDEN_DIR, args.sets.split(",") if args.sets else list(LATIN_SETS))
        workdir = Path(args.workdir).expanduser()
        workdir.mkdir(parents=True, exist_ok=True)
        examples: list[dict[str, object]] = []
        rows = []
        bar = ProgressBar()
        for name, golden in sets.items():
            vault, db_name = vault_of(Path(args.data).expanduser(), name)
            with open_index(vault, db=workdir / f"{db_name}.db", create=True) as index:
                index.sync(progress=bar, remember=False)
                bar.clear()
                rows.append((name, measure_set(index, golden, args.split, args.seed, examples)))
    except VaultseekError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"python -m benchmarks.typos --split {args.split} --seed {args.seed}: one typo per question, hybrid")
    print(f"{'set':10} {'questions':>9}  {'nDCG@10 typed → typo':>22}  {'Hit@1 typed → typo':>20}  "
          f"{'matched typed → typo':>21}  {'said':>5}  {'as typed':>8}")  # fmt: skip
    total = SetScores()
    for name, s in rows:
        q = max(s.questions, 1)
        print(f"{name:10} {s.questions:>9}  {s.ndcg[0]:>10.3f} → {s.ndcg[1]:.3f}  {s.hit1[0]:>8.3f} → {s.hit1[1]:.3f}  "
              f"{s.matched[0] / q:>9.3f} → {s.matched[1] / q:.3f}  {s.said / q:>5.2f}  {s.same / q:>8.2f}")  # fmt: skip
        total.questions += s.questions
        total.ndcg = (total.ndcg[0] + s.ndcg[0] * s.questions, total.ndcg[1] + s.ndcg[1] * s.questions)
        total.hit1 = (total.hit1[0] + s.hit1[0] * s.questions, total.hit1[1] + s.hit1[1] * s.questions)
        total.matched = (total.matched[0] + s.matched[0], total.matched[1] + s.matched[1])
        total.said += s.said
        total.same += s.same
    q = max(total.questions, 1)
    print(f"{'all':10} {total.questions:>9}  {total.ndcg[0] / q:>10.3f} → {total.ndcg[1] / q:.3f}  "
          f"{total.hit1[0] / q:>8.3f} → {total.hit1[1] / q:.3f}  {total.matched[0] / q:>9.3f} → {total.matched[1] / q:.3f}  "
          f"{total.said / q:>5.2f}  {total.same / q:>8.2f}")  # fmt: skip
    if args.examples:
        Path(args.examples).write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in examples), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
