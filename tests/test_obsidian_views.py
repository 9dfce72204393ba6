"""The Obsidian plugin's views rendered in real headless Chromium: the shipped ``main.js`` and
``styles.css`` mounted by a small page (``obsidian-plugin/test/harness/``) with the project's
stand-in for the ``obsidian`` module, talking to a real vaultseek app (with a token) through the
page's own origin. The Obsidian app itself cannot run here; this shows the plugin's own DOM and
CSS under a theme that uses Obsidian's variable names. Screenshots at a side panel's width
(350 px) and full width (1280 px) go to ``docs/images/obsidian/``.

The weak state of the Related pane (nothing in the vault close to the note) is drawn from a vault
where one note, on kubectl, has nothing close: the server's own ``close``/``nothing_close``."""

from __future__ import annotations

import json
import socket
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.browser import chromium
from tests.support.standin_llm import StandinLLM

from study_fixtures import make_app
from test_obsidian_plugin import NOTES, TOKEN

REPO = Path(__file__).resolve().parents[1]
HARNESS = REPO / "obsidian-plugin" / "test" / "harness"
STANDIN = REPO / "obsidian-plugin" / "test" / "standin"
SHIPPED = REPO / "src" / "vaultseek" / "obsidian" / "plugin"
SHOTS = REPO / "docs" / "images" / "obsidian"
ARTIFACTS = Path(__file__).parent / "artifacts"
WIDTHS = {"panel": (350, 760), "full": (1280, 800)}
TYPES = {".html": "text/html", ".js": "text/javascript", ".cjs": "text/javascript", ".css": "text/css"}
KUBECTL = {
    "ops/kubectl.md": """
        # kubectl

        ## Restart a deployment

        `kubectl rollout restart deployment/api -n prod` replaces the pods one at a time;
        `kubectl rollout status deployment/api -n prod` waits until the new ones are ready.
        """,
}


@dataclass
class Site:
    url: str
    files: dict[str, str]
    vault: str


def handler_for(backend: str) -> type[BaseHTTPRequestHandler]:
    folders = {"harness": HARNESS, "standin": STANDIN, "plugin": SHIPPED}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.answer("GET")

        def do_POST(self) -> None:
            self.answer("POST")

        def answer(self, method: str) -> None:
            if self.path.startswith("/vs/"):  # to vaultseek, as the desktop plugin asks it (no Origin)
                body = self.rfile.read(int(self.headers.get("content-length") or 0)) if method == "POST" else None
                keep = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
                reply = httpx.request(method, backend + self.path[3:], headers=keep, content=body, timeout=60)
                self.send(reply.status_code, reply.headers.get("content-type", "application/json"), reply.content)
                return
            top, _, rest = self.path.lstrip("/").partition("/")
            folder = folders.get(top)
            target = (folder / rest).resolve() if folder else None
            if folder is None or target is None or not target.is_file() or folder.resolve() not in target.parents:
                self.send(404, "text/plain", b"not found")
                return
            self.send(200, TYPES.get(target.suffix, "application/octet-stream"), target.read_bytes())

        def send(self, status: int, kind: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serve_site(tmp_path_factory.mktemp("obsidian-views"), NOTES) as served:
        yield served


@pytest.fixture(scope="module")
def kubectl_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """NOTES and a note on kubectl, which nothing in the vault is close to."""
    with serve_site(tmp_path_factory.mktemp("obsidian-views-kubectl"), {**NOTES, **KUBECTL}) as served:
        yield served


@contextmanager
def serve_site(root: Path, notes: dict[str, str]) -> Iterator[Site]:
    """The harness pages and a vaultseek app on a vault of ``notes``, behind one origin."""
    from vaultseek.web.server import BackgroundServer

    vault = root / "vault"
    files = {}
    for rel, text in notes.items():
        target = vault / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        files[rel] = textwrap.dedent(text).lstrip("\n")
        target.write_text(files[rel], "utf-8")
    with StandinLLM() as llm:
        app = make_app(vault, root / "index.db", llm.url, serve_token=TOKEN)
        try:
            with BackgroundServer(app) as backend:
                pages = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(backend.url))
                thread = threading.Thread(target=pages.serve_forever, daemon=True)
                thread.start()
                try:
                    yield Site(f"http://127.0.0.1:{pages.server_address[1]}", files, str(vault.resolve()))
                finally:
                    pages.shutdown()
                    pages.server_close()
        finally:
            app.notebook.close()


def dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def open_harness(browser: Any, site: Site, width: str, **options: Any) -> Any:
    w, h = WIDTHS[width]
    page = browser.new_page(viewport={"width": w, "height": h})
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(site.url + "/harness/index.html")
    settings = {"files": site.files, "token": TOKEN, "basePath": site.vault, **options}
    page.evaluate("async (o) => { window.h = await (await window.harness).start(o); }", settings)
    return page


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def no_sideways_scroll(page: Any) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths


@pytest.mark.parametrize("width", ["panel", "full"])
def test_search_as_you_type_opens_the_note_at_its_section(browser: Any, site: Site, width: str) -> None:
    page = open_harness(browser, site, width, active="cooking/bread.md")
    page.evaluate("() => h.app.commands.search.callback()")
    page.locator(".prompt-input").press_sequentially("tag:#law notice period", delay=25)
    first = page.locator(".suggestion-item").first
    first.locator(".vaultseek-title").wait_for()
    assert first.locator(".vaultseek-title").inner_text() == "tenancy"
    assert first.locator(".vaultseek-path").inner_text() == "law/tenancy.md"
    assert first.locator(".vaultseek-section").inner_text() == "› Notice period"
    assert [m.lower() for m in first.locator(".vaultseek-snippet mark").all_inner_texts()][:2] == ["notice", "period"]
    assert page.evaluate("h.app.opened.length") == 0
    no_sideways_scroll(page)
    shot(page, f"search-{WIDTHS[width][0]}")
    count = page.locator(".suggestion-item").count()
    page.keyboard.press("ArrowDown")
    assert page.locator(".suggestion-item.is-selected").count() == 1
    if count > 1:
        assert not first.evaluate("(el) => el.classList.contains('is-selected')")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Shift+Enter")  # a link to the hit, at the cursor of the note being written
    page.locator(".modal-container").wait_for(state="detached")
    assert page.evaluate("h.app.workspace.activeLeaf.view.editor.getValue()").endswith("[[tenancy]]")
    page.evaluate("() => h.app.commands.search.callback()")
    page.locator(".prompt-input").press_sequentially("tag:#law notice period", delay=10)
    page.locator(".suggestion-item .vaultseek-title").first.wait_for()
    page.keyboard.press("Enter")
    page.wait_for_function("h.app.opened.length > 0")
    opened = page.evaluate("h.app.opened[0]")
    assert opened["path"] == "law/tenancy.md" and opened["eState"]["subpath"] == "#Notice period"
    text = site.files["law/tenancy.md"]
    assert {text[a:b].lower() for a, b in opened["eState"]["match"]["matches"]} == {"notice", "period"}
    assert page.errors == []


@pytest.mark.parametrize("width", ["panel", "full"])
def test_a_mistyped_word_is_said_above_the_results_and_its_correction_marked(browser: Any, site: Site, width: str) -> None:
    page = open_harness(browser, site, width, active="cooking/bread.md")
    page.evaluate("() => h.app.commands.search.callback()")
    page.locator(".prompt-input").press_sequentially("tenancy notice perod", delay=25)
    page.locator(".suggestion-item .vaultseek-title").first.wait_for()
    said = page.locator(".suggestion-item").first
    assert "vaultseek-notice" in (said.get_attribute("class") or "")
    assert 'no chunk has "perod"' in said.inner_text()
    hit = page.locator(".suggestion-item", has=page.locator(".vaultseek-title")).first
    assert hit.locator(".vaultseek-path").inner_text() == "law/tenancy.md"
    assert "period" in [m.lower() for m in hit.locator(".vaultseek-snippet mark").all_inner_texts()]
    no_sideways_scroll(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"obsidian-search-corrected-{WIDTHS[width][0]}.png"))
    page.keyboard.press("Enter")  # the line is selected first; Enter opens the first note all the same
    page.wait_for_function("h.app.opened.length > 0")
    assert page.evaluate("h.app.opened[0].path") == "law/tenancy.md"
    assert page.errors == []


@pytest.mark.parametrize("width", ["panel", "full"])
def test_related_pane_inserts_a_link_and_follows_renames(browser: Any, site: Site, width: str) -> None:
    page = open_harness(browser, site, width, active="cooking/bread.md")
    page.evaluate("() => h.app.commands['related-notes'].callback()")
    entry = page.locator(".vaultseek-entry").filter(has_text="cooking/starter.md")
    entry.wait_for()
    assert "linked from this note" in entry.inner_text()
    assert page.locator(".vaultseek-related .vaultseek-pane-head .vaultseek-path").inner_text() == "cooking/bread.md"
    page.wait_for_function("document.querySelector('.status-bar-item').textContent.includes('indexed')")
    no_sideways_scroll(page)
    shot(page, f"related-{WIDTHS[width][0]}")
    entry.get_by_role("button", name="Link").click()
    assert page.evaluate("h.app.workspace.activeLeaf.view.editor.getValue()").endswith("[[starter]]")
    # A listed note renamed, another deleted, while the pane shows them.
    page.evaluate("async () => { const v = h.app.vault; await v.rename(v.getAbstractFileByPath('cooking/starter.md'), "
                  "'cooking/levain.md'); }")  # fmt: skip
    page.locator(".vaultseek-entry").filter(has_text="cooking/levain.md").wait_for()
    others = page.locator(".vaultseek-entry").filter(has_not_text="cooking/levain.md")
    if others.count() > 0:
        gone = others.first.locator(".vaultseek-path").inner_text()
        page.evaluate("async (p) => h.app.vault.delete(h.app.vault.getAbstractFileByPath(p))", gone)
        dead = page.locator(".vaultseek-entry.vaultseek-gone")
        dead.wait_for()
        assert "renamed or deleted" in dead.inner_text()
        assert dead.get_by_role("button", name="Link").is_disabled()
    page.locator(".vaultseek-entry").filter(has_text="cooking/levain.md").locator("a.vaultseek-title").click()
    page.wait_for_function("h.app.opened.some((o) => o.path === 'cooking/levain.md')")
    assert page.errors == []


@pytest.mark.parametrize("width", ["panel", "full"])
def test_ask_your_vault_streams_an_answer_whose_citations_open_notes(browser: Any, site: Site, width: str) -> None:
    page = open_harness(browser, site, width)
    page.evaluate("() => h.app.commands.ask.callback()")
    page.locator(".vaultseek-chat-input").fill("What is the notice period for a tenancy?")
    page.locator(".vaultseek-chat-input").press("Enter")
    page.locator(".vaultseek-source").first.wait_for()
    page.wait_for_function("document.querySelector('.vaultseek-ask').textContent === 'Ask'")
    assert "law/tenancy.md" in page.locator(".vaultseek-sources").inner_text()
    assert page.locator(".vaultseek-answer .vaultseek-cite").count() >= 1
    no_sideways_scroll(page)
    shot(page, f"chat-{WIDTHS[width][0]}")
    page.locator(".vaultseek-answer .vaultseek-cite").first.click()
    page.wait_for_function("h.app.opened.length > 0")
    assert page.evaluate("h.app.opened[0].path") == "law/tenancy.md"
    assert page.errors == []


@pytest.mark.parametrize("width", ["panel", "full"])
def test_server_down_and_wrong_token_are_clear_states(browser: Any, site: Site, width: str) -> None:
    page = open_harness(browser, site, width, active="cooking/bread.md", serverUrl=dead_url(), basePath="/home/me/Notes")
    page.evaluate("() => h.app.commands.search.callback()")
    page.locator(".prompt-input").press_sequentially("lease", delay=25)
    problem = page.locator(".suggestion-item .vaultseek-problem")
    problem.wait_for()
    assert problem.locator(".vaultseek-problem-title").inner_text() == "vaultseek is not running"
    assert 'vaultseek serve --vault "/home/me/Notes"' in problem.locator("code").first.inner_text()
    page.wait_for_function("document.querySelector('.status-bar-item').textContent === 'vaultseek: not running'")
    no_sideways_scroll(page)
    shot(page, f"search-down-{WIDTHS[width][0]}")
    page.close()

    page = open_harness(browser, site, width, active="cooking/bread.md", token="not-the-right-token")
    page.evaluate("() => h.app.commands['related-notes'].callback()")
    refused = page.locator(".vaultseek-related .vaultseek-problem")
    refused.wait_for()
    assert refused.locator(".vaultseek-problem-title").inner_text() == "vaultseek refused the token"
    assert "--token-file" in refused.inner_text()
    page.wait_for_function("document.querySelector('.status-bar-item').textContent === 'vaultseek: wrong token'")
    no_sideways_scroll(page)
    shot(page, f"related-token-{WIDTHS[width][0]}")
    assert page.errors == [] and "Error" not in page.locator("body").inner_text()
    assert json.dumps(page.evaluate("h.obsidian.Notice.shown")).count("at ") == 0  # no stack trace shown


def contrast(page: Any, selector: str) -> float:
    """The WCAG contrast ratio of the first ``selector``'s text against the background it is
    drawn on."""
    return page.evaluate(
        """(selector) => {
          const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
          const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
            .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
          const text = lum(rgb(getComputedStyle(document.querySelector(selector)).color));
          let under = document.querySelector(selector);  // the nearest ancestor that paints a background
          while (under.parentElement && /rgba\\(.*, 0\\)|transparent/.test(getComputedStyle(under).backgroundColor)) under = under.parentElement;
          const back = lum(rgb(getComputedStyle(under).backgroundColor));
          return (Math.max(text, back) + 0.05) / (Math.min(text, back) + 0.05);
        }""",
        selector,
    )


@pytest.mark.parametrize("width", ["panel", "full"])
def test_related_pane_says_when_nothing_is_close(browser: Any, kubectl_site: Site, width: str) -> None:
    page = open_harness(browser, kubectl_site, width, active="ops/kubectl.md")
    page.evaluate("() => h.app.commands['related-notes'].callback()")
    line = page.locator(".vaultseek-related .vaultseek-nothing-close")
    line.wait_for()
    assert line.inner_text() == "Nothing closely related: no links, and no note close in meaning. The nearest notes:"
    entries = page.locator(".vaultseek-related .vaultseek-list").first.locator(".vaultseek-entry")
    paths = entries.locator(".vaultseek-path").all_inner_texts()
    assert set(paths) <= set(NOTES) and len(paths) >= 2, paths
    assert page.locator(".vaultseek-related .vaultseek-list").first.locator(".vaultseek-weak").count() == len(paths)
    assert set(entries.locator(".vaultseek-why").all_inner_texts()) == {"not close in meaning"}
    above = page.evaluate("[...document.querySelectorAll('.vaultseek-nothing-close, .vaultseek-entry')].map((el) => "
                          "el.getBoundingClientRect().top)")  # fmt: skip
    assert above[0] < min(above[1:])  # the line first, then the list
    colours = page.evaluate("['.vaultseek-weak .vaultseek-title', '.vaultseek-pane-title', '.vaultseek-nothing-close']"
                            ".map((s) => getComputedStyle(document.querySelector(s)).color)")  # fmt: skip
    assert colours[0] != colours[1]  # a weak title is drawn quieter than the pane's own text
    for selector in (".vaultseek-why", ".vaultseek-nothing-close", ".vaultseek-weak .vaultseek-title"):
        assert contrast(page, selector) >= 4.5, selector  # quieter, still readable (WCAG AA)
    page.wait_for_function("document.querySelector('.status-bar-item').textContent.includes('indexed')")
    no_sideways_scroll(page)
    shot(page, f"related-weak-{WIDTHS[width][0]}")
    first = entries.first
    first.get_by_role("button", name="Link").click()  # still linkable
    assert page.evaluate("h.app.workspace.activeLeaf.view.editor.getValue()").endswith(f"[[{Path(paths[0]).stem}]]")
    first.locator("a.vaultseek-title").click()  # still opens
    page.wait_for_function("(p) => h.app.opened.some((o) => o.path === p)", arg=paths[0])
    assert page.errors == []
