"""The search page's query syntax in real headless Chromium (Debian's ``chromium`` through
Playwright) at 1280 px and at a 390 px phone width: before a search it lists the syntax; a
query with operators says what was read under the note count and marks the searched words, not
the operators; a bad operator is an error with its hint. No horizontal scroll at 390 px.
Screenshots go to ``tests/artifacts/``, and those docs/study.md shows to ``docs/images/study/``."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from tests.support.browser import chromium
from tests.support.standin_llm import StandinLLM

from study_fixtures import make_app

ARTIFACTS = Path(__file__).parent / "artifacts"
SHOTS = Path(__file__).resolve().parent.parent / "docs" / "images" / "study"
NOTES = {
    "work/sync.md": "---\ntags: [work]\n---\n# Sync setup\n\nWe sync the vault to the phone with the Android app every night.\n",
    "work/phones.md": "---\ntags: [work]\n---\n# Phones\n\nThe iPhone syncs through the cloud; the Android phone over the local network.\n",
    "daily/today.md": "# Today\n\nMeeting about the sync schedule with the whole team.\n",
    "home/garden.md": "# Garden\n\nWater the tomatoes early, before the sun is high.\n",
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from vaultseek.web.server import BackgroundServer

    root = tmp_path_factory.mktemp("ui-search-syntax")
    vault = root / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(textwrap.dedent(text), "utf-8")
    with StandinLLM() as standin:
        app = make_app(vault, root / "index.db", standin.url)
        try:
            with BackgroundServer(app) as server:
                yield server.url
        finally:
            app.notebook.close()


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def open_search(browser: Any, url: str, width: int, query: str = "") -> Any:
    page = browser.new_page(viewport={"width": width, "height": 900 if width > 500 else 844})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    page.goto(url + "/#search" + (f"/{quote(query)}" if query else ""))
    return page


def shot(page: Any, name: str, *, docs: bool = False) -> None:
    folder = SHOTS if docs else ARTIFACTS
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=not docs)


def no_sideways_scroll(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"))


@pytest.mark.parametrize("width", [1280, 390])
def test_the_page_shows_the_syntax_and_what_a_query_asked_for(browser: Any, site: str, width: int) -> None:
    page = open_search(browser, site, width)
    hint = page.locator(".search-syntax")
    expect(hint).to_be_visible()
    assert '"exact phrase"' in hint.inner_text() and "-word" in hint.inner_text() and "tag:x" in hint.inner_text()
    assert no_sideways_scroll(page)
    shot(page, f"search-syntax-{width}", docs=width == 390)

    page.locator("input[name=q]").fill("sync -android tag:work")
    page.locator("input[name=q]").press("Enter")
    parsed = page.locator(".search-parsed")
    expect(parsed).to_have_text('Searched: sync · excluding notes with "android" · only tag:work')
    expect(page.locator(".search-results .empty")).to_contain_text("Nothing found")  # both work notes hold "android"
    assert "no result outside the 2 notes" in page.locator(".search-meta").inner_text()

    page.locator("input[name=q]").fill('"whole team" sync')
    page.locator("input[name=q]").press("Enter")
    expect(page.locator(".search-parsed")).to_have_text('Searched: whole team sync · must contain "whole team"')
    expect(page.locator(".search-results .note-result .result-folder")).to_have_text(["daily/today.md"])
    marked = page.locator(".search-results mark").all_inner_texts()
    assert {m.lower() for m in marked} >= {"whole", "team", "sync"}
    assert no_sideways_scroll(page)
    shot(page, f"search-parsed-{width}", docs=width == 1280)
    assert page.errors == []


def test_a_bad_operator_is_an_error_with_its_hint(browser: Any, site: str) -> None:
    page = open_search(browser, site, 390, "sync kind:zzz")
    alert = page.locator(".search-results [role=alert]")
    expect(alert).to_contain_text("unknown kind 'zzz'")
    assert "use some of note, pdf" in alert.inner_text()
    assert no_sideways_scroll(page)
    shot(page, "search-error-390")
    assert page.errors == []


def test_a_query_with_a_percent_sign_is_searched_and_the_app_opens_again(browser: Any, site: str) -> None:
    """The app remembers its section as the decoded hash (``search/20% off``) and decoded it
    again on the next visit: ``decodeURIComponent`` threw on the bare ``%`` and the app opened
    on nothing, every time, until the browser's storage was cleared."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(site + "/#search/" + quote("sync 100% android"))
    expect(page.locator(".search-results .note-result").first).to_be_visible()
    page.goto(site + "/")  # no section in the address: the remembered one opens
    expect(page.locator("input[name=q]")).to_have_value("sync 100% android")
    expect(page.locator(".search-results .note-result").first).to_be_visible()
    page.goto(site + "/#search/100%")  # a hand-written address with a bare % is read as typed
    expect(page.locator("input[name=q]")).to_have_value("100%")
    context.close()
    assert errors == []
