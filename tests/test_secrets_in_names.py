"""Secrets in file and folder names never come back out, and the files stay reachable.

Every planted secret is a fake from ``fake_secrets`` (built at run time, never a literal here).
Each surface is driven as a user meets it: the CLI in a child process, MCP through the SDK's
client, HTTP through the app, the hook with JSON on stdin, intake from a pasted snippet.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from conftest import mcp_server, run_cli
from fake_secrets import FakeSecret, fake_secrets
from study_fixtures import make_app, make_study_vault
from vaultseek import open_index
from vaultseek.index import credentials, names

BODY = "The walrus migration runbook number {n}: drain the queue, then move the herd."
FOLDER_KINDS = ("openai-api-key", "github-pat", "aws-access-key-id", "stripe-api-key", "slack-token",
                "password-assignment", "google-api-key", "huggingface-token")  # fmt: skip


def _nameable(sample: FakeSecret) -> bool:
    """A sample whose line can be a file name as it stands (no separator, not too long)."""
    name = sample.line + ".md"
    return "/" not in name and "\n" not in name and "\0" not in name and len(name.encode()) <= 200


def named_samples() -> list[FakeSecret]:
    return [s for s in fake_secrets() if _nameable(s)]


def plant(vault: Path) -> tuple[list[str], list[str]]:
    """Notes named after secrets (one per nameable sample) and notes inside folders named after
    secrets; returns (every secret planted, the real vault-relative paths)."""
    secrets, paths = [], []
    for sample in named_samples():
        paths.append(f"work/{sample.line}.md")
        secrets.append(sample.secret)
    folders = {s.pattern: s for s in reversed(named_samples())}  # the first sample of each kind
    for n, kind in enumerate(FOLDER_KINDS):
        paths.append(f"ops/{folders[kind].line}/walrus {n}.md")
        secrets.append(folders[kind].secret)
    for n, rel in enumerate(paths):
        target = vault / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(BODY.format(n=n) + "\n", "utf-8")
    return secrets, paths


def leaked(text: str, secrets: list[str]) -> list[str]:
    return [s for s in secrets if s in text]


@pytest.fixture
def planted(vault: Path) -> tuple[Path, list[str], list[str]]:
    secrets, paths = plant(vault)
    assert len(paths) >= 38  # 30 kinds in names and 8 in folder names, as the report planted
    return vault, secrets, paths


def test_search_on_the_cli_shows_names_redacted_and_the_chunk_id_leads_back(planted: Any, tmp_path: Path) -> None:
    vault, secrets, paths = planted
    db = str(tmp_path / "index.db")
    indexed = run_cli("index", "--vault", str(vault), "--db", db)
    assert indexed.returncode == 0, indexed.stderr
    assert leaked(indexed.stdout + indexed.stderr, secrets) == []
    text = run_cli("search", "walrus migration runbook", "-k", "100", "--vault", str(vault), "--db", db)
    assert text.returncode == 0, text.stderr
    assert leaked(text.stdout, secrets) == [] and "[REDACTED:" in text.stdout
    found = run_cli("search", "walrus migration runbook", "-k", "100", "--json", "--vault", str(vault), "--db", db)
    assert leaked(found.stdout, secrets) == []
    notes = json.loads(found.stdout)["results"]
    assert len(notes) == len(paths)
    results = [section for note in notes for section in note["sections"]]
    shown = {r["path"] for r in results}
    assert all("[REDACTED:" in p for p in shown) and shown == {note["path"] for note in notes}
    named = [r for r in results if r["path"].startswith("work/")]  # their titles come from their names
    assert named and all("[REDACTED:" in r["heading_context"] for r in named)
    assert all("[REDACTED:" in note["title"] for note in notes if note["path"].startswith("work/"))
    # The link back: a result's chunk id opens its chunk, and a shown path opens its note.
    with open_index(vault, db=tmp_path / "index.db") as index:
        for result in results:
            chunk = index.get_chunk(result["chunk_id"])
            assert chunk.path == result["path"] and chunk.text.startswith("The walrus migration runbook")
        unique = [p for p in shown if sum(1 for q in paths if names.shown_path(q) == p) == 1]
        assert unique
        for path in unique:
            assert index.get_note(path)[0].text.startswith("The walrus")
            assert index.related(path, k=3).path == path
            assert index.links(path).path == path
            assert index.search("walrus", filters={"paths": [path]}, k=5).results[0].path == path


def test_nothing_derived_from_a_name_is_stored_with_its_secret(planted: Any, tmp_path: Path) -> None:
    vault, secrets, paths = planted
    with open_index(vault, db=tmp_path / "index.db", create=True) as index:
        report = index.sync()
        derived = [
            *(row[0] for row in index.conn.execute("SELECT heading_context || section || text FROM chunks")),
            *(row[0] or "" for row in index.conn.execute("SELECT title FROM files")),
            *(row[0] for row in index.conn.execute("SELECT name FROM file_names")),
        ]
        assert leaked("\n".join(derived), secrets) == []
        assert report.added == len(paths) and sum(report.redactions.values()) >= len(paths)  # names counted
        # The real path is kept: it is how the index finds the file again. An edit is re-read
        # and a deletion noticed under it.
        first = vault / paths[0]
        first.write_text("The narwhal census replaced the walrus runbook.\n", "utf-8")
        (vault / paths[1]).unlink()
        again = index.sync()
        assert (again.updated, again.deleted) == (1, 1)
        hit = index.search("narwhal census", mode="bm25").results[0]
        assert hit.path == names.shown_path(paths[0]) != paths[0]
        assert len(index.files()) == len(paths) - 1


def test_progress_and_skipped_files_show_names_redacted(planted: Any, tmp_path: Path) -> None:
    """What `vaultseek index` prints while it works and what it says it skipped come from the
    progress callback and the report: neither carries a secret from a name."""
    vault, secrets, paths = planted
    sample = named_samples()[0]
    (vault / f"{sample.line}.pdf").write_bytes(b"%PDF-1.7 not really a PDF")  # skipped as damaged
    details: list[str] = []
    with open_index(vault, db=tmp_path / "index.db", create=True) as index:
        report = index.sync(progress=lambda p: details.append(p.path))
        (vault / paths[2]).unlink()
        index.sync(progress=lambda p: details.append(p.path))
    assert any("[REDACTED:" in d for d in details)  # the paths are there, redacted
    assert leaked("\n".join(details), secrets) == []
    assert [s.path for s in report.skipped] == [names.shown_path(f"{sample.line}.pdf")]
    assert leaked(report.skipped[0].path, secrets) == [] and "[REDACTED:" in report.skipped[0].path


def test_the_hook_shows_names_redacted_and_keeps_no_secret_of_the_prompt(planted: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    vault, secrets, _paths = planted
    monkeypatch.setenv("VAULTSEEK_HOOK_TIMEOUT", "30")  # a cold hook on a loaded machine
    with open_index(vault, create=True) as index:
        index.sync()
    asked = json.dumps({"session_id": "names-0", "hook_event_name": "UserPromptSubmit",
                        "prompt": "walrus migration runbook number 3: drain the queue, then move the herd"})  # fmt: skip
    result = run_cli("hook", "user-prompt-submit", "--vault", str(vault), stdin=asked)
    assert result.returncode == 0 and result.stdout.startswith("## Relevant Memory Context")
    assert "[REDACTED:" in result.stdout and leaked(result.stdout, secrets) == []
    # The prompt the session keeps for its PostToolUse events is scrubbed before it is written.
    key = fake_secrets()[1].secret  # an OpenAI key
    prompt = f"deploy the walrus migration with my key {key} and tell me what breaks"
    event = json.dumps({"session_id": "names-1", "hook_event_name": "UserPromptSubmit", "prompt": prompt})
    assert run_cli("hook", "user-prompt-submit", "--vault", str(vault), stdin=event).returncode == 0
    session = hashlib.sha256(b"names-1").hexdigest()[:24]
    kept = Path(os.environ["XDG_STATE_HOME"]) / "vaultseek" / "sessions" / f"{session}.json"
    remembered = json.loads(kept.read_text("utf-8"))["prompt"]
    assert key not in remembered
    assert remembered == "deploy the walrus migration with my key [REDACTED:openai-api-key] and tell me what breaks"


def test_mcp_shows_names_redacted_and_opens_them(planted: Any) -> None:
    vault, secrets, _paths = planted
    with open_index(vault, create=True) as index:
        index.sync()

    async def calls() -> list[Any]:
        from mcp import Client

        params = mcp_server(vault)
        async with Client(params) as client:
            found = await client.call_tool("search", {"query": "walrus migration runbook", "k": 100})
            first = found.structured_content["results"][0]  # a note, its best section inside
            chunk = await client.call_tool("get_chunk", {"chunk_id": first["sections"][0]["chunk_id"]})
            note = await client.call_tool("get_note", {"path": first["path"]})
            related = await client.call_tool("related", {"note": first["path"]})
            return [found, chunk, note, related]

    answers = asyncio.run(calls())
    dumped = "\n".join(json.dumps(a.structured_content) + str(a.content) for a in answers)
    assert leaked(dumped, secrets) == []
    found, chunk, note, _related = answers
    first = found.structured_content["results"][0]
    assert "[REDACTED:" in first["path"]
    assert not chunk.is_error and chunk.structured_content["path"] == first["path"]
    assert not note.is_error and "walrus" in json.dumps(note.structured_content)


def test_http_search_and_file_list_show_names_redacted(tmp_path: Path) -> None:
    from starlette.testclient import TestClient
    from tests.support.standin_llm import StandinLLM

    study = make_study_vault(tmp_path)
    secrets, paths = plant(study)
    with StandinLLM() as llm:
        app = make_app(study, tmp_path / "index.db", llm.url)
        try:
            with TestClient(app, base_url="http://127.0.0.1") as client:
                listing = client.get("/api/documents")
                assert listing.status_code == 200
                assert leaked(listing.text, secrets) == [] and "[REDACTED:" in listing.text
                searched = client.get("/api/search", params={"q": "walrus migration runbook", "k": 100})
                assert searched.status_code == 200 and leaked(searched.text, secrets) == []
                results = searched.json()["results"]
                assert {names.shown_path(p) for p in paths} <= {r["path"] for r in results}
                # A citation opens by the path the results show.
                one = next(r["path"] for r in results if sum(names.shown_path(p) == r["path"] for p in paths) == 1)
                chunks = client.get(f"/api/documents/{quote(one, safe='/')}/chunks")
                assert chunks.status_code == 200, chunks.text
                assert chunks.json()["chunks"][0]["text"].startswith("The walrus")
        finally:
            app.notebook.close()


def test_every_credential_in_an_upload_name_is_cleaned_to_a_stable_name() -> None:
    from vaultseek.config import Config
    from vaultseek.study.uploads import clean_upload_name

    config = Config()
    # Names as a file can have them: no leading space or dot, room for the marker.
    samples = [s for s in named_samples() if len(s.line.encode()) < 150 and s.line == s.line.strip(" .")]
    assert len({s.pattern for s in samples}) >= 25
    for sample in samples:
        clean = clean_upload_name(f"{sample.line}.pdf", config)
        assert sample.secret not in clean and "[REDACTED-" in clean and clean.endswith(".pdf")
        assert names.shown_path(clean) == clean  # nothing left that reads as a credential


def test_an_upload_named_after_a_key_is_stored_under_a_clean_name_and_deletes(tmp_path: Path) -> None:
    from starlette.testclient import TestClient
    from tests.support.standin_llm import StandinLLM

    study = make_study_vault(tmp_path)
    sample = next(s for s in named_samples() if s.pattern == "openai-api-key")
    with StandinLLM() as llm:
        app = make_app(study, tmp_path / "index.db", llm.url)
        try:
            with TestClient(app, base_url="http://127.0.0.1") as client:
                sent = client.post("/api/documents", files={"file": (f"{sample.line}.txt", b"Walrus tusks grow all their lives.")})
                assert sent.status_code == 201, sent.text
                stored = sent.json()["uploaded"][0]["path"]
                assert leaked(sent.text, [sample.secret]) == [] and "[REDACTED-openai-api-key]" in stored
                on_disk = [p.name for p in (study / "uploads").iterdir()]
                assert on_disk == [stored.removeprefix("uploads/")]  # the disk holds the clean name only
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    rows = client.get("/api/documents", params={"q": "REDACTED"}).json()["items"]
                    if rows and rows[0]["status"] == "indexed":
                        break
                    time.sleep(0.05)
                assert [r["path"] for r in rows] == [stored] and rows[0]["deletable"] is True
                # The name the list shows is the name Delete takes.
                assert client.delete(f"/api/documents/{quote(stored, safe='/')}").status_code == 202
                while time.monotonic() < deadline and (study / stored).exists():
                    time.sleep(0.05)
                assert not (study / stored).exists()
        finally:
            app.notebook.close()


def test_intake_of_a_paste_opening_with_a_key_names_no_piece_of_it(vault: Path) -> None:
    (vault / "cooking").mkdir()
    (vault / "cooking" / "bread.md").write_text("# Bread\n\nBake the dough in a hot oven.\n", "utf-8")
    key = fake_secrets()[1].secret
    assert key.startswith("sk-proj-")
    paste = f"OPENAI_API_KEY={key}\n\nThe deploy needs this key in the environment before the build.\n"
    result = run_cli("intake", "-", "--json", "--domain", "cooking", "--vault", str(vault), stdin=paste)
    assert result.returncode == 0, result.stderr
    item = json.loads(result.stdout)["items"][0]
    assert item["destination"] == "cooking/OPENAI-API-KEY-REDACTED-openai-api-key.md"
    assert item["title"] == "OPENAI_API_KEY=[REDACTED:openai-api-key]"
    pieces = {key[i:i + 8] for i in range(len(key) - 7)}
    written = [p.relative_to(vault).as_posix() for p in vault.rglob("*")]
    assert [p for p in written if any(piece in p for piece in pieces)] == []
    state = "\n".join(p.read_text("utf-8") for p in (vault / ".vaultseek").rglob("*.json"))
    assert not any(piece in state for piece in pieces)  # the intake records name it the same way
    note = (vault / item["destination"]).read_text("utf-8")
    assert note.startswith("---\n") and "title: OPENAI_API_KEY=[REDACTED:openai-api-key]" in note


def test_a_document_in_the_inbox_named_after_a_key_is_filed_under_a_clean_name(vault: Path) -> None:
    (vault / "cooking").mkdir()
    (vault / "cooking" / "bread.md").write_text("# Bread\n\nBake the dough in a hot oven.\n", "utf-8")
    sample = next(s for s in named_samples() if s.pattern == "github-pat")
    inbox = vault / "_intake" / "inbox"
    inbox.mkdir(parents=True)
    item = inbox / f"{sample.line}.txt"
    item.write_text("Knead the dough and bake the bread in a hot oven.\n", "utf-8")
    result = run_cli("intake", str(item), "--json", "--domain", "cooking", "--vault", str(vault))
    assert result.returncode == 0, result.stderr
    assert sample.secret not in result.stdout
    written = [p.relative_to(vault).as_posix() for p in vault.rglob("*")]
    assert [p for p in written if sample.secret in p] == []
    assert any("REDACTED-github-pat" in p for p in written)


def test_the_cheap_name_test_lets_every_scrubber_hint_through() -> None:
    """``names`` decides without the scrubber whether a name could hold a secret: its hints
    must cover the scrubber's, or a name would be shown unscrubbed."""
    assert set(credentials._TEXT_HINTS) <= set(names.TEXT_HINTS)
    assert set(credentials._LOWER_HINTS) <= set(names.LOWER_HINTS)
    for sample in fake_secrets():
        for text in (sample.line, sample.secret):
            if credentials.scrub(text).counts:
                assert names._may_hold_secret(text), sample.pattern
    assert names.shown_path("cooking/Sourdough bread.md") == "cooking/Sourdough bread.md"
