"""The knowledge-base page in real headless Chromium (Debian's ``chromium`` through Playwright)
at 1280 px and at a 390 px phone width, on a real index of a few hundred files: it renders a
page of rows, pages, searches, sorts and filters by folder; the checkboxes choose the chat's
sources (``vaultseek.chat.scope`` in localStorage) with a count and a clear button; an upload
of a name already there asks (keep both), a copy of a file's bytes is said, not stored; files
are re-filed and deleted with a confirmation; hostile file names, titles and categories stay
text. No horizontal scroll at 390 px. Screenshots go to ``tests/artifacts/``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.browser import chromium
from tests.support.standin_llm import StandinLLM

from study_fixtures import make_app
from test_library_paging import FILES, _write_vault
from vaultseek.reports import NO_TEXT

ARTIFACTS = Path(__file__).parent / "artifacts"
HOSTILE_NAME = "<img src=x onerror=window.__xss=1>.md"
HOSTILE_TITLE = "<script>window.__xss=2</script> Title"
HOSTILE_CATEGORY = "<b onmouseover=window.__xss=3>cat</b>"
TOTAL = FILES + 7  # the paging vault, the hostile note and one upload


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    import httpx

    from vaultseek.web.server import BackgroundServer

    root = tmp_path_factory.mktemp("ui-library")
    _write_vault(root)
    vault = root / "vault"
    (vault / "uploads").mkdir()
    (vault / "uploads" / HOSTILE_NAME).write_text(f"---\ntitle: {json.dumps(HOSTILE_TITLE)}\n---\n# X\n\nHostile words.\n", "utf-8")
    (vault / "uploads" / "field notes.txt").write_text("Herons stand still in the shallow water of the lake.\n", "utf-8")
    with StandinLLM() as standin:
        app = make_app(vault, root / "index.db", standin.url, ocr_languages="zzz", max_file_mb=0.1)
        try:
            with BackgroundServer(app) as server:
                answer = httpx.put(f"{server.url}/api/documents/uploads/{HOSTILE_NAME}/category",
                                   json={"category": HOSTILE_CATEGORY}, timeout=10)  # fmt: skip
                assert answer.status_code == 200, answer.text
                yield server.url, vault
        finally:
            app.notebook.close()


def expect(locator: Any) -> Any:
    """Playwright's auto-retrying assertions (they poll without eval, which the CSP forbids)."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def open_page(browser: Any, url: str, width: int) -> Any:
    page = browser.new_page(viewport={"width": width, "height": 900 if width > 500 else 844})
    page.on("dialog", lambda dialog: dialog.accept())
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    page.goto(url + "/#kb")
    page.locator(".kb-row").nth(49).wait_for(timeout=30_000)
    return page


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def no_sideways_scroll(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"))


def paths_shown(page: Any) -> list[str]:
    return list(page.eval_on_selector_all(".kb-row", "rows => rows.map(r => r.dataset.path)"))


@pytest.mark.parametrize("width", [1280, 390])
def test_the_page_renders_pages_searches_and_sorts(browser: Any, site: tuple[str, Path], width: int, tmp_path: Path) -> None:
    url, _vault = site
    page = open_page(browser, url, width)
    assert page.locator(".kb-row").count() == 50
    assert page.locator(".kb-total").inner_text() == f"{TOTAL} files"
    assert page.locator(".kb-range").inner_text() == f"1–50 of {TOTAL}"
    assert no_sideways_scroll(page)
    shot(page, f"kb-{width}")
    # The status of each file says what is true, with the reason.
    failed = page.locator('.kb-row[data-path="Scans/broken.pdf"]')
    assert failed.locator(".status-failed").inner_text() == "failed"
    assert "PDF" in failed.locator(".kb-reason").inner_text()
    # A name never breaks into pieces of a few letters: its box is as wide as its longest word.
    widths = page.eval_on_selector_all(".kb-name", "names => names.map(n => n.getBoundingClientRect().width)")
    assert min(widths) > 60
    # Paging.
    first = paths_shown(page)
    page.get_by_role("button", name="Next").click()
    page.locator(".kb-range").filter(has_text=f"51–100 of {TOTAL}").wait_for()
    second = paths_shown(page)
    assert len(second) == 50 and not set(first) & set(second)
    blank = page.locator('.kb-row[data-path="Scans/slides.docx"]')  # read, but nothing in it to search
    assert blank.locator(".status-indexed").inner_text() == "indexed"
    assert blank.locator(".kb-reason").inner_text() == NO_TEXT
    blank.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / f"kb-no-text-{width}.png"))  # looked at, not published
    page.get_by_role("button", name="Last page").click()
    page.locator(".kb-range").filter(has_text=f"of {TOTAL}").filter(has_text=f"{TOTAL - TOTAL % 50 + 1}–").wait_for()
    assert page.locator(".kb-row").count() == TOTAL % 50
    # Search: the list narrows to names and titles that match.
    page.fill("input[name=q]", "photosynthesis")
    page.locator(".kb-total").filter(has_text="1 file matches").wait_for()
    assert paths_shown(page) == ["Study/biology/Photosynthesis lecture.md"]
    page.fill("input[name=q]", "")
    page.locator(".kb-total").filter(has_text=f"{TOTAL} files").wait_for()
    # Sorting by size, largest first (the select works at every width).
    page.select_option("select[name=sort]", "size")
    page.locator(".kb-order").click()
    page.locator(".kb-order").filter(has_text="Z–A").wait_for()
    expect(page.locator(".kb-row").first).to_have_attribute("data-path", "Archive/huge.md")
    assert no_sideways_scroll(page)
    page.select_option("select[name=sort]", "path")
    page.locator(".kb-order").click()
    assert page.errors == []
    page.close()


def test_the_tree_filters_by_folder_category_and_status(browser: Any, site: tuple[str, Path]) -> None:
    url, _vault = site
    page = open_page(browser, url, 1280)
    tree = page.locator(".kb-tree")
    tree.get_by_role("button", name="Show the folders in Study").click()
    tree.locator('button[data-filter="folder"][data-value="Study/biology"]').click()
    page.locator(".kb-total").filter(has_text="files match").wait_for()
    assert all(p.startswith("Study/biology/") for p in paths_shown(page))
    assert page.locator(".kb-active-filters .chip").inner_text().startswith("folder: Study/biology")
    page.get_by_role("button", name="Remove the filter folder: Study/biology").click()
    tree.locator('button[data-filter="status"][data-value="ocr_pending"]').click()
    expect(page.locator(".kb-row")).to_have_count(1)
    row = page.locator(".kb-row")
    assert row.get_attribute("data-path") == "Scans/receipt.pdf"
    assert row.locator(".badge").inner_text() == "waiting for OCR" and "zzz" in row.locator(".kb-reason").inner_text()
    tree.locator('button[data-filter="all"]').click()
    page.locator(".kb-total").filter(has_text=f"{TOTAL} files").wait_for()
    tree.locator('button[data-filter="category"]').first.click()
    expect(page.locator(".kb-row")).to_have_count(1)
    assert page.locator(".kb-row").get_attribute("data-path") == f"uploads/{HOSTILE_NAME}"
    page.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_checkboxes_choose_the_chat_scope(browser: Any, site: tuple[str, Path], width: int) -> None:
    url, _vault = site
    page = open_page(browser, url, width)
    page.evaluate("localStorage.removeItem('vaultseek.chat.scope')")
    page.reload()
    page.locator(".kb-row").nth(49).wait_for()
    first, second = paths_shown(page)[:2]
    page.get_by_role("checkbox", name=f"Use {first} in chat").check()
    page.get_by_role("checkbox", name=f"Use {second} in chat").check()
    assert page.locator(".kb-scope-count").inner_text() == "2 files chosen for the chat"
    assert json.loads(page.evaluate("localStorage.getItem('vaultseek.chat.scope')")) == {"paths": sorted([first, second])}
    # The choice survives paging and a reload.
    page.get_by_role("button", name="Next").click()
    page.locator(".kb-range").filter(has_text="51–100").wait_for()
    page.reload()
    page.locator(".kb-row").nth(49).wait_for()
    assert page.get_by_role("checkbox", name=f"Use {first} in chat").is_checked()
    assert no_sideways_scroll(page)
    shot(page, f"kb-scope-{width}")
    # Every file on the page at once, then clear.
    page.locator(".kb-page-box").check()
    assert page.locator(".kb-scope-count").inner_text() == "50 files chosen for the chat"
    page.get_by_role("button", name="Clear").click()
    assert page.evaluate("localStorage.getItem('vaultseek.chat.scope')") is None
    assert page.locator("input.kb-use:checked").count() == 0
    assert page.locator(".kb-scope-count").inner_text().startswith("Tick files")
    page.close()


def test_hostile_names_titles_and_categories_stay_text(browser: Any, site: tuple[str, Path]) -> None:
    url, _vault = site
    page = open_page(browser, url, 1280)
    page.fill("input[name=q]", "onerror")
    expect(page.locator(".kb-row")).to_have_count(1)
    row = page.locator(".kb-row")
    assert row.locator(".kb-name").inner_text() == HOSTILE_NAME
    assert row.locator(".kb-title").inner_text() == HOSTILE_TITLE
    assert row.locator(".kb-category").inner_text() == HOSTILE_CATEGORY
    row.locator(".kb-category").hover()
    page.locator(".kb-tree").get_by_text(HOSTILE_CATEGORY).hover()
    assert page.evaluate("window.__xss") is None
    assert page.locator(".kb-row img, .kb-row script, .kb-tree b").count() == 0
    page.get_by_role("checkbox", name=f"Use uploads/{HOSTILE_NAME} in chat").check()
    assert page.evaluate("window.__xss") is None
    page.get_by_role("button", name="Clear").click()
    page.close()


def test_upload_asks_before_replacing_says_duplicates_refiles_and_deletes(browser: Any, site: tuple[str, Path]) -> None:
    url, vault = site
    page = open_page(browser, url, 390)

    def drop(name: str, text: str) -> None:
        transfer = page.evaluate_handle(
            "([name, text]) => { const dt = new DataTransfer(); dt.items.add(new File([text], name, {type: 'text/plain'})); return dt; }",
            [name, text],
        )
        page.dispatch_event("#dropzone", "drop", {"dataTransfer": transfer})

    drop("field notes.txt", "Egrets, not herons, were at the lake this morning.")
    question = page.locator(".kb-question")
    question.wait_for()
    assert "uploads/field notes.txt is already in the knowledge base" in question.inner_text()
    assert no_sideways_scroll(page)
    shot(page, "kb-conflict-390")
    question.get_by_role("button", name="Keep both").click()
    page.locator(".kb-upload-state").filter(has_text="uploads/field notes (2).txt: indexed").wait_for(timeout=30_000)
    assert (vault / "uploads/field notes (2).txt").read_text("utf-8").startswith("Egrets")
    assert (vault / "uploads/field notes.txt").read_text("utf-8").startswith("Herons")
    # The same bytes again, under another name: said, and not stored.
    drop("copy of notes.txt", "Herons stand still in the shallow water of the lake.\n")
    page.locator(".kb-upload-state").filter(has_text="same content is already here as uploads/field notes.txt").wait_for()
    assert not (vault / "uploads/copy of notes.txt").exists()
    # Re-file, then delete with a confirmation.
    page.fill("input[name=q]", "field notes (2)")
    expect(page.locator(".kb-row")).to_have_count(1)
    row = page.locator(".kb-row")
    row.get_by_role("button", name="File uploads/field notes (2).txt under a category").click()
    row.get_by_role("combobox", name="Category for uploads/field notes (2).txt").fill("birds")
    row.get_by_role("button", name="Save").click()
    row.locator(".kb-category").filter(has_text="birds").wait_for()
    row.get_by_role("button", name="Delete uploads/field notes (2).txt").click()
    page.locator(".empty").filter(has_text="No file matches").wait_for(timeout=30_000)
    assert not (vault / "uploads/field notes (2).txt").exists()
    assert no_sideways_scroll(page)
    assert page.errors == []
    page.close()
