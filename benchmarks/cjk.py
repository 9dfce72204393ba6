"""Known-item search in Chinese, Japanese and Korean: ``python -m benchmarks.cjk``.

For each language, every tldr page of that language (``../shared/data/tldr/pages.<lang>``) is
indexed as a vault; each page yields one query — a phrase cut from its description, e.g.
``归档实用程序`` → ``实用程序`` — whose known item is that page. Recall@10 counts the queries
whose page is among the first ten distinct files. Phrases that occur in the descriptions of
more than ten pages (alias pages share one template) are left out: no ranking could put a
particular one of them first.

The baseline, measured in the same run, is the same index built without the CJK rewriting of
:func:`vaultseek.text.lexical.index_text` (what FTS5's default tokenizer does on its own).
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchmarks.vaultgen import get_shared_data
from vaultseek.engine import open_index
from vaultseek.records import SearchMode
from vaultseek.text import lexical

LANGUAGES = ("zh", "ja", "ko")
_MARKUP = re.compile(r"[`*_<>\[\]]|https?://\S+")


@dataclass(frozen=True, slots=True)
class KnownItem:
    query: str
    path: str


def description(text: str) -> str:
    """The first description line of a tldr page, without markup."""
    for line in text.splitlines():
        if line.startswith("> ") and "://" not in line:
            return _MARKUP.sub("", line[2:]).strip().rstrip("。.")
    return ""


def known_items(pages: dict[str, str], *, seed: int = 0) -> list[KnownItem]:
    """One phrase per page: 4–8 characters (2–3 words in Korean) cut from its description."""
    rng = random.Random(seed)
    descriptions = {path: description(text) for path, text in pages.items()}
    items = []
    for path, desc in sorted(descriptions.items()):
        if len(desc) < 4:
            continue
        words = desc.split()
        if len(words) >= 3:  # spaced script (Korean)
            n = min(len(words), rng.randint(2, 3))
            start = rng.randint(0, len(words) - n)
            phrase = " ".join(words[start : start + n])
        else:
            n = min(len(desc), rng.randint(4, 8))
            start = rng.randint(0, len(desc) - n)
            phrase = desc[start : start + n].strip()
        if len(phrase) >= 2 and sum(phrase in d for d in descriptions.values()) <= 10:
            items.append(KnownItem(phrase, path))
    return items


def load_pages(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)).replace("\\", "/"): p.read_text("utf-8")
        for p in sorted(root.rglob("*.md"))
    }


@contextmanager
def plain_fts5() -> Iterator[None]:
    """Index and query without the CJK rewriting: the baseline."""
    original = lexical.index_text
    lexical.index_text = lambda text: text
    import vaultseek.index.sync as sync_module

    sync_module.index_text = lexical.index_text
    try:
        yield
    finally:
        lexical.index_text = original
        sync_module.index_text = original


def recall_at_10(root: Path, items: list[KnownItem], work: Path, mode: SearchMode) -> float:
    with open_index(root, db=work / "index.db", create=True) as index:
        index.sync()
        found = 0
        for item in items:
            paths = list(dict.fromkeys(r.path for r in index.search(item.query, mode=mode, view="chunks", k=30).results))
            found += item.path in paths[:10]
    return found / len(items) if items else 0.0


def measure(language: str, *, data: Path | None = None, limit: int | None = None) -> dict[str, float]:
    root = get_shared_data(data) / "tldr" / f"pages.{language}"
    pages = load_pages(root)
    if limit:
        pages = dict(list(pages.items())[:limit])
    items = known_items(pages)
    out: dict[str, float] = {"pages": len(pages), "queries": len(items)}
    with tempfile.TemporaryDirectory() as scratch:
        vault = Path(scratch) / "vault"
        for rel, text in pages.items():
            (vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (vault / rel).write_text(text, "utf-8")
        modes: tuple[SearchMode, ...] = ("bm25", "hybrid")
        for mode in modes:
            run = Path(scratch) / mode
            run.mkdir()
            out[mode] = recall_at_10(vault, items, run, mode)
            base = Path(scratch) / f"{mode}-plain"
            base.mkdir()
            with plain_fts5():
                out[f"{mode}_plain_fts5"] = recall_at_10(vault, items, base, mode)
            shutil.rmtree(run)
            shutil.rmtree(base)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cjk", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="the shared data folder")
    parser.add_argument("--limit", type=int, default=None, help="pages per language (default all)")
    args = parser.parse_args()
    print("| language | pages | queries | BM25 R@10 | hybrid R@10 | plain FTS5: BM25 R@10 | plain FTS5: hybrid R@10 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for language in LANGUAGES:
        r = measure(language, data=args.data, limit=args.limit)
        print(
            f"| {language} | {r['pages']:,.0f} | {r['queries']:,.0f} | {r['bm25']:.3f} | {r['hybrid']:.3f} "
            f"| {r['bm25_plain_fts5']:.3f} | {r['hybrid_plain_fts5']:.3f} |"
        )


if __name__ == "__main__":
    main()
