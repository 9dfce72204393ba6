"""Search scopes (``SearchFilter``): applied before ranking, in both lists, request-local."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from vaultseek import open_index
from vaultseek.records import SearchFilter
from vaultseek.vectors import VectorIndex


@pytest.fixture
def scoped_vault(vault: Path, write: Callable[..., Path]) -> Path:
    # The same topic in many places, so an unscoped top-k is dominated by one folder.
    for i in range(12):
        write(f"work/projects/tokens{i}.md", f"---\ntags: [security/oauth]\n---\n# Tokens {i}\n\nRotate refresh tokens every day, token rotation plan {i}.\n")
    filler = " ".join(f"garden{i} tomato{i} watering{i}" for i in range(60))
    write("home/tokens.md", f"---\ntags: [home]\n---\n# Home\n\n{filler} rotate the refresh tokens. {filler}\n")
    write("work_other/tokens.md", "# Other\n\nRotate refresh tokens in the other folder, token rotation.\n")
    write("notes/plain.txt", "Rotate refresh tokens: a plain text document about token rotation.\n")
    return vault


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_scope_applies_before_ranking(scoped_vault: Path, mode: str) -> None:
    with open_index(scoped_vault, create=True) as index:
        index.sync()
        unscoped = index.search("rotate refresh tokens", mode=mode, k=3)
        assert "home/tokens.md" not in {r.path for r in unscoped.results}
        home = index.search("rotate refresh tokens", mode=mode, k=3, scope=SearchFilter(folders=("home",)))
        assert [r.path for r in home.results] == ["home/tokens.md"]
        # "work" is a folder, not a prefix: work_other/ stays out.
        work = index.search("rotate refresh tokens", mode=mode, k=20, scope=SearchFilter(folders=("work",)))
        assert len(work.results) == 12 and all(r.path.startswith("work/") for r in work.results)


def test_scope_fields_paths_tags_kinds_and_empty(scoped_vault: Path) -> None:
    with open_index(scoped_vault, create=True) as index:
        index.sync()

        def paths(scope: SearchFilter) -> set[str]:
            return {r.path for r in index.search("token rotation", k=50, scope=scope).results}

        assert paths(SearchFilter(paths=("home/tokens.md", "notes/plain.txt"))) == {"home/tokens.md", "notes/plain.txt"}
        assert len(paths(SearchFilter(tags=("security",)))) == 12  # nested tag security/oauth
        assert len(paths(SearchFilter(tags=("#Security/OAuth",)))) == 0  # raw "#" is the caller's to strip
        assert len(paths(SearchFilter.from_dict({"tags": ["#Security/OAuth"]}))) == 12
        assert paths(SearchFilter(tags=("secur",))) == set()  # a prefix of a word is not a parent tag
        assert paths(SearchFilter(kinds=("txt",))) == {"notes/plain.txt"}
        assert paths(SearchFilter(kinds=("txt",), folders=("home",))) == set()  # fields AND
        assert paths(SearchFilter(paths=())) == set()  # an empty category matches nothing
        assert len(paths(SearchFilter(folders=("",)))) == 15  # the vault root is everything
        assert len(paths(SearchFilter())) == 15


def test_scope_with_sql_wildcards_in_names(vault: Path, write: Callable[..., Path]) -> None:
    write("a_b/x.md", "# X\n\nwildcard underscore folder text here.\n")
    write("axb/y.md", "# Y\n\nwildcard underscore folder text here.\n")
    with open_index(vault, create=True) as index:
        index.sync()
        hits = index.search("wildcard underscore", k=10, scope=SearchFilter(folders=("a_b",)))
        assert [r.path for r in hits.results] == ["a_b/x.md"]


def test_filter_from_dict_validates() -> None:
    assert SearchFilter.from_dict(None).unrestricted
    assert SearchFilter.from_dict({"folders": "/work/"}).folders == ("work",)
    assert SearchFilter.from_dict({"kinds": ["pdf"]}).to_dict() == {"kinds": ["pdf"]}
    with pytest.raises(ValueError, match="unknown"):
        SearchFilter.from_dict({"color": ["red"]})
    with pytest.raises(ValueError, match="list of strings"):
        SearchFilter.from_dict({"tags": [1]})


def test_vector_mask_keeps_k_full_and_ordered() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(50, 8)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    index = VectorIndex(np.arange(1, 51), matrix)
    allowed = np.arange(2, 51, 2)
    hits = index.search(matrix[0], 10, allowed=allowed)
    assert len(hits) == 10 and all(i % 2 == 0 for i, _s in hits)
    full = [h for h in index.search(matrix[0], 50) if h[0] % 2 == 0][:10]
    assert hits == full
    assert index.search(matrix[0], 5, allowed=np.array([], dtype=np.int64)) == []


def test_files_and_forget(scoped_vault: Path) -> None:
    with open_index(scoped_vault, create=True) as index:
        index.sync()
        rows = {r["path"]: r for r in index.files()}
        assert rows["notes/plain.txt"]["kind"] == "txt" and rows["notes/plain.txt"]["chunks"] == 1
        assert rows["home/tokens.md"]["tags"] == ["home"]
        index.forget("home/tokens.md")
        assert "home/tokens.md" not in {r["path"] for r in index.files()}
        assert index.store.integrity_problems() == []
