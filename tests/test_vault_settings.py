"""What a vault's own ``.vaultseek.toml`` may decide: not where private data is sent, nor who
can reach the study app. A shared or synced vault is written by others; those settings come
from the user's own config file, environment and flags only."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.support.standin_llm import StandinLLM

from conftest import run_cli
from study_fixtures import wait_until_serving
from vaultseek.config import USER_ONLY_KEYS, load_config

VAULT_TOKEN = "token-written-into-the-vault"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def user_config(text: str) -> Path:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "vaultseek" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def hostile_vault_file(vault: Path, llm_url: str) -> Path:
    path = vault / ".vaultseek.toml"
    path.write_text(f'llm_url = "{llm_url}"\nserve_host = "0.0.0.0"\nserve_port = {free_port()}\n'
                    f'serve_token = "{VAULT_TOKEN}"\nexclude = ["cooking"]\n', "utf-8")  # fmt: skip
    return path


def test_status_ignores_a_vault_files_network_settings_and_says_so(sample_vault: Path) -> None:
    vault_file = hostile_vault_file(sample_vault, "http://192.0.2.1:11434")
    assert run_cli("index", str(sample_vault)).returncode == 0
    result = run_cli("status", "--vault", str(sample_vault))
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, result.stderr
    assert str(vault_file) in warnings[0] and "llm_url, serve_host, serve_port, serve_token" in warnings[0]
    as_json = run_cli("status", "--json", "--vault", str(sample_vault))
    assert as_json.returncode == 0 and json.loads(as_json.stdout)  # stdout stays JSON
    assert "llm_url" in as_json.stderr

    config = load_config(vault=sample_vault)
    assert (config.llm_url, config.serve_host, config.serve_port, config.serve_token) == (None, "127.0.0.1", 8765, None)
    assert "cooking" in config.exclude  # the vault's other settings still apply
    assert {"llm_url", "serve_host", "serve_port", "serve_token"} <= set(USER_ONLY_KEYS)


def test_the_users_own_config_and_environment_still_set_them(sample_vault: Path) -> None:
    hostile_vault_file(sample_vault, "http://192.0.2.1:11434")
    user_config('llm_url = "http://192.0.2.9:11434"\nserve_host = "127.0.0.3"\nserve_token = "the-users-own-token"\n')
    config = load_config(vault=sample_vault, environ={"VAULTSEEK_SERVE_PORT": "9123"})
    assert (config.llm_url, config.serve_host, config.serve_port, config.serve_token) == (
        "http://192.0.2.9:11434", "127.0.0.3", 9123, "the-users-own-token")  # fmt: skip
    assert len(config.notices) == 1  # the vault file's attempt is still reported
    (sample_vault / ".vaultseek.toml").write_text('exclude = ["cooking"]\n', "utf-8")
    assert load_config(vault=sample_vault).notices == ()


@pytest.fixture
def collector() -> Iterator[StandinLLM]:
    """An LLM server the vault file names: it must never hear a question."""
    with StandinLLM() as server:
        yield server


@pytest.fixture
def own_llm() -> Iterator[StandinLLM]:
    """The LLM server the user's own config names."""
    with StandinLLM() as server:
        yield server


def test_serve_listens_and_asks_where_the_user_said(study_vault: Path, tmp_path: Path, collector: StandinLLM,
                                                    own_llm: StandinLLM) -> None:  # fmt: skip
    hostile_vault_file(study_vault, collector.url)
    user_config(f'llm_url = "{own_llm.url}"\nllm_model = "standin"\n')
    port = free_port()
    log = open(tmp_path / "serve.log", "w+b")  # noqa: SIM115 - closed in finally
    errors = open(tmp_path / "serve.err", "w+b")  # noqa: SIM115 - closed in finally
    process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", "serve", "--vault", str(study_vault),
                                "--db", str(tmp_path / "i.db"), "--port", str(port)],
                               stdout=log, stderr=errors)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        # Answered on 127.0.0.1 without a token: the vault's 0.0.0.0 and token were not used.
        wait_until_serving(process, errors, lambda: bool(httpx.get(f"{url}/api/documents", timeout=2).json()["items"]),
                           "vaultseek serve", seconds=60)  # fmt: skip
        with httpx.Client(base_url=url, timeout=30) as http:
            answer = http.post("/api/chat", json={"question": "what is the notice period?"})
            assert answer.status_code == 200
            assert any('"type": "text"' in line or '"type":"text"' in line for line in answer.text.splitlines())
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.seek(0)
        errors.seek(0)
        printed, warned = log.read().decode(), errors.read().decode()
        log.close()
        errors.close()
    assert own_llm.requests and not collector.requests
    assert f"http://127.0.0.1:{port}/" in printed
    assert "warning:" in warned and "llm_url, serve_host, serve_port, serve_token" in warned
