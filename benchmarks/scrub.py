"""Credential-scrubbing speed: ordinary notes, and adversarial lines of growing size.

    python -m benchmarks.scrub [--data DIR] [--sizes 100 500 1000 2000] [--repeat 3]

Every note passes through :func:`vaultseek.index.credentials.scrub` before it is stored, and a
regex that backtracks can make one note take minutes while holding the GIL. This prints:

* the throughput on ordinary text: every tldr page (``../shared/data/tldr/pages``) scrubbed one
  by one, as indexing does;
* the baseline for each size: an ordinary note of that size (tldr pages joined into one note),
  measured in the same run;
* for each adversarial family, one line built to the sizes given (KB): seconds, seconds per MB,
  that against the ordinary note of the same size, and against the same family's smallest size.
  Scrubbing is linear when that last column stays near 1.00 as the size grows (a quadratic scan
  doubles it with each doubling).

Times are process CPU seconds, the best of ``--repeat`` runs, so other work on the machine
barely moves them.
"""

from __future__ import annotations

import argparse
import base64
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


def _tokens(encode: Callable[[bytes], bytes], width: int) -> Callable[[int], str]:
    """Random tokens (base64 or hex of ``width`` random bytes) separated by spaces, on one line."""
    def build(size: int) -> str:
        rng = random.Random(size)
        parts: list[str] = []
        length = 0
        while length < size:
            parts.append(encode(rng.randbytes(width)).decode("ascii"))
            length += len(parts[-1]) + 1
        return " ".join(parts)[:size]
    return build


def _ordinary_note(texts: list[str]) -> Callable[[int], str]:
    """Ordinary markdown of a given size: tldr pages joined into one note."""
    joined = "\n\n".join(texts)

    def build(size: int) -> str:
        return (joined * (size // max(1, len(joined)) + 1))[:size]
    return build


FAMILIES: dict[str, Callable[[int], str]] = {
    "`curl curl curl …` on one line": _repeat("curl "),
    "curl commands joined on one line": _curl_commands,
    "`password=password=…` (values past the cap)": _repeat("password="),
    "`api_key=api_key=…`": _repeat("api_key="),
    "`password: x ` repeated": _repeat("password: x "),
    "`password=)))…` (closers after a key)": lambda size: "password=" + ")" * (size - 9),
    "base64 tokens (40 random bytes each)": _tokens(base64.b64encode, 30),
    "hex tokens after `key`": lambda size: "key " + _tokens(lambda b: b.hex().encode("ascii"), 32)(size - 4),
    "base64 tokens beside a certificate": lambda size: (
        f"{DASHES}BEGIN CERTIFICATE{DASHES} " + _tokens(base64.b64encode, 30)(size - 28)),
    "`mysql -p` / `docker login -p` / `redis-cli -a` repeated":
        _repeat("mysql -pX9 docker login -p Y8 redis-cli -a Z7 "),
    "`Cookie: sessionid=` / `Authorization: Token ` repeated":
        _repeat("Cookie: sessionid=a1; Authorization: Token b2 "),
    "`<password>x</password>` repeated": _repeat("<password>x</password>"),
    "table rows under a `password` column":
        lambda size: "| host | password |\n|---|---|\n" + _repeat("| router | `Xk9mPq2Lw` |\n")(size - 30),
    "`Passwort: x contraseña: y` repeated": _repeat("Passwort: x contraseña: y "),
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
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 500, 1000, 2000],
                        help="adversarial sizes, KB")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best is kept")
    args = parser.parse_args()

    root = get_shared_data(args.data) / "tldr" / "pages"
    pages, size, seconds = ordinary(root, args.repeat)
    print(f"ordinary text: {pages:,} tldr pages, {size / 1e6:.2f} MB in {seconds:.2f} s "
          f"= {size / 1e6 / seconds:.1f} MB/s (CPU, best of {args.repeat})\n")
    note = _ordinary_note([p.read_text("utf-8", errors="replace") for p in sorted(root.rglob("*.md"))])
    sizes = sorted(args.sizes)
    base: dict[int, float] = {}
    for kb in sizes:
        text = note(kb * 1000)
        base[kb] = cpu_seconds(partial(scrub, text), args.repeat) / (len(text.encode("utf-8")) / 1e6)
    print("| input | size | seconds | s/MB | vs an ordinary note of that size | s/MB vs smallest size |")
    print("|---|---:|---:|---:|---:|---:|")
    for kb in sizes:
        print(f"| an ordinary note (tldr pages joined) | {kb:,} KB | {base[kb] * kb / 1000:.3f} "
              f"| {base[kb]:.3f} | 1.00x | {base[kb] / base[sizes[0]]:.2f} |")
    for name, build in FAMILIES.items():
        first: float | None = None
        for kb in sizes:
            text = build(kb * 1000)
            seconds = cpu_seconds(partial(scrub, text), args.repeat)
            per_mb = seconds / (len(text.encode("utf-8")) / 1e6)
            first = first or per_mb
            print(f"| {name} | {kb:,} KB | {seconds:.3f} | {per_mb:.3f} | {per_mb / base[kb]:.2f}x "
                  f"| {per_mb / first:.2f} |", flush=True)

if __name__ == "__main__":
    main()
