"""Build a realistic, reproducible Obsidian-like vault from the real corpora in ``shared/data``.

Why this exists: indexing speed and search latency only mean something when they are measured on
a vault shaped like a real one (nested folders, frontmatter, inline ``#tags``, ``[[wikilinks]]``,
long reference notes beside tiny ones) at the seed design's scale of 16,894 notes and ~50,000
chunks, and anyone must be able to get the same vault again: a given seed and data folder always
give a byte-identical vault.

The text is real (tldr-pages in 42 languages, the PowerShell reference); only the arrangement is
generated. The data is read at run time and never copied into the repository.

Mix of notes (shares of ``files``; the rest are single tldr pages under ``cli/``):

    reference/powershell/<version>/...   6%    long reference pages, ~18 chunks each
    areas/<area>/[<lang>/]<topic> ...    8%    "cheatsheets": several tldr pages as ``##`` sections
    journal/<year>/<date>.md             4%    daily notes: Log / Tasks / Notes
    projects/<project>/...               2.5%  hubs, meetings, runbooks, decisions, research
    inbox/                               3%    short fleeting notes
    Home.md, areas/<area>/<Area> MOC.md        maps of content (a handful)
    templates/                                 three templates

The chunk total is steered to ``target_chunks`` by the number of sections in the cheatsheets: every
other note is rendered first, the cheatsheets get what is left, and a few correction passes add or
remove single sections until the estimate (see `estimate_chunks`) meets the target.

This module is the public face and ties the parts together: `benchmarks.sourcedata` reads the
corpora, `benchmarks.vaultplan` decides which note goes where and sizes the cheatsheets,
`benchmarks.notes` renders each note's text and `benchmarks.chunkcount` estimates chunks.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.chunkcount import estimate_chunks
from benchmarks.notes import Renderer
from benchmarks.vaultplan import apportion, nudge, plan_vault, widen_pools
from vaultseek.errors import VaultseekError

__all__ = [
    "DATA_ENV_VAR",
    "SEED_CHUNKS",
    "SEED_FILES",
    "SharedDataNotFoundError",
    "VaultSpec",
    "VaultStats",
    "build_vault",
    "edit_one_file",
    "estimate_chunks",
    "find_shared_data",
    "get_shared_data",
    "main",
    "render_vault",
]

SEED_FILES = 16_894
"""Markdown files in the seed design's reference vault."""
SEED_CHUNKS = 50_000
"""Chunks the seed design's chunker makes of that vault."""

DATA_ENV_VAR = "VAULTSEEK_SHARED_DATA"


class SharedDataNotFoundError(VaultseekError, FileNotFoundError):
    """The real corpora the benchmark vault is made from are not where we looked."""


@dataclass(frozen=True)
class VaultSpec:
    """What vault to build: how many notes, how many chunks to aim at, which random arrangement."""

    files: int = SEED_FILES
    target_chunks: int = SEED_CHUNKS
    seed: int = 7

    @classmethod
    def scaled(cls, files: int, *, seed: int = 7) -> VaultSpec:
        """A smaller (or larger) vault with the seed design's chunks-per-file ratio."""
        return cls(files=files, target_chunks=round(files * SEED_CHUNKS / SEED_FILES), seed=seed)


@dataclass(frozen=True)
class VaultStats:
    """What `build_vault` wrote, for the benchmark report."""

    files: int
    bytes: int
    estimated_chunks: int
    seconds: float


# --------------------------------------------------------------------------------------------
# Where the source data is


def find_shared_data(data_dir: Path | None = None) -> Path | None:
    """The shared data folder holding ``tldr/`` and ``powershell-docs/``, or None when absent.

    Looks at ``data_dir``, else ``$VAULTSEEK_SHARED_DATA``, else ``<repo>/../shared/data`` (where
    the workplace and CI lay it beside the repository), else ``../shared/data`` from the working
    folder (for an installed, non-editable vaultseek run from the repository root).
    """
    data_dir = Path(data_dir) if data_dir is not None else _default_data_dir()
    if (data_dir / "tldr").is_dir() and (data_dir / "powershell-docs" / "reference").is_dir():
        return data_dir
    return None


def get_shared_data(data_dir: Path | None = None) -> Path:
    """Like `find_shared_data`, but raises `SharedDataNotFoundError` naming the folder looked at."""
    found = find_shared_data(data_dir)
    if found is not None:
        return found
    looked_at = Path(data_dir) if data_dir is not None else _default_data_dir()
    raise SharedDataNotFoundError(
        f"benchmark data folder not found: {looked_at.resolve()} "
        "(needs tldr/ and powershell-docs/reference/)",
        hint=f"lay shared/data beside the repository or set {DATA_ENV_VAR}",
    )


def _default_data_dir() -> Path:
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env)
    # parents: bench, vaultseek, src, the repository root (in a source checkout).
    beside_repo = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    if beside_repo.is_dir():
        return beside_repo
    # Installed into a virtualenv (CI installs non-editable) the module is far from the checkout;
    # the tests and benchmarks run from the repository root, so look beside the working folder.
    beside_cwd = Path.cwd() / ".." / "shared" / "data"
    return beside_cwd if beside_cwd.is_dir() else beside_repo


# --------------------------------------------------------------------------------------------
# Public entry points


def render_vault(spec: VaultSpec = VaultSpec(), *, data_dir: Path | None = None) -> dict[str, str]:
    """The vault's notes as {relative path: text}, tuned to ``spec.target_chunks``, without writing.

    Raises `SharedDataNotFoundError` when the data folder is missing.
    """
    return _render_tuned(spec, data_dir)[0]


def _render_tuned(spec: VaultSpec, data_dir: Path | None) -> tuple[dict[str, str], int]:
    """The notes, and their estimated chunk total."""
    data = get_shared_data(data_dir)
    plan = plan_vault(spec.files, spec.seed, data)
    renderer = Renderer(plan, spec.seed)
    notes = renderer.render_fixed()
    fixed_chunks = sum(estimate_chunks(t) for t in notes.values())
    cheats = plan.cheats
    rng = random.Random(f"{spec.seed}:tune")
    # Each cheatsheet's intro is a chunk and each section about one more.
    wanted = spec.target_chunks - fixed_chunks - len(cheats)
    if wanted > sum(len(c.pool) for c in cheats):
        widen_pools(cheats, plan.spare, wanted - sum(len(c.pool) for c in cheats))
    capacities = [len(c.pool) for c in cheats]
    sizes = apportion(max(wanted, len(cheats)), capacities, rng)
    for cheat, size in zip(cheats, sizes, strict=True):
        cheat.size = size
    estimates: dict[str, int] = {}
    for cheat in cheats:
        notes[cheat.rel] = renderer.cheatsheet(cheat)
        estimates[cheat.rel] = estimate_chunks(notes[cheat.rel])
    for _ in range(8):  # sections are not all exactly one chunk: correct the remainder
        delta = spec.target_chunks - fixed_chunks - sum(estimates.values())
        sizes = [c.size for c in cheats]
        changed = nudge(sizes, capacities, delta, rng)
        if not delta or not changed:
            break
        for i in sorted(changed):
            cheats[i].size = sizes[i]
            notes[cheats[i].rel] = renderer.cheatsheet(cheats[i])
            estimates[cheats[i].rel] = estimate_chunks(notes[cheats[i].rel])
    return dict(sorted(notes.items())), fixed_chunks + sum(estimates.values())


def build_vault(
    dest: Path, spec: VaultSpec = VaultSpec(), *, data_dir: Path | None = None
) -> VaultStats:
    """Write the vault for ``spec`` into ``dest`` (which must not exist or be empty).

    Raises `SharedDataNotFoundError` when the data folder is missing, `FileExistsError` when
    ``dest`` already holds files (a half-overwritten vault would not be the seed's vault).
    """
    start = time.perf_counter()
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(f"vault destination is not an empty folder: {dest}")
    notes, chunks = _render_tuned(spec, data_dir)
    total_bytes = 0
    made: set[Path] = set()
    for rel, text in notes.items():
        path = dest / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        data = text.encode("utf-8")
        path.write_bytes(data)
        total_bytes += len(data)
    return VaultStats(len(notes), total_bytes, chunks, time.perf_counter() - start)


_EDIT_TEMPLATES = (
    (
        "Update {date}: revisited {title} while cleaning up these notes. The first example still "
        "works, but double-check the flags on macOS before trusting it, and keep the output in the "
        "backup folder."
    ),
    (
        "Follow-up {date}: ran into {title} again during the migration. Writing this down so I stop "
        "searching for it: test on a copy first, then run it for real and compare the results."
    ),
    (
        "{date} - a colleague asked about {title}; the short version is in the first section, the rest "
        "is background. Worth linking from the project page next time I touch it."
    ),
)


def edit_one_file(vault: Path, seed: int = 0) -> Path:
    """Append a realistic paragraph to one note, as a user edits one file between index runs.

    Which note and which words depend only on ``seed`` and the vault's contents, so the
    "one edited file re-indexed" benchmark is reproducible. Returns the edited file's path.
    """
    vault = Path(vault)
    notes = sorted(p for p in vault.rglob("*.md") if p.is_file())
    if not notes:
        raise FileNotFoundError(f"no markdown notes to edit in {vault}")
    rng = random.Random(f"edit:{seed}")
    path = rng.choice(notes)
    day = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(365))
    paragraph = rng.choice(_EDIT_TEMPLATES).format(date=day.isoformat(), title=path.stem)
    text = path.read_text("utf-8")
    path.write_text(text.rstrip("\n") + "\n\n" + paragraph + "\n", "utf-8", newline="\n")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.vaultgen DEST [--files N] [--seed S]``: build, print stats."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.vaultgen", description=main.__doc__
    )
    parser.add_argument("dest", type=Path, help="folder to create the vault in (must be empty)")
    parser.add_argument(
        "--files", type=int, default=SEED_FILES, help=f"markdown files (default {SEED_FILES})"
    )
    parser.add_argument("--seed", type=int, default=VaultSpec.seed)
    parser.add_argument(
        "--chunks",
        type=int,
        default=None,
        help="chunk target (default: the seed design's chunks per file times --files)",
    )
    parser.add_argument(
        "--data-dir", type=Path, default=None, help=f"shared data folder (or ${DATA_ENV_VAR})"
    )
    args = parser.parse_args(argv)
    spec = VaultSpec.scaled(args.files, seed=args.seed)
    if args.chunks is not None:
        spec = VaultSpec(files=args.files, target_chunks=args.chunks, seed=args.seed)
    try:
        stats = build_vault(args.dest, spec, data_dir=args.data_dir)
    except (SharedDataNotFoundError, FileExistsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"vault      {args.dest}")
    print(f"files      {stats.files:,}")
    print(f"bytes      {stats.bytes:,}")
    print(f"chunks     {stats.estimated_chunks:,} estimated (target {spec.target_chunks:,})")
    print(f"seconds    {stats.seconds:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
