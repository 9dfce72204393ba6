"""The knowledge base over HTTP: uploads (streamed, safe names, size cap, no overwrite),
ingestion timelines, categories, deletion, search with filters, privacy, and the guard."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.ports import free_port
from tests.support.standin_llm import StandinLLM

from study_fixtures import make_app, wait_until_serving


def wait_indexed(client: Any, path: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = {d["path"]: d for d in client.get("/api/documents", params={"q": path}).json()["items"]}
        if path in rows and rows[path]["status"] in ("indexed", "failed", "skipped"):
            return rows[path]
        time.sleep(0.05)
    raise AssertionError(f"{path} was not indexed")


def test_upload_is_indexed_searchable_categorised_and_deletable(client: Any, study_vault: Path) -> None:
    response = client.post("/api/documents", files={"file": ("bananas.txt", b"Bananas are yellow and rich in potassium.")},
                           data={"category": "fruit"})  # fmt: skip
    assert response.status_code == 201
    assert response.json()["uploaded"] == [{"path": "uploads/bananas.txt", "status": "queued"}]
    assert (study_vault / "uploads" / "bananas.txt").read_bytes().startswith(b"Bananas")
    row = wait_indexed(client, "uploads/bananas.txt")
    assert row["status"] == "indexed" and row["kind"] == "txt" and row["chunks"] == 1 and row["category"] == "fruit"
    assert row["deletable"] is True
    assert client.get("/api/documents/tree").json()["categories"] == [{"name": "fruit", "documents": 1}]
    searched = client.get("/api/search", params={"q": "potassium", "categories": "fruit"})
    found = searched.json()
    assert [r["path"] for r in found["results"]] == ["uploads/bananas.txt"]
    assert float(searched.headers["Server-Timing"].partition("dur=")[2]) > 0
    # The same name again asks first (409); told to keep both, it is stored beside it, not over it.
    asked = client.post("/api/documents", files={"file": ("bananas.txt", b"Other bananas.")})
    assert asked.status_code == 409 and asked.json()["conflict"]["existing"] == "uploads/bananas.txt"
    again = client.post("/api/documents?on_conflict=keep_both", files={"file": ("bananas.txt", b"Other bananas.")}).json()
    assert again["uploaded"][0]["path"] == "uploads/bananas (2).txt"
    assert (study_vault / "uploads" / "bananas.txt").read_bytes().startswith(b"Bananas are")
    chunks = client.get("/api/documents/uploads/bananas.txt/chunks").json()["chunks"]
    assert "potassium" in chunks[0]["text"]
    # Delete removes the file and its chunks.
    assert client.delete("/api/documents/uploads/bananas.txt").status_code == 202
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (study_vault / "uploads" / "bananas.txt").exists():
        time.sleep(0.05)
    assert not (study_vault / "uploads" / "bananas.txt").exists()
    time.sleep(0.2)
    assert client.get("/api/search", params={"q": "potassium yellow"}).json()["results"][0]["path"] != "uploads/bananas.txt"
    assert client.get("/api/documents/uploads/bananas.txt/chunks").status_code == 404
    assert not list((study_vault / "uploads").glob(".*.part"))


@pytest.mark.parametrize(
    "name",
    ["../escape.txt", "a/b.txt", "..\\win.txt", "/etc/passwd.txt", ".hidden.txt", "..", "C:evil.txt",
     "trailing.txt ", "program.exe", "", "x" * 200 + ".txt"],
)
def test_upload_names_that_escape_or_hide_are_refused(client: Any, study_vault: Path, name: str) -> None:
    response = client.post("/api/documents", files={"file": (name, b"some text")})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "upload_refused" and error["message"]
    assert not (study_vault.parent / "escape.txt").exists()
    assert not list(study_vault.rglob("*.part"))


def test_clean_upload_name_rules() -> None:
    from vaultseek.config import Config
    from vaultseek.study.uploads import UploadError, clean_upload_name, is_upload

    config = Config()
    assert clean_upload_name("Report 2024 (final).PDF", config) == "Report 2024 (final).PDF"
    for bad in ("tab\tname.txt", "nul\x00.txt", "del\x7f.txt", "a/../b.txt", ".env.txt", "x."):
        with pytest.raises(UploadError):
            clean_upload_name(bad, config)
    assert is_upload("uploads/a.pdf", config) and not is_upload("uploads", config)
    assert not is_upload("uploads/../a.md", config) and not is_upload("uploadsx/a.pdf", config)


def test_raw_multipart_with_nul_and_traversal_names(client: Any, study_vault: Path) -> None:
    for name in (b"nul\x00.txt", b"../../escape.txt", b"sub/../../x.txt"):
        body = (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + name + b"\"\r\n"
                b"Content-Type: text/plain\r\n\r\nhello\r\n--XyZ--\r\n")  # fmt: skip
        response = client.post("/api/documents", content=body, headers={"content-type": "multipart/form-data; boundary=XyZ"})
        assert response.status_code == 400, (name, response.text)
    assert not (study_vault.parent / "escape.txt").exists() and not (study_vault / "x.txt").exists()


def test_upload_size_cap_and_non_multipart(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> None:
    from starlette.testclient import TestClient

    app = make_app(study_vault, tmp_path / "i.db", standin.url, max_upload_mb=0.01)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            big = client.post("/api/documents", files={"file": ("big.txt", b"x" * 20_000)})
            assert big.status_code == 413 and "max_upload_mb" in big.json()["error"]["hint"]
            raw = client.post("/api/documents", content=b"hello", headers={"content-type": "text/plain"})
            assert raw.status_code == 400
            empty = client.post("/api/documents", files={"file": ("empty.txt", b"")})
            assert empty.status_code == 400
    finally:
        app.notebook.close()
    assert not (study_vault / "uploads" / "big.txt").exists()
    assert not list((study_vault / "uploads").glob(".*"))


def test_only_uploads_can_be_deleted_and_paths_are_checked(client: Any, study_vault: Path) -> None:
    refused = client.delete("/api/documents/law/tenancy.md")
    assert refused.status_code == 400 and "not an upload" in refused.json()["error"]["message"]
    assert (study_vault / "law" / "tenancy.md").exists()
    assert client.delete("/api/documents/uploads/../law/tenancy.md").status_code in (400, 404)
    assert client.put("/api/documents/nope.md/category", json={"category": "x"}).status_code == 404
    assert client.put("/api/documents/law/tenancy.md/category", json={"category": 3}).status_code == 400


def test_ingestion_progress_streams_a_step_timeline(live: Any) -> None:
    with (
        httpx.Client(base_url=live.url, timeout=60) as http,
        http.stream("GET", "/api/ingest/events") as events,
    ):
        lines = events.iter_lines()
        assert json.loads(next(lines))["type"] == "snapshot"
        http.post("/api/documents", files={"file": ("report.csv", b"name,amount\napples,3\npears,4\n")})
        steps = []
        for line in lines:
            event = json.loads(line)
            if event["type"] == "job" and event["data"]["path"] == "uploads/report.csv":
                steps = [s["step"] for s in event["data"]["steps"]]
                if event["data"]["status"] in ("indexed", "failed"):
                    break
    assert steps[0] == "queued" and "indexing" in steps and steps[-1] == "done"


def test_search_api_filters_and_errors(client: Any) -> None:
    body = client.get("/api/search", params={"q": "notice period", "folders": "cooking"}).json()
    assert all(r["path"].startswith("cooking/") for r in body["results"])
    body = client.get("/api/search", params={"q": "starter", "tags": "law", "mode": "bm25"}).json()
    assert body["results"] == []
    assert client.get("/api/search", params={"q": "x", "mode": "nope"}).json()["error"]["code"] == "bad_request"
    assert client.get("/api/search").status_code == 400
    assert client.get("/api/search", params={"q": "x", "k": "ten"}).status_code == 400


def test_search_api_frontmatter_dates_and_signals(client: Any) -> None:
    def paths(**params: Any) -> set[str]:
        response = client.get("/api/search", params={"q": "notice period starter", **params})
        assert response.status_code == 200, response.text
        return {r["path"] for r in response.json()["results"]}

    assert paths(tags="law") == {"law/tenancy.md"}  # law/tenancy is nested under law
    assert paths(kinds="md", modified_after="1d", modified_before="2999-01-01") == {"law/tenancy.md", "cooking/bread.md"}
    assert paths(modified_before="2000") == set()
    assert paths(where="tags:food") == {"cooking/bread.md"}  # frontmatter list membership
    assert paths(where=["tags:food", "tags:law/tenancy"]) == {"cooking/bread.md", "law/tenancy.md"}
    body = client.get("/api/search", params={"q": "Tenancy", "title_match": "1", "recency_half_life_days": "30",
                                             "intent": "true"}).json()  # fmt: skip
    assert body["results"][0]["path"] == "law/tenancy.md" and set(body["results"][0]["sections"][0]["signals"]) == {"title", "recency"}
    terms = client.get("/api/search", params={"q": "tenancy deposit", "term_match": "0.5"})
    assert terms.status_code == 200 and terms.json()["results"]
    for bad in ({"modified_after": "soon"}, {"where": "status:"}, {"title_match": "maybe"},
                {"recency_half_life_days": "a week"}, {"recency_half_life_days": "-3"},
                {"term_match": "lots"}, {"term_match": "1.5"}):  # fmt: skip
        error = client.get("/api/search", params={"q": "x", **bad})
        assert error.status_code == 400 and error.json()["error"]["code"] == "bad_request", bad


@pytest.fixture
def served(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> Iterator[str]:
    """`vaultseek serve` as its own process (what a user runs), on a free port."""
    import os
    import subprocess
    import sys

    port = free_port()
    env = {**os.environ, "VAULTSEEK_LLM_URL": standin.url, "VAULTSEEK_LLM_MODEL": "standin"}
    log = open(tmp_path / "serve.log", "w+b")  # noqa: SIM115
    process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", "serve", "--vault", str(study_vault),
                                "--db", str(tmp_path / "i.db"), "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, env=env)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(process, log, lambda: bool(httpx.get(f"{url}/api/documents", timeout=2).json()["items"]),
                           "vaultseek serve", seconds=60)  # fmt: skip
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def test_privacy_panel_lists_live_connections(served: str, standin: StandinLLM) -> None:
    with (
        httpx.Client(base_url=served, timeout=30) as http,
        httpx.Client(base_url=served, timeout=30) as other,
        http.stream("POST", "/api/chat", json={"question": "notice period #slow"}) as answer,
    ):
        for line in answer.iter_lines():
            if json.loads(line)["type"] == "text":
                report = other.get("/api/privacy").json()  # while the model is talking
                http.post(f"/api/chat/{answer.headers['x-conversation-id']}/stop")
    assert report["documents"] == 0 and report["notes"] == 2 and report["chunks"] >= 2
    assert report["llm"]["url"] == standin.url
    kinds = [c["kind"] for c in report["network"]["connections"]]
    assert {"listening", "local client", "llm"} <= set(kinds), report["network"]
    assert report["network"]["ok"] is True, report["network"]


def test_privacy_flags_other_connections() -> None:
    import socket

    from vaultseek.study.privacy import connection_report

    with socket.create_server(("127.0.0.1", 0)) as listener, socket.create_connection(listener.getsockname()) as stray:
        report = connection_report(llm_host="localhost", llm_port=1, app_ports={2})
        assert stray.getsockname()[1] in {c["local"][1] for c in report["connections"] if c["kind"] == "other"}
        assert report["ok"] is False


def test_host_origin_and_security_headers(client: Any) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
    shell = re.search(r'<script type="module" src="(/static/[0-9a-f]{12}/js/shell\.js)">', page.text)  # the build's version
    assert shell and "http" not in page.text.split("<body>")[0].replace("http-equiv", "")
    assert client.get(shell[1]).status_code == 200
    assert client.get("/static/js/shell.js").status_code == 200
    rebound = client.get("/api/status", headers={"host": "attacker.example:8765"})
    assert rebound.status_code == 403 and rebound.json()["error"]["code"] == "forbidden_host"
    foreign = client.post("/api/chat", json={"question": "x"}, headers={"origin": "http://attacker.example"})
    assert foreign.status_code == 403 and foreign.json()["error"]["code"] == "cross_origin"
    same = client.get("/api/conversations", headers={"origin": "http://127.0.0.1"})
    assert same.status_code == 200 and "access-control-allow-origin" not in same.headers


def test_token_is_required_when_set(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> None:
    from starlette.testclient import TestClient

    app = make_app(study_vault, tmp_path / "i.db", standin.url, serve_token="correct-horse-battery")
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            assert client.get("/api/documents").status_code == 401
            assert client.get("/api/documents", headers={"authorization": "Bearer wrong-token-000"}).status_code == 401
            assert client.get("/api/documents", headers={"authorization": "Bearer correct-horse-battery"}).status_code == 200
            login = client.get("/?token=correct-horse-battery", follow_redirects=False)
            assert login.status_code == 303 and "HttpOnly" in login.headers["set-cookie"]
            assert client.get("/api/documents").status_code == 200  # the cookie now
    finally:
        app.notebook.close()


def test_binding_beyond_localhost_needs_a_token(tmp_path: Path) -> None:
    from conftest import run_cli

    vault = tmp_path / "v"
    vault.mkdir()
    refused = run_cli("serve", "--vault", str(vault), "--host", "0.0.0.0")
    assert refused.returncode == 2 and "without a token" in refused.stderr and "--token" in refused.stderr
    assert "Traceback" not in refused.stderr
    short = run_cli("serve", "--vault", str(vault), "--host", "0.0.0.0", "--token", "abc")
    assert short.returncode == 2 and "too short" in short.stderr


def test_serve_get_answers_one_request(tmp_path: Path) -> None:
    from conftest import run_cli

    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nalpha text here for the index\n")
    assert run_cli("index", str(vault), "-q").returncode == 0
    result = run_cli("serve", "--vault", str(vault), "--get", "/api/documents")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["items"][0]["path"] == "a.md"


def test_closing_the_readers_never_touches_an_index_in_use(study_vault: Path, tmp_path: Path) -> None:
    """Shutdown used to close every reader, even one whose thread was inside a statement
    (the start-up warm-up, still searching when a short test ended): apsw raised
    ThreadingViolationError. Here a reader is held inside a real statement while the pool
    closes: the pool leaves it alone, lends nothing more, and the borrower closes it on return."""
    import threading

    import apsw

    from vaultseek.config import load_config
    from vaultseek.engine import Index
    from vaultseek.errors import IndexClosedError
    from vaultseek.study.library import ReaderPool

    config = load_config(vault=study_vault, db=tmp_path / "index.db")
    with Index(config, create=True) as writer:
        writer.sync(remember=False)
    pool = ReaderPool(lambda: Index(config), size=1)
    inside, leave = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def pause() -> int:
        inside.set()
        leave.wait(10)
        return 1

    def search_mid_statement() -> None:
        with pool.borrow() as index:
            seen["index"] = index
            index.conn.create_scalar_function("pause", pause, 0)
            index.conn.execute("SELECT pause()").fetchall()  # the pool closes while this runs
            seen["after"] = [r.path for r in index.search("notice period", k=1).results]

    def wait_for_a_reader() -> None:  # the pool's one reader is lent: this waits, then is refused
        try:
            with pool.borrow():
                seen["waiter"] = "lent"
        except IndexClosedError as exc:
            seen["waiter"] = exc

    borrower = threading.Thread(target=search_mid_statement)
    borrower.start()
    assert inside.wait(10)
    waiter = threading.Thread(target=wait_for_a_reader)
    waiter.start()
    pool.close()
    waiter.join(10)
    assert isinstance(seen["waiter"], IndexClosedError)
    with pytest.raises(IndexClosedError), pool.borrow():
        pass
    leave.set()
    borrower.join(10)
    assert seen["after"] == ["law/tenancy.md"]  # the lent reader kept working through close
    with pytest.raises(apsw.ConnectionClosedError):  # and was closed as it came back
        seen["index"].files()


def test_knowledge_base_warms_after_the_first_run_and_close_joins_the_warm_up(study_vault: Path, tmp_path: Path) -> None:
    """The warm-up used to start beside the first sync and open its reader while the writer
    opened the new index (the race in db.open_connection), loading vectors not written yet."""
    import threading

    from vaultseek.config import load_config
    from vaultseek.engine import Index
    from vaultseek.study.library import KnowledgeBase
    from vaultseek.study.storage import StudyStore, study_db_path

    config = load_config(vault=study_vault, db=tmp_path / "index.db")
    assert config.db is not None
    opened: list[str] = []

    def factory() -> Index:
        opened.append(threading.current_thread().name)
        return Index(config, create=True)

    store = StudyStore(study_db_path(config.db))
    kb = KnowledgeBase(config, factory, store)
    kb.start()
    assert kb.warmer is not None
    kb.warmer.join(60)
    assert opened == ["vaultseek-writer", "vaultseek-warm"]
    assert kb.known_paths() == {"law/tenancy.md", "cooking/bread.md"}
    kb.start()  # a second start closed at once: close waits for its warm-up, never races it
    kb.close()
    assert not kb.warmer.is_alive() and not kb.ingest.thread.is_alive()
    store.close()


def test_a_failed_start_up_run_is_reported_by_status(study_vault: Path, tmp_path: Path) -> None:
    """The start-up sync has no upload behind it, so no timeline: its failure must still show
    (it once failed silently and the app served an empty index)."""
    from vaultseek.config import load_config
    from vaultseek.engine import Index
    from vaultseek.study.library import KnowledgeBase
    from vaultseek.study.storage import StudyStore, study_db_path

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the index's folder should be")
    broken = load_config(vault=study_vault, db=blocker / "index.db")  # cannot be created
    good = load_config(vault=study_vault, db=tmp_path / "index.db")
    assert broken.db is not None and good.db is not None
    store = StudyStore(study_db_path(good.db))
    attempts: list[int] = []

    def factory() -> Index:
        attempts.append(1)
        return Index(broken if len(attempts) == 1 else good, create=True)

    kb = KnowledgeBase(good, factory, store)
    kb.ingest.sync().wait(60)
    assert kb.ingest.last_error and "not-a-folder" in kb.ingest.last_error
    kb.ingest.sync().wait(60)  # the next run opens a good index and clears the report
    assert kb.ingest.last_error is None
    assert kb.status()["indexing_error"] is None and kb.status()["files"] == 2
    kb.close()
    store.close()


def test_deleting_a_symlinked_upload_removes_the_link_not_what_it_names(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> None:
    """`uploads/x.md` a symlink to a note: Delete removes the link; the note stays. A file
    reached through a folder link out of the upload folder is not an upload at all."""
    from starlette.testclient import TestClient

    uploads = study_vault / "uploads"
    uploads.mkdir()
    (uploads / "x.md").symlink_to(study_vault / "law" / "tenancy.md")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.md").write_text("# Kept\n\nA note outside the vault, reached through a folder link.\n", "utf-8")
    (uploads / "sub").symlink_to(outside, target_is_directory=True)
    note = (study_vault / "law" / "tenancy.md").read_text("utf-8")
    app = make_app(study_vault, tmp_path / "i.db", standin.url, follow_external_symlinks=True)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            known = {d["path"] for d in client.get("/api/documents").json()["items"]}
            assert {"uploads/x.md", "uploads/sub/kept.md", "law/tenancy.md"} <= known
            assert client.delete("/api/documents/uploads/x.md").status_code == 202
            assert app.notebook.kb.ingest.idle.wait(30)
            time.sleep(0.1)
            assert not os.path.lexists(uploads / "x.md")
            assert (study_vault / "law" / "tenancy.md").read_text("utf-8") == note
            refused = client.delete("/api/documents/uploads/sub/kept.md")
            assert refused.status_code == 400 and "upload folder" in refused.json()["error"]["message"], refused.text
            assert (outside / "kept.md").exists() and (uploads / "sub").is_symlink()
            rows = {d["path"]: d for d in client.get("/api/documents").json()["items"]}
            assert "uploads/x.md" not in rows and rows["law/tenancy.md"]["status"] == "indexed"
    finally:
        app.notebook.close()


def test_files_before_a_refused_one_in_the_same_upload_are_kept_and_indexed(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> None:
    """Each file of a multi-file upload is stored whole before the next one begins: when a
    later one is refused (here: too large), the earlier ones stay and are indexed."""
    from starlette.testclient import TestClient

    app = make_app(study_vault, tmp_path / "i.db", standin.url, max_upload_mb=0.01)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            response = client.post("/api/documents", data={"category": "fruit"}, files=[
                ("file", ("quinces.txt", b"Quinces ripen late in the autumn orchard and smell of honey.")),
                ("file", ("big.txt", b"x" * 20_000)),
            ])  # fmt: skip
            assert response.status_code == 413, response.text
            row = wait_indexed(client, "uploads/quinces.txt", timeout=20)
            assert row["status"] == "indexed" and row["category"] == "fruit"
            found = client.get("/api/search", params={"q": "quinces autumn orchard"}).json()["results"]
            assert found[0]["path"] == "uploads/quinces.txt"
    finally:
        app.notebook.close()
    assert not (study_vault / "uploads" / "big.txt").exists()
    assert not list((study_vault / "uploads").glob(".*.part"))


def _start_serve(vault: Path, db: Path, llm_url: str, log_path: Path) -> tuple[Any, str, Any]:
    """`vaultseek serve` as its own process on a free port, once it answers."""
    import subprocess
    import sys

    port = free_port()
    env = {**os.environ, "VAULTSEEK_LLM_URL": llm_url, "VAULTSEEK_LLM_MODEL": "standin"}
    log = open(log_path, "w+b")  # noqa: SIM115 - closed by the caller
    process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", "serve", "--vault", str(vault), "--db", str(db),
                                "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, env=env)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    wait_until_serving(process, log, lambda: bool(httpx.get(f"{url}/api/documents", timeout=2).json()["items"]),
                       "vaultseek serve", seconds=60)  # fmt: skip
    return process, url, log


def test_a_part_file_left_by_a_killed_server_is_removed_when_it_starts_again(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> None:
    import signal
    import threading

    uploads = study_vault / "uploads"
    process, url, log = _start_serve(study_vault, tmp_path / "i.db", standin.url, tmp_path / "serve1.log")
    release = threading.Event()

    def body() -> Iterator[bytes]:
        yield (b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\n'
               b"Content-Type: text/plain\r\n\r\n" + b"half a file " * 1000)  # fmt: skip
        release.wait(30)  # the rest never comes: the server is killed first
        yield b"\r\n--XyZ--\r\n"

    def send() -> None:
        try:
            httpx.post(f"{url}/api/documents", content=body(), timeout=30,
                       headers={"content-type": "multipart/form-data; boundary=XyZ"})  # fmt: skip
        except httpx.HTTPError:
            pass

    sender = threading.Thread(target=send)
    sender.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not list(uploads.glob(".*.part")):
            time.sleep(0.05)
        assert list(uploads.glob(".*.part")), "the upload never reached the disk"
        process.send_signal(signal.SIGKILL)  # as a crash or `kill -9` would
        process.wait(timeout=10)
    finally:
        release.set()
        sender.join(30)
        log.close()
    assert len(list(uploads.glob(".*.part"))) == 1  # what the killed server left
    (uploads / ".my-notes.part").write_text("not an upload's temporary file", "utf-8")
    process, url, log = _start_serve(study_vault, tmp_path / "i.db", standin.url, tmp_path / "serve2.log")
    try:
        assert sorted(p.name for p in uploads.glob(".*.part")) == [".my-notes.part"]
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def test_an_upload_in_progress_survives_another_app_starting_on_the_vault(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> None:
    first = make_app(study_vault, tmp_path / "one.db", standin.url)
    sink = first.notebook.kb.open_upload("live.txt")
    sink.write(b"still arriving")
    try:
        second = make_app(study_vault, tmp_path / "two.db", standin.url)
        second.notebook.close()
        assert sink.temp.exists()
        assert sink.commit() == "uploads/live.txt"
    finally:
        sink.abort()
        first.notebook.close()
