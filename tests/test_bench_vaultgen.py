"""The benchmark vault generator and the KNN baselines.

The benchmark's numbers are only comparable across runs if the vault is exactly the same every
time and has the shape it claims (frontmatter, links, the file count), and if the sqlite-vec
baseline finds the same neighbours as the numpy search it is compared with.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from benchmarks.baselines import (
    mean_overlap,
    numpy_knn_latency,
    percentile,
    random_unit_vectors,
    sqlite_vec_knn_latency,
)
from benchmarks.vaultgen import (
    SharedDataNotFoundError,
    VaultSpec,
    build_vault,
    edit_one_file,
    estimate_chunks,
    find_shared_data,
)

SMALL = VaultSpec.scaled(300)
NO_DATA = (
    "shared/data (tldr/, powershell-docs/) not found beside the repo; set VAULTSEEK_SHARED_DATA"
)
needs_data = pytest.mark.skipif(find_shared_data() is None, reason=NO_DATA)


def _digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def small_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if find_shared_data() is None:
        pytest.skip(NO_DATA)
    dest = tmp_path_factory.mktemp("vault") / "v"
    build_vault(dest, SMALL)
    return dest


@needs_data
def test_file_count_is_exact_and_chunks_near_target(small_vault: Path) -> None:
    notes = list(small_vault.rglob("*.md"))
    assert len(notes) == SMALL.files
    assert not [p for p in small_vault.rglob("*") if p.is_file() and p.suffix != ".md"]
    chunks = sum(estimate_chunks(p.read_text("utf-8")) for p in notes)
    assert abs(chunks - SMALL.target_chunks) <= 0.05 * SMALL.target_chunks


@needs_data
def test_same_spec_gives_byte_identical_vault(small_vault: Path, tmp_path: Path) -> None:
    stats = build_vault(tmp_path / "again", SMALL)
    assert stats.files == SMALL.files
    assert _digests(tmp_path / "again") == _digests(small_vault)


@needs_data
def test_another_seed_gives_another_vault(small_vault: Path, tmp_path: Path) -> None:
    build_vault(
        tmp_path / "other", VaultSpec(files=SMALL.files, target_chunks=SMALL.target_chunks, seed=8)
    )
    assert _digests(tmp_path / "other") != _digests(small_vault)


@needs_data
def test_vault_looks_like_an_obsidian_vault(small_vault: Path) -> None:
    texts = {
        p.relative_to(small_vault).as_posix(): p.read_text("utf-8")
        for p in small_vault.rglob("*.md")
    }
    with_frontmatter = [t for t in texts.values() if t.startswith("---\n")]
    assert 0.1 * len(texts) < len(with_frontmatter) < len(texts)
    assert any("\ntags:" in t for t in with_frontmatter)
    assert sum("[[" in t for t in texts.values()) >= 20
    assert any("\n## " in t and "\n## " in t[t.index("\n## ") + 4 :] for t in texts.values())
    tops = {rel.split("/", 1)[0] for rel in texts}
    assert {"cli", "areas", "reference", "journal", "projects", "inbox"} <= tops
    assert any(rel.startswith("reference/powershell/") for rel in texts)


@needs_data
def test_edit_one_file_changes_exactly_one_note(small_vault: Path, tmp_path: Path) -> None:
    vault = tmp_path / "edit"
    build_vault(vault, SMALL)
    before = _digests(vault)
    edited = edit_one_file(vault, seed=3)
    after = _digests(vault)
    changed = [rel for rel in before if before[rel] != after[rel]]
    assert changed == [edited.relative_to(vault).as_posix()]
    assert set(after) == set(before)
    assert edited.read_text("utf-8").startswith(_text_of(small_vault, changed[0]).rstrip("\n"))


def _text_of(root: Path, rel: str) -> str:
    return (root / rel).read_text("utf-8")


def test_missing_data_folder_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "no-data"
    with pytest.raises(FileNotFoundError, match="no-data") as info:
        build_vault(tmp_path / "v", VaultSpec(files=10), data_dir=missing)
    assert isinstance(info.value, SharedDataNotFoundError)
    assert not (tmp_path / "v").exists()


def test_chunk_estimate_follows_the_rules() -> None:
    long_section = "\n\n".join(f"Paragraph {i} " + "word " * 80 for i in range(10))  # ~4,100 chars
    text = (
        "---\ntags: [a]\n---\n# Title\n\nAn intro paragraph long enough to count.\n\n"
        "## Short\n\ntiny\n\n"
        "## Related\n\n- [[Somewhere else entirely, a long link list]]\n\n"
        f"## Long\n\n{long_section}\n\n"
        "## Code\n\n```sh\n## not a heading inside a fence\necho hello world from the shell\n```\n"
    )
    # intro 1, "tiny" dropped, Related skipped, Long packed into 3 pieces of <= 2,000, Code 1.
    assert estimate_chunks(text) == 1 + 3 + 1


def test_percentile_interpolates_linearly() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert percentile(values, 50) == pytest.approx(float(np.percentile(values, 50)))
    assert percentile(values, 99) == pytest.approx(float(np.percentile(values, 99)))
    assert percentile([7.0], 99) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_sqlite_vec_and_numpy_agree_on_neighbours() -> None:
    pytest.importorskip(
        "sqlite_vec", reason="sqlite-vec not installed (pip install 'vaultseek[bench]')"
    )
    matrix = random_unit_vectors(2_000, 64, seed=1)
    queries = random_unit_vectors(25, 64, seed=2)
    vec = sqlite_vec_knn_latency(matrix, queries, k=10)
    ref = numpy_knn_latency(matrix, queries, k=10)
    assert vec.ids.shape == ref.ids.shape == (25, 10)
    assert mean_overlap(vec.ids, ref.ids) == 1.0
    assert (vec.ids[:, 0] == ref.ids[:, 0]).all()
    assert vec.n == ref.n == 25
    assert 0 < vec.p50_ms <= vec.p99_ms and 0 < ref.p50_ms <= ref.p99_ms
    assert vec.setup_ms > 0
    # A row's own vector is its nearest neighbour in both.
    own = sqlite_vec_knn_latency(matrix, matrix[:5], k=1)
    assert own.ids[:, 0].tolist() == [0, 1, 2, 3, 4]
