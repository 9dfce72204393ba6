"""``benchmarks.coverage`` draws which sections wait for their deep vector as the worker would
leave them, and averages several draws of a level into one row."""

from __future__ import annotations

import os
from pathlib import Path

from benchmarks.coverage import mean_row, worker_order

from vaultseek.engine import open_index

NOTES = ("alpha", "beta", "gamma", "delta")


def _vault(root: Path) -> Path:
    vault = root / "vault"
    vault.mkdir()
    for name in NOTES:
        path = vault / f"{name}.md"
        sections = "\n\n".join(f"## {name} part {i}\n\nThe {name} notes say {i} things about {name}." for i in range(3))
        path.write_text(f"# {name}\n\nAn opening about {name}.\n\n{sections}\n", "utf-8")
        os.utime(path, (1_700_000_000, 1_700_000_000))  # one age: the file indexed last goes first
    return vault


def _files_in(order: list[int], files: dict[int, tuple[int, int]]) -> list[int]:
    """The files in the order their chunks first appear."""
    seen: list[int] = []
    for chunk in order:
        if files[chunk][0] not in seen:
            seen.append(files[chunk][0])
    return seen


def test_the_workers_order_takes_openings_first_and_a_seed_draws_the_files_order(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with open_index(vault, db=tmp_path / "index.db", create=True, deep_tier=False) as index:
        index.sync(remember=False)
        ids = index.store.chunk_ids_of_files([f"{name}.md" for name in NOTES]).tolist()
        files = index.store.chunk_files(ids)
        openings = {chunk for chunk, _m in index.store.first_chunks(sorted({f for f, _m in files.values()})).values()}
        assert len(openings) == len(NOTES) < len(ids)
        orders = {seed: worker_order(index, ids, seed) for seed in (None, *range(8))}
    for order in orders.values():
        assert sorted(order) == sorted(ids)
        assert set(order[: len(NOTES)]) == openings  # every note's opening before any other section
        rest = order[len(NOTES) :]
        assert _files_in(rest, files) == _files_in(order[: len(NOTES)], files)  # both passes, one file order
        for file in {f for f, _m in files.values()}:
            mine = [chunk for chunk in rest if files[chunk][0] == file]
            assert mine == sorted(mine)  # a file's sections in order
    assert _files_in(orders[None], files) == sorted({f for f, _m in files.values()}, reverse=True)  # indexed last first
    assert len({tuple(_files_in(order, files)) for order in orders.values()}) > 2  # seeds draw other orders


def test_a_levels_draws_average_into_one_row() -> None:
    draws = [
        ["tldr-en", "50 %", "0.400", "0.300", "—", "nan", "1.000"],
        ["tldr-en", "50 %", "0.380", "0.320", "—", "nan", "0.900"],
        ["tldr-en", "50 %", "0.390", "0.280", "—", "nan", "0.950"],
    ]
    assert mean_row(draws) == ["tldr-en", "50 %", "0.390", "0.300", "—", "nan", "0.950"]
    assert mean_row(draws[:1]) == draws[0]
