"""The study app under abuse: peak memory of images attached at once.

    python -m benchmarks.abuse [--size PIXELS] [--parallel N] [--json FILE]

Writes 16-bit PNGs (RGB and RGBA, ``--size`` pixels square, a gradient that compresses to
about 1 MB) and cleans ``--parallel`` copies of each at once on threads, as that many chat
attachments arriving together are cleaned (:func:`vaultseek.study.images.clean_image`), in a
fresh child process per run; it prints the child's peak resident memory (``ru_maxrss``) and
wall seconds. The baseline, measured in the same run, is the same decoding without the bounds
(every image decoded at once, at full size, copied for its orientation before it is scaled
down), as the app did before.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import Any


def png16(width: int, height: int, *, alpha: bool = False) -> bytes:
    """A 16-bit-per-sample PNG (colour type 2, or 6 with ``alpha``) of a repeating gradient."""
    channels = 4 if alpha else 3
    row_bytes = width * channels * 2
    row = b"\x00" + (bytes(range(256)) * (row_bytes // 256 + 1))[:row_bytes]
    packer = zlib.compressobj(9)
    body = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 16, 6 if alpha else 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def unbounded_clean(data: bytes) -> bytes:
    """The baseline: decode at full size, copy for the orientation, then scale down."""
    from PIL import Image, ImageOps

    with Image.open(io.BytesIO(data)) as opened:
        image = ImageOps.exif_transpose(opened)
        image.load()
    image.thumbnail((2048, 2048))
    out = io.BytesIO()
    image.convert("RGB").save(out, "PNG")
    return out.getvalue()


def child(path: str, parallel: int, bounded: bool) -> None:
    """Clean ``parallel`` copies of the PNG at ``path`` at once; print JSON seconds."""
    from vaultseek.study.images import clean_image

    data = Path(path).read_bytes()
    clean = (lambda: clean_image(data, name="large.png")) if bounded else (lambda: unbounded_clean(data))
    started = time.perf_counter()
    threads = [threading.Thread(target=clean) for _ in range(parallel)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"seconds": time.perf_counter() - started}))


def run_child(path: Path, parallel: int, bounded: bool) -> dict[str, Any]:
    process = subprocess.Popen([sys.executable, "-m", "benchmarks.abuse", "--child", str(path),
                                "--parallel", str(parallel), *(["--bounded"] if bounded else [])],
                               stdout=subprocess.PIPE)  # fmt: skip
    assert process.stdout is not None
    output = process.stdout.read()
    _pid, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"the child failed (status {status})")
    return {"seconds": json.loads(output)["seconds"], "peak_mb": usage.ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.abuse")
    parser.add_argument("--size", type=int, default=6000, help="pixels on each side (default 6000: 36 MP)")
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--bounded", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.parallel, args.bounded)
        return 0
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="vaultseek-abuse-") as work:
        for alpha in (False, True):
            path = Path(work) / f"rgb{'a' if alpha else ''}16.png"
            path.write_bytes(png16(args.size, args.size, alpha=alpha))
            before = run_child(path, args.parallel, bounded=False)
            after = run_child(path, args.parallel, bounded=True)
            rows.append({"image": f"{'RGBA' if alpha else 'RGB'} 16-bit {args.size}×{args.size}",
                         "png_mb": path.stat().st_size / 1e6, "unbounded": before, "bounded": after})  # fmt: skip
    print(f"{args.parallel} PNG attachments cleaned at once (peak resident memory of the process)\n")
    print("| image | file | unbounded: peak, s | bounded: peak, s | memory ratio |")
    print("|---|---:|---:|---:|---:|")
    for row in rows:
        before, after = row["unbounded"], row["bounded"]
        print(f"| {row['image']} | {row['png_mb']:.1f} MB | {before['peak_mb']:,.0f} MB, {before['seconds']:.1f} "
              f"| {after['peak_mb']:,.0f} MB, {after['seconds']:.1f} | {before['peak_mb'] / after['peak_mb']:.1f}× |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
