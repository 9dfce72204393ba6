"""The study app under abuse: a token guesser, half-sent requests, and the peak memory of images
attached at once.

    python -m benchmarks.abuse [--size PIXELS] [--parallel N] [--seconds S] [--json FILE]

**Guessing and half-sent requests.** Indexes a two-note vault and starts ``vaultseek serve
--token-file`` on it (a fresh process, scratch data folders). Eight threads then send wrong
tokens for ``--seconds`` seconds, half of them with a new ``X-Forwarded-For`` on every request;
it prints how many wrong tokens were answered, and how long the owner's requests with the right
token took meanwhile. Then it opens 1,000 connections that each send half a request head and
stop, and prints how long the server took to close them all, and the owner's request time
meanwhile.

**Images.** Writes 16-bit PNGs (RGB and RGBA, ``--size`` pixels square, a gradient that
compresses to about 1 MB) and cleans ``--parallel`` copies of each at once on threads, as that
many chat attachments arriving together are cleaned
(:func:`vaultseek.study.images.clean_image`), in a fresh child process per run; it prints the
child's peak resident memory (``ru_maxrss``) and wall seconds. The baseline, measured in the
same run, is the same decoding without the bounds (every image decoded at once, at full size,
copied for its orientation before it is scaled down), as the app did before.
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


def serve(work: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    """``vaultseek serve --token-file`` on a two-note vault; the process, its URL, the token."""
    import httpx
    from tests.support.ports import free_port

    env = {**os.environ, "VAULTSEEK_DEEP_TIER": "false", **{f"XDG_{kind}_HOME": str(work / kind.lower())
                                                             for kind in ("DATA", "STATE", "CONFIG")}}  # fmt: skip
    vault = work / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# Tenancy\n\nThe notice period for a tenancy is three months.\n")
    (vault / "b.md").write_text("# Bread\n\nFeed the sourdough starter twice a day.\n")
    subprocess.run([sys.executable, "-m", "vaultseek.cli.launcher", "index", str(vault), "-q"], env=env, check=True)
    token = "correct-horse-battery-staple"
    (work / "token").write_text(token + "\n")
    (work / "token").chmod(0o600)
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli.launcher", "serve", "--vault", str(vault),
                                "--port", str(port), "--token-file", str(work / "token")],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(url + "/", timeout=2).status_code == 200:
                return process, url, token
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit("vaultseek serve did not start")
        time.sleep(0.2)


def owner_times(url: str, token: str, stop: threading.Event) -> list[float]:
    """The owner's requests with the right token, one every 0.5 s until ``stop``: seconds each."""
    import httpx

    times = []
    while not stop.wait(0.5):
        started = time.perf_counter()
        status = httpx.get(url + "/api/documents", headers={"authorization": f"Bearer {token}"}, timeout=30).status_code
        times.append(time.perf_counter() - started if status == 200 else float("inf"))
    return times


def guessing(url: str, token: str, seconds: float) -> dict[str, Any]:
    import httpx

    answered: list[int] = []
    stop = threading.Event()

    def guess(worker: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            forged = {"x-forwarded-for": f"10.{worker}.{n // 250}.{n % 250}"} if worker % 2 else {}
            try:
                response = httpx.get(url + "/api/documents", timeout=max(0.1, seconds - 0.5),
                                     headers={"authorization": f"Bearer guess-{worker}-{n}", **forged})  # fmt: skip
                answered.append(response.status_code)
            except httpx.TimeoutException:
                pass

    threads = [threading.Thread(target=guess, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    owner: list[float] = []
    owner_thread = threading.Thread(target=lambda: owner.extend(owner_times(url, token, stop)))
    owner_thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in [*threads, owner_thread]:
        thread.join()
    return {"seconds": seconds, "wrong_answered": len(answered), "owner_max_s": max(owner), "owner_requests": len(owner)}


def half_sent(url: str, token: str, connections: int) -> dict[str, Any]:
    import select
    import socket

    port = int(url.rsplit(":", 1)[1])
    started = time.perf_counter()
    socks = []
    for _ in range(connections):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"GET /api/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        socks.append(sock)
    stop = threading.Event()
    owner: list[float] = []
    owner_thread = threading.Thread(target=lambda: owner.extend(owner_times(url, token, stop)))
    owner_thread.start()
    open_ = set(socks)
    while open_ and time.perf_counter() - started < 120:
        ready, _, _ = select.select(list(open_)[:500], [], [], 0.5)
        for sock in ready:
            try:
                if sock.recv(4096) == b"":
                    open_.discard(sock)
            except OSError:
                open_.discard(sock)
    closed_after = time.perf_counter() - started
    stop.set()
    owner_thread.join()
    for sock in socks:
        sock.close()
    return {"connections": connections, "all_closed_s": closed_after, "still_open": len(open_),
            "owner_max_s": max(owner, default=0.0), "owner_requests": len(owner)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.abuse")
    parser.add_argument("--size", type=int, default=6000, help="pixels on each side (default 6000: 36 MP)")
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the guessers guess")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--bounded", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.parallel, args.bounded)
        return 0
    with tempfile.TemporaryDirectory(prefix="vaultseek-abuse-") as work:
        process, url, token = serve(Path(work))
        try:
            guessed = guessing(url, token, args.seconds)
            flooded = half_sent(url, token, 1000)
        finally:
            process.terminate()
            process.wait(timeout=30)
    print(f"8 guessers for {guessed['seconds']:.0f} s (half with a new X-Forwarded-For each time): "
          f"{guessed['wrong_answered']} wrong tokens answered; the owner's {guessed['owner_requests']} "
          f"requests meanwhile took at most {guessed['owner_max_s'] * 1000:.0f} ms")
    print(f"{flooded['connections']:,} half-sent requests: all closed after {flooded['all_closed_s']:.1f} s "
          f"({flooded['still_open']} still open); the owner's {flooded['owner_requests']} requests meanwhile "
          f"took at most {flooded['owner_max_s'] * 1000:.0f} ms\n")
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
        args.json.write_text(json.dumps({"guessing": guessed, "half_sent": flooded, "images": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
