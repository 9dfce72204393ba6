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
from typing import Any

import httpx
import pytest
from tests.support.ports import free_port
from tests.support.standin_llm import StandinLLM

from conftest import run_cli
from study_fixtures import wait_until_serving
from vaultseek.config import USER_ONLY_KEYS, load_config

VAULT_TOKEN = "token-written-into-the-vault"


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


# -- what else a vault file may not decide: where the index is written, what Delete removes,
#    what is downloaded, and how far the limits go -----------------------------------------------


def files_in(folder: Path) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*")}


def test_a_vault_file_cannot_write_the_index_or_the_study_database_into_the_vault(study_vault: Path) -> None:
    (study_vault / ".vaultseek.toml").write_text('db = "shared/.cache.db"\nexclude = ["cooking"]\n', "utf-8")
    before = files_in(study_vault)
    indexed = run_cli("index", str(study_vault))
    assert indexed.returncode == 0, indexed.stderr
    (warning,) = [line for line in indexed.stderr.splitlines() if line.startswith("warning:")]
    assert "ignored db:" in warning and "your own config file" in warning
    asked = run_cli("serve", "--vault", str(study_vault), "--get", "/api/status")  # opens the study database
    assert asked.returncode == 0, asked.stderr
    assert "ignored db" in asked.stderr
    assert files_in(study_vault) == before  # neither the index nor the study database is in the vault
    status = run_cli("status", "--json", "--vault", str(study_vault))
    db_path = Path(json.loads(status.stdout)["db_path"])
    assert "ignored db:" in json.loads(status.stdout)["config_notices"][0]
    assert db_path.is_file() and study_vault not in db_path.parents


def test_a_vault_file_cannot_make_its_notes_deletable_as_uploads(study_vault: Path, tmp_path: Path,
                                                                collector: StandinLLM) -> None:  # fmt: skip
    from starlette.testclient import TestClient

    from study_fixtures import make_app

    (study_vault / ".vaultseek.toml").write_text('upload_folder = "."\n', "utf-8")
    app = make_app(study_vault, tmp_path / "index.db", collector.url)
    try:
        assert app.notebook.config.upload_folder == "uploads"
        assert any("ignored upload_folder" in notice for notice in app.notebook.config.notices)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            refused = client.delete("/api/documents/law/tenancy.md")
            assert refused.status_code == 400, refused.text
    finally:
        app.notebook.close()
    assert (study_vault / "law" / "tenancy.md").exists()


def test_no_config_file_may_make_the_vault_itself_the_upload_or_intake_folder(sample_vault: Path) -> None:
    from vaultseek.errors import ConfigError

    for key in ("upload_folder", "intake_inbox"):
        for value in (".", "./", "/"):
            with pytest.raises(ConfigError, match=key):
                load_config(vault=sample_vault, environ={f"VAULTSEEK_{key.upper()}": value})
    assert load_config(vault=sample_vault, environ={"VAULTSEEK_UPLOAD_FOLDER": "./inbox/"}).upload_folder == "./inbox/"


class Listener:
    """A TCP port that records every connection made to it: the Hugging Face hub, as far as a
    process told ``HF_ENDPOINT`` to use it can tell."""

    def __init__(self) -> None:
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.connections = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(5)
        self.sock.close()


def test_a_vault_files_hub_model_is_never_downloaded(sample_vault: Path) -> None:
    (sample_vault / ".vaultseek.toml").write_text('model = "org/x"\n', "utf-8")
    hub = Listener()
    try:
        env = {"HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0", "HF_HOME": str(sample_vault.parent / "hf")}
        indexed = run_cli("index", str(sample_vault), "--json", env=env)
        searched = run_cli("search", "sourdough", "--vault", str(sample_vault), "--no-daemon", "--json", env=env)
    finally:
        hub.close()
    assert indexed.returncode == 0, indexed.stderr
    assert hub.connections == 0
    assert "ignored model:" in indexed.stderr and "downloaded" in indexed.stderr
    assert searched.returncode == 0 and json.loads(searched.stdout)["results"]
    status = run_cli("status", "--json", "--vault", str(sample_vault))
    assert json.loads(status.stdout)["model"] == "vaultseek/minilm-l6-v2-m2v256"


def test_the_bundled_model_names_match_the_embedding_module() -> None:
    from vaultseek.config import BUNDLED_MODEL_NAMES
    from vaultseek.embeddings.static import BUNDLED_MODEL, BUNDLED_MODEL_NAME

    assert BUNDLED_MODEL_NAMES == (BUNDLED_MODEL, BUNDLED_MODEL_NAME)


def test_what_a_vault_file_may_set_in_part(sample_vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "model").mkdir(parents=True)
    (sample_vault / "models" / "mine").mkdir(parents=True)
    vault_file = sample_vault / ".vaultseek.toml"

    def loaded(text: str, environ: dict[str, str] | None = None) -> Any:
        vault_file.write_text(text, "utf-8")
        return load_config(vault=sample_vault, environ=environ or {})

    raised = loaded("max_file_mb = 5000\nmax_inflated_mb = 1e9\nocr_max_pages_per_document = 100000\n"
                    "max_document_mb = 1\nmax_upload_mb = 5\n")  # fmt: skip
    assert (raised.max_file_mb, raised.max_inflated_mb, raised.ocr_max_pages_per_document) == (10.0, 200.0, 100)
    assert (raised.max_document_mb, raised.max_upload_mb) == (1.0, 5.0)  # lowered: kept
    (notice,) = raised.notices
    assert "ignored max_file_mb, max_inflated_mb, ocr_max_pages_per_document:" in notice
    user_config("max_file_mb = 50\ndeep_tier = false\n")
    assert loaded("max_file_mb = 40\n").max_file_mb == 40.0  # under the user's own limit
    assert loaded("max_file_mb = 60\n").max_file_mb == 50.0
    switched = loaded("deep_tier = true\n")
    assert switched.deep_tier is False and "ignored deep_tier" in switched.notices[0]
    assert loaded("max_file_mb = 60\n", {"VAULTSEEK_MAX_FILE_MB": "60"}).max_file_mb == 60.0  # the user's own

    assert loaded('model = "models/mine"\n').model == str((sample_vault / "models" / "mine").resolve())
    assert loaded('model = "bundled"\n').notices == ()
    for elsewhere in (str(outside / "model"), "../outside/model", "org/x", "models/missing"):
        config = loaded(f'model = "{elsewhere}"\n')
        assert config.model == "bundled" and "ignored model" in config.notices[0]
    assert loaded('prompt_folder = "prompts"\n').prompt_folder == str(sample_vault / "prompts")
    outside_prompts = loaded(f'prompt_folder = "{outside}"\n')
    assert outside_prompts.prompt_folder is None and "ignored prompt_folder" in outside_prompts.notices[0]
    user_config(f'model = "org/x"\nupload_folder = "attachments"\ndb = "{tmp_path / "mine.db"}"\n')
    own = loaded('top_k = 3\n')
    assert (own.model, own.upload_folder, own.db, own.top_k) == ("org/x", "attachments", tmp_path / "mine.db", 3)
