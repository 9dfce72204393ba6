"""The judged sets in ``benchmarks/golden`` keep their format and their promises: every line is
well formed, the splits alternate within each kind, every judged path is a page of the set's
vault, and every prompt of ``unrelated.jsonl`` that is one word or a name is absent from each vault
it claims to be unrelated to. The checks against the real corpora skip where ``../shared/data``
is missing (CI has it)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from benchmarks.golden import GOLDEN_DIR, find_sets, vault_of

from conftest import SHARED_DATA
from vaultseek.errors import ConfigError
from vaultseek.evaluation.judged_sets import load_golden

SETS = find_sets(GOLDEN_DIR)
PSDOCS_KINDS = {"keyword": 25, "question": 30, "paraphrase": 30, "identifier": 20, "title": 15}
PSREF_KINDS = {"keyword": 16, "question": 20, "paraphrase": 20, "identifier": 14, "title": 10}
UNRELATED_KINDS = {"coding": 90, "general": 60, "single": 40, "nonsense": 80, "chat": 40}
UNRELATED_VAULTS = ("tldr", "psdocs", "scifact")


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def splits_alternate(lines: list[dict]) -> bool:
    """Within each kind, in file order: tune, test, tune, test, …"""
    seen: Counter[str] = Counter()
    for line in lines:
        if line["split"] != ("tune" if seen[line["kind"]] % 2 == 0 else "test"):
            return False
        seen[line["kind"]] += 1
    return True


def needs_data(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is not available")


def test_the_psdocs_sets_are_there_beside_the_tldr_ones() -> None:
    assert {"tldr-en", "tldr-de", "psdocs-en", "psdocs-de", "psdocs-zh", "psdocs-ja"} <= set(SETS)
    assert {"psref-en", "psref-de", "psref-zh", "psref-ja"} <= set(SETS)
    assert "unrelated" not in SETS  # not a judged set: it has no relevant pages


@pytest.mark.parametrize("name", sorted(SETS))
def test_a_judged_set_is_well_formed(name: str) -> None:
    lines = read_lines(SETS[name])
    assert len({line["id"] for line in lines}) == len(lines)
    assert len({line["query"] for line in lines}) == len(lines)
    assert splits_alternate(lines)
    for line in lines:
        assert set(line) == {"id", "query", "kind", "split", "relevant"}, line["id"]
        assert line["query"].strip() == line["query"] and line["query"], line["id"]
        grades = list(line["relevant"].values())
        assert set(grades) <= {1, 2} and 2 in grades, line["id"]
        assert all(not p.startswith(("/", "./")) and "\\" not in p for p in line["relevant"]), line["id"]


def test_the_psdocs_sets_have_their_kinds_and_sizes() -> None:
    english = read_lines(SETS["psdocs-en"])
    assert Counter(line["kind"] for line in english) == PSDOCS_KINDS
    for lang in ("de", "zh", "ja"):
        asked = read_lines(SETS[f"psdocs-{lang}"])
        assert len(asked) == 30 and set(Counter(line["kind"] for line in asked)) == set(PSDOCS_KINDS)
    for lang in ("zh", "ja"):  # written natively: no space between words, only around what is typed as is
        for line in read_lines(SETS[f"psdocs-{lang}"]):
            assert not re.search(r"[^\x00-\x7f] [^\x00-\x7f]", line["query"]), line["query"]


def test_the_psref_sets_have_their_kinds_sizes_and_halves() -> None:
    english = read_lines(SETS["psref-en"])
    assert Counter(line["kind"] for line in english) == PSREF_KINDS
    for lang in ("de", "zh", "ja"):
        asked = read_lines(SETS[f"psref-{lang}"])
        assert len(asked) == 20 and set(Counter(line["kind"] for line in asked)) == set(PSREF_KINDS)
    for lang in ("en", "de", "zh", "ja"):
        lines = read_lines(SETS[f"psref-{lang}"])
        assert all(line["id"].startswith(f"psref-{lang}-") for line in lines)
        for kind in PSREF_KINDS:  # tune and test as even as the kind's count allows
            splits = Counter(line["split"] for line in lines if line["kind"] == kind)
            assert splits["tune"] - splits["test"] in (0, 1), (lang, kind)
    ids = [line["id"] for lang in ("en", "de", "zh", "ja") for line in read_lines(SETS[f"psref-{lang}"])]
    assert len(set(ids)) == len(ids)
    for lang in ("zh", "ja"):  # written natively: no space between words, only around what is typed as is
        for line in read_lines(SETS[f"psref-{lang}"]):
            assert not re.search(r"[^\x00-\x7f] [^\x00-\x7f]", line["query"]), line["query"]


def test_a_psref_set_is_judged_against_the_cmdlet_reference_in_one_index() -> None:
    reference = SHARED_DATA / "powershell-docs/reference/7.5"
    needs_data(reference)
    assert vault_of(SHARED_DATA, "psref-en") == vault_of(SHARED_DATA, "psref-ja") == (reference, "psref")


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_judged_path_is_a_page_of_the_sets_vault(name: str) -> None:
    try:
        vault, _ = vault_of(SHARED_DATA, name)
    except ConfigError as exc:
        pytest.skip(exc.message)
    missing = sorted({p for line in read_lines(SETS[name]) for p in line["relevant"] if not (vault / p).is_file()})
    assert missing == []


def test_the_readers_pages_join_a_questions_judgments_without_changing_its_own() -> None:
    """en-059 names the binary-module page; a reader also found the VS Code page's section on
    DLL files being locked relevant, and the module page's build-script section not."""
    from benchmarks.judgment import with_reader_pages

    queries, _ = load_golden(SETS["psdocs-en"], "tune")
    question = next(q for q in queries if q.id == "en-059")
    assert question.judgments == {"dev-cross-plat/create-standard-library-binary-Module.md": 2.0}
    widened, added = with_reader_pages("psdocs-en", queries)
    after = next(q for q in widened if q.id == "en-059")
    assert after.judgments == {
        "dev-cross-plat/create-standard-library-binary-Module.md": 2.0,
        "dev-cross-plat/vscode/using-vscode-for-debugging-compiled-cmdlets.md": 1.0,
    }
    assert 0 < added < len(queries) * 3
    assert [q.id for q in widened] == [q.id for q in queries]
    assert all(set(q.judgments) <= set(w.judgments) for q, w in zip(queries, widened, strict=True))
    reference, _ = load_golden(SETS["psref-en"], "tune")
    assert with_reader_pages("psref-en", reference) == (reference, 0)  # no reader labelled the cmdlet reference


def test_the_unrelated_prompts_are_well_formed() -> None:
    lines = read_lines(GOLDEN_DIR / "unrelated.jsonl")
    assert Counter(line["kind"] for line in lines) == UNRELATED_KINDS
    assert len({line["id"] for line in lines}) == len(lines)
    assert len({line["query"] for line in lines}) == len(lines)
    assert splits_alternate(lines)
    for line in lines:
        assert set(line) == {"id", "query", "kind", "lang", "split", "unrelated_to"}, line["id"]
        assert line["unrelated_to"] and set(line["unrelated_to"]) <= set(UNRELATED_VAULTS), line["id"]
    languages = {kind: {line["lang"] for line in lines if line["kind"] == kind} for kind in UNRELATED_KINDS}
    assert {"en", "de", "zh", "ja", "es", "ko"} <= languages["general"] & languages["coding"]


def vault_text(vault: str) -> str:
    """Every page of a vault as one casefolded text, pages apart (the tldr pages in all their
    languages; SciFact's titles and abstracts)."""
    if vault == "scifact":
        corpus = SHARED_DATA / "ir" / "scifact" / "corpus.jsonl"
        needs_data(corpus)
        pages = [f"{d.get('title') or ''}\n{d.get('text') or ''}" for d in read_lines(corpus)]
    else:
        root = SHARED_DATA / "tldr" if vault == "tldr" else SHARED_DATA / "powershell-docs/reference/docs-conceptual"
        needs_data(root)
        pages = [p.read_text("utf-8", errors="replace") for p in root.rglob("*.md")]
    return "\n\n".join(pages).casefold()


def contains(text: str, word: str) -> bool:
    """Whether the casefolded ``text`` holds the word on its own (not inside a longer word) when
    it's ASCII, anywhere otherwise (CJK words are not delimited)."""
    word = word.casefold()
    if word not in text:
        return False
    return not word.isascii() or re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", text) is not None


@pytest.mark.parametrize("vault", UNRELATED_VAULTS)
def test_a_single_word_prompt_is_absent_from_every_vault_it_is_unrelated_to(vault: str) -> None:
    singles = [line for line in read_lines(GOLDEN_DIR / "unrelated.jsonl") if line["kind"] == "single"]
    text = vault_text(vault)
    claimed = [line["query"] for line in singles if vault in line["unrelated_to"]]
    assert claimed, f"no single-word prompt claims to be unrelated to {vault}"
    present = [word for word in claimed if contains(text, word)]
    assert present == []
    if vault == "tldr":  # the words the tldr pages do use are left out of its claim, not dropped
        assert "Kubernetes" in {line["query"] for line in singles} and "Kubernetes" not in claimed
