"""Credential-scrubbing speed: ordinary notes, and adversarial lines of growing size.

    python -m benchmarks.scrub [--data DIR] [--sizes 100 200 400] [--repeat 3]

Every note passes through :func:`vaultseek.index.credentials.scrub` before it is stored, and a
regex that backtracks can make one note take minutes while holding the GIL. This prints:

* the throughput on ordinary text: every tldr page (``../shared/data/tldr/pages``) scrubbed one
  by one, as indexing does — the baseline, measured in the same run;
* for each adversarial family, one line built to the sizes given (KB): seconds, MB/s, seconds
  per MB against the baseline's, and against the same family's smallest size. Scrubbing is
  linear when that last column stays near 1.00 as the size grows (a quadratic scan doubles it
  with each doubling).

Times are process CPU seconds, the best of ``--repeat`` runs, so other work on the machine
barely moves them.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from benchmarks.vaultgen import get_shared_data
from vaultseek.index.credentials import scrub

DASHES = "-" * 5


def _curl_commands(size: int) -> str:
    """Ordinary curl commands joined on one line, as a pasted shell history can be."""
    rng = random.Random(0)
    parts: list[str] = []
    length = 0
    while length < size:
        part = (f"curl -sS -X POST -H 'Content-Type: application/json' -d '{{\"n\": {rng.randint(0, 999)}}}' "
                f"https://api.example.com/v1/items/{rng.randint(0, 9999)}")
        parts.append(part)
        length += len(part) + 1
    return " ".join(parts)[:size]


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda size: (unit * (size // len(unit) + 1))[:size]


FAMILIES: dict[str, Callable[[int], str]] = {
    "`curl curl curl …` on one line": _repeat("curl "),
    "curl commands joined on one line": _curl_commands,
    "`password=password=…` (values past the cap)": _repeat("password="),
    "`HRKU-HRKU-…` (a token past its cap)": _repeat("HRKU-"),
    "`-u a:b ` after one `curl`": lambda size: "curl " + _repeat("-u a:b ")(size - 5),
    "key END lines without a BEGIN": _repeat(f"{DASHES}END PRIVATE KEY{DASHES}\nAbCd\n"),
}


def cpu_seconds(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def ordinary(root: Path, repeat: int) -> tuple[int, int, float]:
    """(pages, bytes, CPU seconds) for scrubbing every page under ``root`` one by one."""
    texts = [p.read_text("utf-8", errors="replace") for p in sorted(root.rglob("*.md"))]
    size = sum(len(t.encode("utf-8")) for t in texts)

    def run() -> None:
        for text in texts:
            scrub(text)
    return len(texts), size, cpu_seconds(run, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scrub", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="the shared data folder")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400], help="adversarial sizes, KB")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best is kept")
    args = parser.parse_args()

    pages, size, seconds = ordinary(get_shared_data(args.data) / "tldr" / "pages", args.repeat)
    base = seconds / (size / 1e6)  # seconds per MB of ordinary text
    print(f"ordinary text: {pages:,} tldr pages, {size / 1e6:.2f} MB in {seconds:.2f} s "
          f"= {1 / base:.1f} MB/s (CPU, best of {args.repeat})\n")
    print("| input | size | seconds | MB/s | s/MB vs ordinary text | s/MB vs smallest size |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, build in FAMILIES.items():
        first: float | None = None
        for kb in sorted(args.sizes):
            text = build(kb * 1000)
            seconds = cpu_seconds(partial(scrub, text), args.repeat)
            per_mb = seconds / (len(text.encode("utf-8")) / 1e6)
            first = first or per_mb
            print(f"| {name} | {kb} KB | {seconds:.3f} | {1 / per_mb:.1f} | {per_mb / base:.2f}x "
                  f"| {per_mb / first:.2f} |")


if __name__ == "__main__":
    main()
