"""Measure credential scrubbing on ordinary text: how many lines it redacts, and how fast.

Documentation sets and research abstracts hold no real secrets, so every redaction here is a
candidate false positive for a human to judge. Usage::

    python scripts/measure_false_positives.py [PATH ...] [--baseline OLD.py] [--samples N]

Each PATH is a folder of markdown (every ``*.md`` under it is one file) or a BEIR
``corpus.jsonl`` (every document is one file, its title and text). Without a PATH, the shared
corpora are measured: the tldr pages in every language, the PowerShell reference and the seven
IR collections (SciFact, CACM, CISI, Cranfield, LISA, Medline, NPL) under ``../shared/data``
(or ``$VAULTSEEK_SHARED_DATA``, as the tests read it).

A unit is a line of a markdown file or one document of a collection; it counts as redacted when
its scrubbed text holds a marker. With ``--baseline`` (another version of
``src/vaultseek/index/credentials.py``, e.g. saved from ``git show REV:<that path>``), both
scrubbers run on the same text, and the units only the current one redacts are sampled.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

from vaultseek.index.credentials import scrub

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("VAULTSEEK_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
MARKER = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
Scrub = Callable[[str], str]


def default_paths() -> list[Path]:
    ir = sorted((SHARED / "ir").glob("*/corpus.jsonl"))
    return [SHARED / "tldr", SHARED / "powershell-docs" / "reference", *ir]


def texts(path: Path) -> Iterator[tuple[str, str, bool]]:
    """``(name, text, lines are units)`` for every file (or collection document) under ``path``."""
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                doc = json.loads(line)
                yield str(doc.get("_id", "")), f"{doc.get('title', '')}\n{doc.get('text', '')}", False
        return
    for file in sorted(path.rglob("*.md")):
        yield str(file.relative_to(path)), file.read_text(encoding="utf-8", errors="replace"), True


def _redacted_units(scrubbed: str, by_line: bool) -> list[str]:
    if not by_line:
        return [scrubbed] if MARKER.search(scrubbed) else []
    return [line for line in scrubbed.splitlines() if MARKER.search(line)]


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("baseline_credentials", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


def measure(path: Path, current: Scrub, baseline: Scrub | None, samples: list[str]
            ) -> tuple[int, int, int | None, Counter[str], float, int]:
    """``(units, redacted now, redacted by the baseline, redactions, seconds, bytes)``."""
    units = now = 0
    before = 0 if baseline else None
    kinds: Counter[str] = Counter()
    seconds = 0.0
    size = 0
    for name, text, by_line in texts(path):
        units += len(text.splitlines()) if by_line else 1
        size += len(text.encode("utf-8"))
        started = time.process_time()
        scrubbed = current(text)
        seconds += time.process_time() - started
        hit = _redacted_units(scrubbed, by_line)
        now += len(hit)
        kinds.update(MARKER.findall(scrubbed))
        if baseline is not None and before is not None:
            old = _redacted_units(baseline(text), by_line)
            before += len(old)
            old_plain = {MARKER.sub("[REDACTED]", u) for u in old}
            samples.extend(f"{path.name}/{name}: {u.strip()[:160]}" for u in hit
                           if MARKER.sub("[REDACTED]", u) not in old_plain)
        elif hit:
            samples.extend(f"{path.name}/{name}: {u.strip()[:160]}" for u in hit)
    return units, now, before, kinds, seconds, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--baseline", type=Path, help="another credentials.py to compare with")
    parser.add_argument("--samples", type=int, default=40, help="redacted units to show")
    args = parser.parse_args(argv)
    paths = args.paths or default_paths()
    missing = [p for p in paths if not p.exists()]
    if missing:
        print(f"not found: {', '.join(map(str, missing))}", file=sys.stderr)
        return 1
    baseline: Scrub | None = None
    if args.baseline:
        old_scrub = _load(args.baseline).scrub
        baseline = lambda text: old_scrub(text).text  # noqa: E731 - a one-line adapter

    def current(text: str) -> str:
        return scrub(text).text

    samples: list[str] = []
    total: Counter[str] = Counter()
    head = "| corpus | units | redacted now | rate |" + (" redacted by the baseline |" if baseline else "")
    print(head + " MB/s |")
    print("|---|---:|---:|---:|" + ("---:|" if baseline else "") + "---:|")
    for path in paths:
        units, now, before, kinds, seconds, size = measure(path, current, baseline, samples)
        total.update(kinds)
        label = f"{path.parent.name}/{path.name}" if path.suffix == ".jsonl" else path.name
        old = f" {before:,} |" if before is not None else ""
        print(f"| {label} | {units:,} | {now:,} | {100 * now / max(1, units):.3f}% |{old} "
              f"{size / 1e6 / max(seconds, 1e-9):.1f} |", flush=True)
    print()
    print("| pattern | redactions |\n|---|---:|")
    for name, count in total.most_common():
        print(f"| {name} | {count:,} |")
    print()
    step = max(1, len(samples) // args.samples) if samples and args.samples > 0 else 1
    shown = samples[::step][: max(0, args.samples)]
    what = "newly redacted units (not redacted by the baseline)" if baseline else "redacted units"
    print(f"sample of {len(shown)} of {len(samples)} {what}:")
    for line in shown:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
