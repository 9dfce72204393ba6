"""The study app under abuse, through a real ``vaultseek serve`` on a real socket: a token
guesser (with forged forwarded headers or without), half-sent requests, large 16-bit PNGs
attached at once, and recordings at nonsense or unusual sample rates, several at once."""

from __future__ import annotations

import io
import select
import socket
import struct
import subprocess
import sys
import threading
import time
import wave
import zlib
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from conftest import run_cli
from study_fixtures import make_app, make_study_vault, missing, serve_with_token

TOKEN = "correct-horse-battery-staple"
RIGHT = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """``vaultseek serve --token-file`` on a free port; yields its URL."""
    vault = make_study_vault(tmp_path)
    assert run_cli("index", str(vault), "-q").returncode == 0
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    with serve_with_token(vault, token_file, tmp_path / "serve.log") as server:
        yield server.url


# -- the token ------------------------------------------------------------------------------------
def test_guessing_is_throttled_whatever_headers_say_and_the_owner_gets_in(served: str) -> None:
    answers: Counter[str] = Counter()
    stop = threading.Event()

    def guess(worker: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            forged = {"x-forwarded-for": f"10.{worker}.{n // 250}.{n % 250}", "forwarded": f"for=10.{worker}.0.{n % 250}",
                      "x-real-ip": f"10.9.{worker}.{n % 250}"} if worker % 2 else {}  # fmt: skip
            try:
                response = httpx.get(f"{served}/api/documents", timeout=8,
                                     headers={"authorization": f"Bearer guess-{worker}-{n:06d}", **forged})  # fmt: skip
                answers[str(response.status_code)] += 1
            except httpx.TimeoutException:
                answers["held"] += 1

    guessers = [threading.Thread(target=guess, args=(worker,)) for worker in range(8)]
    for thread in guessers:
        thread.start()
    try:
        time.sleep(2.0)  # the guessers have used their free tries and wait in line
        started = time.monotonic()
        owner = httpx.get(f"{served}/api/documents", headers=RIGHT, timeout=10)
        assert owner.status_code == 200 and time.monotonic() - started < 2
        page = httpx.get(f"{served}/?token={TOKEN}", timeout=10, follow_redirects=False)
        assert page.status_code == 303 and "vaultseek_token" in page.headers["set-cookie"]
        time.sleep(2.0)
    finally:
        stop.set()
        for thread in guessers:
            thread.join(timeout=30)
    # In about 4 s: the five free tries, then turns 1 s and 2 s apart — whatever address the
    # guessers claimed (a forged X-Forwarded-For would otherwise be a fresh address, with fresh
    # free tries, on every request).
    assert answers["401"] <= 8, answers
    assert answers["429"] == 0 and sum(answers.values()) <= 8 + 3 * 8, answers


# -- half-sent requests ---------------------------------------------------------------------------
def closed(sock: socket.socket, *, within: float) -> bool:
    """True if the server closes ``sock`` within ``within`` seconds."""
    deadline = time.monotonic() + within
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([sock], [], [], left)
        if ready:
            try:
                if sock.recv(4096) == b"":
                    return True
            except ConnectionResetError:
                return True
    return False


def test_half_sent_requests_are_closed_and_the_owner_still_gets_in(served: str) -> None:
    from vaultseek.web.server import HEADER_TIMEOUT, MAX_CONNECTIONS

    port = int(served.rsplit(":", 1)[1])
    started = time.monotonic()
    half_sent = []
    for _ in range(MAX_CONNECTIONS + 100):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"GET /api/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
        half_sent.append(sock)
    try:
        # More half-sent requests than the server keeps connections: a request sent whole
        # still gets in (the longest-waiting half-sent one makes room).
        assert httpx.get(f"{served}/api/documents", headers=RIGHT, timeout=10).status_code == 200
        assert all(closed(sock, within=HEADER_TIMEOUT + 5 - (time.monotonic() - started)) for sock in half_sent)
        assert time.monotonic() - started < HEADER_TIMEOUT + 5
        # One trickling its head a byte at a time is closed too: the head has a deadline.
        with socket.create_connection(("127.0.0.1", port)) as trickle:
            trickle_started = time.monotonic()
            for byte in b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100:
                try:
                    trickle.sendall(bytes([byte]))
                except (BrokenPipeError, ConnectionResetError):
                    break
                if closed(trickle, within=0.5):
                    break
            assert time.monotonic() - trickle_started < HEADER_TIMEOUT + 2
    finally:
        for sock in half_sent:
            sock.close()


def test_a_stalled_body_is_closed_and_a_slow_answer_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.standin_llm import StandinLLM

    from vaultseek.web import server

    monkeypatch.setattr(server, "READ_TIMEOUT", 1.0)
    with StandinLLM() as standin:
        app = make_app(make_study_vault(tmp_path), tmp_path / "i.db", standin.url)
        try:
            with server.BackgroundServer(app) as live:
                port = int(live.url.rsplit(":", 1)[1])
                with socket.create_connection(("127.0.0.1", port)) as stalled:
                    stalled.sendall(b"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                    b"Content-Length: 100\r\n\r\n{\"query\": ")  # fmt: skip
                    assert closed(stalled, within=4)
                # A chat answer streaming for longer than that is not cut: the client is not slow.
                with httpx.stream("POST", f"{live.url}/api/chat", json={"question": "notice period for a tenancy? #slow"},
                                  timeout=30) as answer:  # fmt: skip
                    started = time.monotonic()
                    lines = [line for line in answer.iter_lines() if line.strip()]
                assert answer.status_code == 200 and '"done"' in lines[-1]
                assert time.monotonic() - started > 1.0  # longer than the body's timeout
        finally:
            app.notebook.close()


# -- images ---------------------------------------------------------------------------------------
def png16(width: int, height: int) -> bytes:
    """A 16-bit RGB PNG of a gradient: 0.4 MB that decodes to ``width × height`` pixels."""
    row = b"\x00" + (bytes(range(256)) * (width * 6 // 256 + 1))[: width * 6]
    packer = zlib.compressobj(9)
    body = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 16, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


ATTACH_AT_ONCE = """
import sys, threading
from pathlib import Path
from vaultseek.study.images import clean_image
data = Path(sys.argv[1]).read_bytes()
sizes = []
threads = [threading.Thread(target=lambda: sizes.append(clean_image(data).width)) for _ in range(8)]
[thread.start() for thread in threads]
[thread.join() for thread in threads]
assert sizes == [2048] * 8, sizes
# VmHWM is this process's own peak; ru_maxrss would start from the parent's size at the fork.
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def test_eight_large_16_bit_pngs_at_once_are_decoded_in_bounded_memory(tmp_path: Path) -> None:
    pytest.importorskip("PIL", reason="Pillow (the documents extra) reads images")
    picture = tmp_path / "large.png"
    picture.write_bytes(png16(4000, 4000))  # 16 million pixels, 96 MB of samples
    done = subprocess.run([sys.executable, "-c", ATTACH_AT_ONCE, str(picture)], capture_output=True,
                          text=True, check=True, timeout=300)
    peak_kb = int(done.stdout.split()[-1])
    # Each decode holds 64 MB of pixels; eight at once, copied for their orientation, took 1.3 GB.
    assert peak_kb / 1024 < 600, f"{peak_kb / 1024:.0f} MB"


# -- recordings -----------------------------------------------------------------------------------
def wav(samples: bytes, rate: int) -> bytes:
    """16-bit mono WAV bytes at ``rate`` (any number the header can hold, 0 included)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(16000)
        writer.writeframes(samples)
    data = bytearray(out.getvalue())
    data[24:32] = struct.pack("<II", rate, rate * 2 % 2**32)  # the fmt chunk's rate and byte rate
    return bytes(data)


def spoken(tmp_path: Path, text: str) -> tuple[bytes, int]:
    """``text`` spoken by espeak-ng: its samples and rate."""
    import shutil

    espeak = shutil.which("espeak-ng")
    if espeak is None:
        missing("espeak-ng is not installed (apt-get install espeak-ng)")
    path = tmp_path / "spoken.wav"
    subprocess.run([espeak, "-s", "140", "-w", str(path), text], check=True)
    with wave.open(str(path)) as reader:
        return reader.readframes(reader.getnframes()), reader.getframerate()


def at_8_khz(samples: bytes, rate: int) -> bytes:
    """Every sample nearest an 8 kHz tick (a telephone-quality copy)."""
    count = len(samples) // 2
    return b"".join(samples[2 * (i * rate // 8000) : 2 * (i * rate // 8000) + 2] for i in range(count * 8000 // rate))


def test_recordings_at_nonsense_rates_are_400s_and_several_at_once_all_succeed(served: str, tmp_path: Path) -> None:
    try:
        import pocketsphinx  # noqa: F401
    except ImportError:
        missing("pocketsphinx (in-process transcription) is not installed")
    speech, rate = spoken(tmp_path, "what is the notice period for a tenancy")

    def post(audio: bytes) -> httpx.Response:
        return httpx.post(f"{served}/api/transcribe", content=audio, timeout=120,
                          headers={**RIGHT, "content-type": "audio/wav"})  # fmt: skip

    assert httpx.get(f"{served}/api/transcribe", headers=RIGHT, timeout=10).json()["engine"] == "pocketsphinx"
    for nonsense in (0, 1, 2_000_000_000):
        refused = post(wav(speech, nonsense))
        assert refused.status_code == 400, (nonsense, refused.text)
        error = refused.json()["error"]
        assert error["code"] == "bad_recording" and "samples a second" in error["message"], error
    telephone = post(wav(at_8_khz(speech, rate), 8000))
    assert telephone.status_code == 200, telephone.text
    assert telephone.json()["engine"] == "pocketsphinx"
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: post(wav(speech, rate)), range(6)))
    assert [answer.status_code for answer in answers] == [200] * 6, [a.text for a in answers]
    texts = {answer.json()["text"] for answer in answers}
    assert len(texts) == 1 and len(texts.pop().split()) >= 3  # each transcribed whole, the same
    # A client's broken recording says so; the server is not at fault.
    broken = post(b"RIFF\x00\x00\x00\x00WAVEnot a wav at all")
    assert broken.status_code == 400 and broken.json()["error"]["code"] == "bad_recording"
