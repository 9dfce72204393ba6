"""Measure credential scrubbing on a folder of ordinary markdown: speed, and what it redacts.

Documentation sets hold no real secrets, so every redaction here is a candidate false positive for
a human to judge. Usage::

    python scripts/measure_false_positives.py [FOLDER] [--samples N]

FOLDER defaults to ``../shared/data/powershell-docs/reference`` relative to the repository root.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

from vaultseek.index.credentials import scrub

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FOLDER = REPO_ROOT.parent / "shared" / "data" / "powershell-docs" / "reference"
MARKER = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")


def _contexts(scrubbed: str, path: Path, width: int = 60) -> list[str]:
    """One line per redaction: ~``width`` chars of scrubbed context, with the match as [REDACTED]."""
    out = []
    for m in MARKER.finditer(scrubbed):
        before = scrubbed[max(0, m.start() - width // 2):m.start()]
        after = scrubbed[m.end():m.end() + width // 2]
        snippet = f"{before}[REDACTED]{after}".replace("\n", "\u23ce")
        out.append(f"{m.group(1):24} {str(path)[-44:]:44} {snippet}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--samples", type=int, default=30, help="redacted contexts to show")
    args = parser.parse_args(argv)
    paths = sorted(args.folder.rglob("*.md"))
    if not paths:
        print(f"no .md files under {args.folder}", file=sys.stderr)
        return 1
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in paths]
    total_bytes = sum(p.stat().st_size for p in paths)

    started = time.perf_counter()
    results = [scrub(t) for t in texts]
    seconds = time.perf_counter() - started

    per_pattern: Counter[str] = Counter()
    files_hit: Counter[str] = Counter()
    samples: list[str] = []
    for path, result in zip(paths, results):
        per_pattern.update(result.counts)
        files_hit.update(result.counts.keys())
        if result.counts:
            samples.extend(_contexts(result.text, path.relative_to(args.folder)))
    flagged = sum(1 for r in results if r.counts)

    summary = [
        ("folder", str(args.folder)),
        ("files scanned", f"{len(paths):,}"),
        ("bytes", f"{total_bytes:,}"),
        ("seconds", f"{seconds:.2f} ({total_bytes / 1e6 / seconds:.1f} MB/s)"),
        ("files with any redaction", f"{flagged:,} ({100 * flagged / len(paths):.2f}%)"),
        ("total redactions", f"{sum(per_pattern.values()):,}"),
    ]
    for label, value in summary:
        print(f"{label + ':':26}{value}")
    print()
    print("| metric | value |\n|---|---:|")
    for label, value in summary:
        print(f"| {label} | {value} |")
    print()
    print("| pattern | redactions | files |\n|---|---:|---:|")
    for name, count in per_pattern.most_common():
        print(f"| {name} | {count} | {files_hit[name]} |")
    print()
    step = max(1, len(samples) // args.samples) if samples and args.samples > 0 else 1
    shown = samples[::step][: max(0, args.samples)]
    print(f"sample of {len(shown)} of {len(samples)} redacted contexts:")
    for line in shown:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
