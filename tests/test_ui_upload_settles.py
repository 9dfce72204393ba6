"""An upload that is indexed before the browser reads the upload's answer still ends as
"indexed" on the knowledge-base page: the "indexed" event goes by while the page does not yet
know the file's stored name, so the page asks for the file's state once it does. Real
Chromium, a real server and index; the upload's answer is held back (Playwright's request
routing) until the server reports the file indexed, which makes the order certain."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.browser import chromium
from tests.support.standin_llm import StandinLLM

from study_fixtures import make_app, make_study_vault

NAME = "late answer.txt"
STORED = f"uploads/{NAME}"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    from vaultseek.web.server import BackgroundServer

    vault = make_study_vault(tmp_path)
    with StandinLLM() as standin:
        app = make_app(vault, tmp_path / "index.db", standin.url)
        try:
            with BackgroundServer(app) as server:
                yield server.url
        finally:
            app.notebook.close()


def indexed(url: str) -> bool:
    rows = httpx.get(f"{url}/api/documents", params={"q": STORED}, timeout=10).json()["items"]
    return any(row["path"] == STORED and row["status"] == "indexed" for row in rows)


def test_an_upload_indexed_before_its_answer_arrives_shows_indexed(site: str) -> None:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(site + "/#kb")
        page.locator("#dropzone").wait_for()

        def hold_back(route: Any) -> None:
            answer = route.fetch()  # the server stores the file and queues it
            deadline = time.monotonic() + 60
            while not indexed(site) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert indexed(site)
            time.sleep(0.5)  # the "indexed" event reaches the page before the answer does
            route.fulfill(response=answer)

        page.route("**/api/documents", lambda route: hold_back(route) if route.request.method == "POST" else route.fallback())
        transfer = page.evaluate_handle(
            "([name, text]) => { const dt = new DataTransfer(); dt.items.add(new File([text], name, {type: 'text/plain'})); return dt; }",
            [NAME, "Cormorants dry their wings on the jetty after each dive."],
        )
        page.dispatch_event("#dropzone", "drop", {"dataTransfer": transfer})
        state = page.locator(".kb-upload-state").filter(has_text=f"{STORED}: indexed")
        state.wait_for(timeout=30_000)
        assert "indexing" not in state.inner_text()
