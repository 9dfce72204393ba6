"""Related notes with and without the deep tier, on a proxy judged set over the tldr pages.

tldr pages have no links, so ``vaultseek related`` ranks them by meaning alone, and a proxy
judgement is at hand: a page's related notes are the other pages of its tool's family
(``git-commit`` → ``git``, ``git-push``, ``git-rebase`` …; families of three pages or more).
Families alternate between the ``tune`` and ``test`` splits in name order, so the deep list's
weight (``links.related.WEIGHTS``) is chosen on one half and checked once on the other.

    python -m benchmarks.related --data ../shared/data --workdir DIR --split tune [--sets de,ja]

Each set's index is the one ``python -m benchmarks.golden --workdir DIR`` keeps
(``<workdir>/<lang>.db``; made here if missing); its deep vectors come from ``vaultseek deep
--db <workdir>/<lang>.db --vault <pages>``. The table gives Recall@10 of ``related`` with the
static vectors only and with the deep list too, for the sets whose index has deep vectors.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from benchmarks.golden import vault_of
from vaultseek import Index, open_index
from vaultseek.cli.terminal import ProgressBar
from vaultseek.errors import VaultseekError

MIN_FAMILY = 3


def families(paths: list[str], split: str) -> dict[str, list[str]]:
    """Tool name → its pages, for the families of ``split`` (alternating in name order)."""
    by_tool: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        by_tool[PurePosixPath(path).stem.split("-")[0]].append(path)
    names = sorted(name for name, pages in by_tool.items() if len(pages) >= MIN_FAMILY)
    chosen = names[0::2] if split == "tune" else names[1::2]
    return {name: sorted(by_tool[name]) for name in chosen}


def recall_at_10(index: Index, groups: dict[str, list[str]]) -> tuple[float, int]:
    """Mean Recall@10 of ``related`` over every page of every family, and how many pages."""
    scores = []
    for pages in groups.values():
        for page in pages:
            relevant = set(pages) - {page}
            found = {r.path for r in index.related(page, k=10).results}
            scores.append(len(relevant & found) / min(len(relevant), 10))
    return sum(scores) / max(len(scores), 1), len(scores)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.related", description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", help="the folder holding tldr/ (default: %(default)s)")
    parser.add_argument("--split", default="tune", choices=("tune", "test"), help="which half of the families")
    parser.add_argument("--sets", metavar="LIST", default="de,zh,ja,es", help="languages (default: %(default)s)")
    parser.add_argument("--workdir", metavar="DIR", required=True, help="where the <lang>.db indexes are kept")
    args = parser.parse_args(argv)
    rows = [("set", "families", "pages", "deep coverage", "R@10 static", "R@10 with deep")]
    bar = ProgressBar()
    try:
        for lang in [name.strip() for name in args.sets.split(",") if name.strip()]:
            vault, name = vault_of(Path(args.data), f"tldr-{lang}")
            with open_index(vault, db=Path(args.workdir) / f"{name}.db", create=True) as index:
                index.sync(progress=bar, remember=False)
                bar.clear()
                groups = families([f["path"] for f in index.files()], args.split)
                deep = index.deep_status()
                coverage = deep.embedded / max(deep.chunks, 1) if deep is not None else 0.0
                with_deep, pages = recall_at_10(index, groups)
                index.config = dataclasses.replace(index.config, deep_tier=False)
                static, _ = recall_at_10(index, groups)
            rows.append((lang, str(len(groups)), str(pages), f"{coverage:.0%}", f"{static:.3f}", f"{with_deep:.3f}"))
    except VaultseekError as exc:
        sys.stderr.write(f"error: {exc.message}\n" + (f"hint: {exc.hint}\n" if exc.hint else ""))
        return exc.exit_code
    print_table(rows)
    return 0


def print_table(rows: Sequence[Sequence[str]]) -> None:
    """``rows`` (the first a header) as right-aligned columns on stdout."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        sys.stdout.write("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)) + "\n")


if __name__ == "__main__":
    sys.exit(main())
