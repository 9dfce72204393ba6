"""The search page in real headless Chromium (Debian's ``chromium`` through Playwright) at 390
and 1280 px, on the study vault and a long note with several sections: each note once, under its
title and path, with the sections the note view answers (label, marked snippet, why it ranked);
a section opens its own passage in the side panel, the title the note's best one; no sideways
scrolling; with a reranker set, the line above the results says what it did. Screenshots go to
``docs/images/study/search-<width>.png`` (the reranked search: ``tests/artifacts/``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.browser import chromium
from tests.support.standin_llm import StandinLLM

from study_fixtures import make_app, make_study_vault
from test_ui_chat import WIDTHS, Site, no_sideways_scroll, open_page, shot

ARTIFACTS = Path(__file__).parent / "artifacts"
QUERY = "sourdough starter flour"
GUIDE = """\
---
title: Sourdough guide
---
# Sourdough guide

## Making a starter

Mix equal weights of flour and water in a jar and stir; a sourdough starter needs about a week
of daily feeds before it can raise a loaf.

## Feeding the starter

Feed the starter every morning: discard half of it, then add fresh flour and water, so the
sourdough stays lively and smells of yoghurt rather than of nail varnish.

## Baking day

Shape the loaf, let it prove overnight in the fridge, and bake it hot with steam for a crisp crust.

## Storing bread

Keep the bread cut side down on a board, or sliced in the freezer; never in the fridge.
"""
CRUMB = """\
# Crumb

An **open crumb** comes from a *well fed levain*; __rye__ makes it denser, and `hydration` is
the word bakers use. **<img src=x onerror="window.__xss=1">** is not a picture.
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    from vaultseek.web.server import BackgroundServer

    root = tmp_path_factory.mktemp("ui-search")
    vault = make_study_vault(root)
    (vault / "cooking" / "sourdough-guide.md").write_text(GUIDE, "utf-8")
    (vault / "cooking" / "crumb.md").write_text(CRUMB, "utf-8")
    with StandinLLM() as standin:
        app = make_app(vault, root / "index.db", standin.url)
        try:
            with BackgroundServer(app) as server:
                yield Site(server.url, standin, vault)
        finally:
            app.notebook.close()


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_search_shows_notes_with_their_sections(browser: Any, site: Site, width: str) -> None:
    answer = httpx.get(f"{site.url}/api/search", params={"q": QUERY, "view": "notes", "k": "20"}, timeout=30).json()
    guide = next(note for note in answer["results"] if note["path"] == "cooking/sourdough-guide.md")
    assert len(guide["sections"]) >= 2  # the premise: a note the answer gives several sections of

    page = open_page(browser, site, width, "#search")
    page.locator("input[name=q]").fill(QUERY)
    page.keyboard.press("Enter")
    notes = page.locator(".search-results .note-result")
    notes.first.wait_for()
    shown = notes.locator(".result-folder").all_inner_texts()
    assert shown == [note["path"] for note in answer["results"]]  # each note once, in the answer's order
    card = notes.filter(has=page.locator(".result-folder", has_text="cooking/sourdough-guide.md"))
    assert card.locator(".note-title").inner_text() == "Sourdough guide"
    sections = card.locator(".note-sections .result")
    assert sections.locator(".badge").all_inner_texts() == [s["label"] for s in guide["sections"]]
    assert sections.first.locator("mark").count() >= 1  # the query's words marked in the snippet
    why = sections.first.locator(".result-why")
    assert re.search(r"(Strong|Likely|Weak) match", why.inner_text()), why.inner_text()
    assert not re.search(r"\d\.\d", why.inner_text())  # no raw scores in the main view
    assert "score " in why.get_attribute("title") and "words #" in why.get_attribute("title")
    meta = page.locator(".search-meta").inner_text()
    assert meta.startswith(f"{len(answer['results'])} notes in ") and "null" not in meta, meta
    no_sideways_scroll(page)
    shot(page, f"search-{WIDTHS[width][0]}")

    # A section opens its own passage; the title opens the note's best one.
    sections.nth(1).click()
    cited = page.locator("#panel .passage.cited")
    cited.wait_for()
    assert cited.get_attribute("data-chunk-id") == str(guide["sections"][1]["chunk_id"])
    page.keyboard.press("Escape")
    card.locator(".note-title").click()
    page.locator(f'#panel .passage.cited[data-chunk-id="{guide["sections"][0]["chunk_id"]}"]').wait_for()
    page.keyboard.press("Escape")
    assert page.errors == [] and page.outside == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_query_nothing_answers_says_so_above_the_nearest_notes(browser: Any, site: Site, width: str) -> None:
    """A made-up query gets the nearest notes under a notice that says they do not answer it
    (the answer's ``no_match``), not the same list as an answer with the notice tucked into the
    line of timings; a query the vault answers gets no such notice."""
    made_up = "xylophonic zebra quasar"
    answer = httpx.get(f"{site.url}/api/search", params={"q": made_up, "view": "notes", "k": "20"}, timeout=30).json()
    assert answer["no_match"] and answer["results"]  # the premise: nearest notes, none of them a match

    page = open_page(browser, site, width, "#search")
    page.locator("input[name=q]").fill(made_up)
    page.keyboard.press("Enter")
    notice = page.locator(".search-no-match")
    notice.wait_for()
    assert notice.get_attribute("role") == "status"
    assert "Nothing in your notes answers this closely" in notice.inner_text()
    first = page.locator(".search-results > li").first
    assert first.evaluate("(li) => li.classList.contains('search-no-match')")  # above the notes, not after
    assert page.locator(".search-results .note-result").count() == len(answer["results"])
    assert "nothing in the index matches" not in page.locator(".search-meta").inner_text()  # said once
    no_sideways_scroll(page)
    shot(page, f"search-no-match-{WIDTHS[width][0]}")

    page.locator("input[name=q]").fill(QUERY)
    page.keyboard.press("Enter")
    notice.wait_for(state="detached", timeout=10_000)  # the answered query's notes come alone
    assert page.locator(".search-results .note-title").first.inner_text() == "Sourdough guide"
    assert page.errors == [] and page.outside == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_words_searched_for_a_mistyped_one_are_marked(browser: Any, site: Site, width: str) -> None:
    """A word no note holds is searched as the vault's nearest (a typo's correction): the line
    above the results says so, and the snippets mark the word searched, not only the typed ones."""
    typed = "sourdough discrad"
    answer = httpx.get(f"{site.url}/api/search", params={"q": typed, "view": "notes"}, timeout=30).json()
    assert answer["alternatives"] == {"discrad": ["discard"]}  # the premise: the typo was corrected

    page = open_page(browser, site, width, "#search")
    page.locator("input[name=q]").fill(typed)
    page.keyboard.press("Enter")
    page.locator(".search-results .note-result").first.wait_for()
    assert 'no chunk has "discrad"' in page.locator(".search-meta").inner_text()
    marked = [word.lower() for word in page.locator(".search-results .result-snippet mark").all_inner_texts()]
    assert "discard" in marked and "sourdough" in marked, marked
    no_sideways_scroll(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"search-corrected-{WIDTHS[width][0]}.png"))
    assert page.errors == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_snippets_show_emphasis_not_markdown_and_never_markup(browser: Any, site: Site, width: str) -> None:
    page = open_page(browser, site, width, "#search/open%20crumb%20rye%20hydration")
    snippet = page.locator(".result-snippet", has=page.locator("strong")).first
    snippet.wait_for()
    text = snippet.inner_text()
    assert "**" not in text and "__" not in text and "`" not in text, text
    assert snippet.locator("strong").all_inner_texts()[:2] == ["open crumb", "rye"]
    assert snippet.locator("em").first.inner_text() == "well fed levain"
    assert snippet.locator("code").inner_text() == "hydration"
    assert snippet.locator("em mark, strong mark, mark").count() >= 2  # the query's words still marked
    assert snippet.locator("img").count() == 0 and page.evaluate("window.__xss") is None
    no_sideways_scroll(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"search-markdown-{WIDTHS[width][0]}.png"))
    assert page.errors == []


@pytest.mark.parametrize("route", ["search", "dashboard"])
def test_every_section_of_the_nav_is_on_screen_on_a_phone(browser: Any, site: Site, route: str) -> None:
    page = open_page(browser, site, "phone", f"#{route}")
    links = page.locator(".app-nav a")
    links.first.wait_for()
    width = page.evaluate("window.innerWidth")
    for i in range(links.count()):
        box = links.nth(i).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (links.nth(i).inner_text(), box)
    assert page.locator('.app-nav a[aria-current="page"]').inner_text().lower().startswith(route[:4])
    # What sticks below the header (the chosen-files bar of the knowledge base) knows its height.
    bottom = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--header-bottom')")
    height = page.evaluate("document.querySelector('.app-header').offsetHeight")
    assert height > 52 and bottom == f"{height}px", (bottom, height)
    no_sideways_scroll(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"nav-{route}-390.png"))
    assert page.errors == []


def test_every_section_of_the_page_is_a_button_a_keyboard_reaches(browser: Any, site: Site) -> None:
    page = open_page(browser, site, "desktop", f"#search/{QUERY.replace(' ', '%20')}")
    page.locator(".search-results .note-result").first.wait_for()
    buttons = page.locator(".search-results button")
    count = buttons.count()
    titles, sections = page.locator(".note-title").count(), page.locator(".note-sections .result").count()
    assert count == titles + sections and sections > titles
    assert all(buttons.nth(i).get_attribute("type") == "button" for i in range(count))
    assert page.errors == []



@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_search_says_what_the_reranker_did(browser: Any, tmp_path_factory: pytest.TempPathFactory, width: str) -> None:
    from tests.support.standin_reranker import StandinReranker

    from vaultseek.web.server import BackgroundServer

    root = tmp_path_factory.mktemp("ui-rerank")
    vault = make_study_vault(root)
    with StandinLLM() as standin, StandinReranker() as reranker:
        app = make_app(vault, root / "index.db", standin.url, rerank="llama:judge", rerank_url=reranker.url)
        try:
            with BackgroundServer(app) as server:
                page = open_page(browser, Site(server.url, standin, vault), width, "#search")
                page.locator("input[name=q]").fill(QUERY)
                page.keyboard.press("Enter")
                page.locator(".search-results .note-result").first.wait_for()
                meta = page.locator(".search-meta").inner_text()
                assert "reranked by llama:judge in " in meta and "null" not in meta and "undefined" not in meta, meta
                assert reranker.requests  # the page's search really went through the reranker
                no_sideways_scroll(page)
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / f"search-reranked-{WIDTHS[width][0]}.png"))
        finally:
            app.notebook.close()
