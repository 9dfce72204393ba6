"""The app's shell, chat, search and privacy pages: the chat API's relevance threshold,
model-down state, question scrubbing, edit and regenerate (stand-in LLM over real HTTP), and
the pages in real headless Chromium (Debian's ``chromium`` through Playwright) at 390 and 1280
px: Markdown answers, clickable citations opening the passage, the model-down state with its
passages, no sideways scrolling, and hostile note text, file names and model output that never
run. Screenshots of each page at both widths are written to ``docs/images/study/``. In CI a
missing browser fails instead of skipping."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.browser import chromium
from tests.support.standin_llm import StandinLLM

from study_fixtures import envelopes, make_app, make_study_vault

SHOTS = Path(__file__).resolve().parent.parent / "docs" / "images" / "study"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
WIDTHS = {"phone": (390, 844), "desktop": (1280, 860)}
KEY = "sk-proj-" + "Q3x9Lm2Vb7Nc4Zr8Tw1Ks6Hd0Fg5Jy" + "Pa2Ue7Ro4Iw9Mq3Xt8Bv1Cn6Dz0El5"
HOSTILE = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>'


def dead_url() -> str:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def ask(client: Any, question: str, **body: Any) -> list[dict[str, Any]]:
    with client.stream("POST", "/api/chat", json={"question": question, **body}) as response:
        assert response.status_code == 200, response.read()
        return envelopes(response.iter_lines())


def citations_of(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for item in items:
        if item["type"] == "metadata":
            found = item["data"]["citations"]
    return found


# ---- the server: static files, CSP ---------------------------------------------------------
def test_csp_allows_no_inline_script_and_assets_have_their_types(client: Any) -> None:
    page = client.get("/")
    csp = page.headers["content-security-policy"]
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    scripts = directives.get("script-src", directives["default-src"])
    assert scripts == ["'self'"], csp
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
    assert directives["style-src"] == ["'self'"] and directives["object-src"] == ["'none'"]
    assert "<script>" not in page.text and " on" not in re.sub(r"\s+", " ", page.text).replace(" one", "")
    for path, kind in (("/static/js/shell.js", "text/javascript"), ("/static/js/ui.js", "text/javascript"),
                       ("/static/js/pages/chat.js", "text/javascript"), ("/static/css/app.css", "text/css"),
                       ("/static/vendor/marked.esm.js", "text/javascript"), ("/static/vendor/purify.es.js", "text/javascript")):  # fmt: skip
        response = client.get(path)
        assert response.status_code == 200 and response.headers["content-type"].startswith(kind), (path, response.headers)
        assert response.headers["x-content-type-options"] == "nosniff"
    for vendored in ("README.md", "marked.LICENSE.md", "dompurify.LICENSE"):
        assert client.get(f"/static/vendor/{vendored}").status_code == 200
    moved = client.get("/study", follow_redirects=False)
    assert moved.status_code in (301, 307, 308) and moved.headers["location"] == "/#hub"


# ---- the chat API --------------------------------------------------------------------------
def test_only_relevant_passages_become_sources(client: Any, standin: StandinLLM) -> None:
    from vaultseek.search.relevance import RELEVANT

    related = citations_of(ask(client, "what is the notice period for a tenancy?"))
    assert [c["path"] for c in related] == ["law/tenancy.md"]
    assert related[0]["relevance"] >= RELEVANT
    # "Every answer lists six source cards, relevant or not": an unrelated question gets none,
    # and the model is told nothing relevant was found instead of being handed notes to cite.
    for question in ("write a haiku about autumn", "tell me slowly"):
        items = ask(client, question)
        assert citations_of(items) == [], question
        assert "Sources:\n(nothing in the user's documents is relevant" in standin.requests[-1]["messages"][0]["content"]
        assert "".join(i["data"]["text"] for i in items if i["type"] == "text") == "I found nothing relevant."


def test_snippets_lose_their_html(client: Any, study_vault: Path, app: Any) -> None:
    (study_vault / "law" / "flair.md").write_text(
        "# Flair\n\nThe notice period <span class='flair'>for a tenancy</span> ends <b>in writing</b>.\n", "utf-8")
    app.notebook.kb.ingest.sync("law/flair.md")
    assert app.notebook.kb.ingest.idle.wait(30)
    import time

    time.sleep(0.3)
    found = [c for c in citations_of(ask(client, "notice period for a tenancy in writing")) if c["path"] == "law/flair.md"]
    assert found and "<" not in found[0]["snippet"] and "for a tenancy" in found[0]["snippet"]


def test_model_down_shows_the_fix_and_the_passages(study_vault: Path, tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    url = dead_url()
    app = make_app(study_vault, tmp_path / "i.db", url)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            items = ask(client, "what is the notice period for a tenancy?")
            kinds = [i["type"] for i in items]
            assert kinds.index("metadata") < kinds.index("error") and kinds[-1] == "done"
            assert [c["path"] for c in citations_of(items)] == ["law/tenancy.md"]
            error = next(i["data"] for i in items if i["type"] == "error")
            assert error["code"] == "llm_unavailable"
            assert "`ollama serve`" in error["hint"] and url in error["hint"]
            done = items[-1]["data"]
            saved = client.get(f"/api/conversations/{done['conversation_id']}").json()["messages"]
            assert saved[-1]["citations"][0]["path"] == "law/tenancy.md" and saved[-1]["meta"]["error"]["hint"]
            # A new question that failed with nothing to show leaves no empty conversation.
            before = len(client.get("/api/conversations").json()["conversations"])
            items = ask(client, "write a haiku about autumn")
            assert items[-1]["data"]["conversation_id"] is None and not citations_of(items)
            assert len(client.get("/api/conversations").json()["conversations"]) == before
    finally:
        app.notebook.close()


def test_every_error_has_a_hint(client: Any) -> None:
    for body in ({"question": ""}, {"question": "x", "replace_from": 3}, {"question": "x", "model": ""},
                 {"question": "x", "attachments": "a"}):  # fmt: skip
        response = client.post("/api/chat", json=body)
        assert response.status_code == 400 and response.json()["error"]["message"], body
    missing = client.post("/api/chat", json={"question": "x", "conversation_id": "nope"})
    assert missing.status_code == 404 and missing.json()["error"]["hint"]
    items = ask(client, "hello", model="missing")  # the stand-in has no model of that name
    error = next(i["data"] for i in items if i["type"] == "error")
    assert error["code"] == "model_missing" and "ollama pull missing" in error["hint"]
    assert items[-1]["data"]["model"] == "missing"


def test_questions_are_scrubbed_before_they_are_stored_or_sent(client: Any, standin: StandinLLM, app: Any) -> None:
    question = f"why does OPENAI_API_KEY={KEY} fail with the notice period?"
    items = ask(client, question)
    sent = standin.requests[-1]["messages"][-1]["content"]
    assert KEY not in sent and "[REDACTED:" in sent
    asked = items[0]["data"]["question"]
    assert asked["redacted"] and KEY not in asked["text"]
    assert items[-1]["data"]["redacted"] == asked["redacted"]
    cid = items[-1]["data"]["conversation_id"]
    saved = client.get(f"/api/conversations/{cid}").json()
    assert KEY not in saved["title"] and KEY not in saved["messages"][0]["content"]
    assert saved["messages"][0]["meta"]["redacted"] == asked["redacted"]
    raw = app.notebook.store.path.read_bytes() + Path(f"{app.notebook.store.path}-wal").read_bytes()
    assert KEY.encode() not in raw


def test_a_mistyped_question_says_what_its_search_took_and_keeps_it(client: Any) -> None:
    items = ask(client, "what is the notice perod for a tenancy?")
    asked = items[0]["data"]["question"]
    assert asked["searched"] == {"perod": ["period"]}
    assert [c["path"] for c in citations_of(items)] == ["law/tenancy.md"]  # found all the same
    saved = client.get(f"/api/conversations/{items[-1]['data']['conversation_id']}").json()
    assert saved["messages"][0]["meta"]["searched"] == {"perod": ["period"]}  # shown again on reopening
    assert "searched" not in ask(client, "what is the notice period for a tenancy?")[0]["data"]["question"]


def test_edit_and_regenerate_replace_the_turn(client: Any, standin: StandinLLM) -> None:
    first = ask(client, "what is the notice period for a tenancy?")
    cid = first[-1]["data"]["conversation_id"]
    second = ask(client, "how do I feed the sourdough starter?", conversation_id=cid)
    assert second[-1]["data"]["followups"]
    question_id = second[0]["data"]["question"]["id"]
    # Edit the second question: its turn is replaced, the first stays.
    edited = ask(client, "and must termination be signed?", conversation_id=cid, replace_from=question_id)
    messages = client.get(f"/api/conversations/{cid}").json()["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["what is the notice period for a tenancy?", "and must termination be signed?"]
    assert len(messages) == 4
    assert [m["role"] for m in standin.requests[-1]["messages"]] == ["system", "user", "assistant", "user"]
    # Regenerate: the same question again, in place.
    again = edited[0]["data"]["question"]["id"]
    ask(client, "and must termination be signed?", conversation_id=cid, replace_from=again)
    assert len(client.get(f"/api/conversations/{cid}").json()["messages"]) == 4
    answer_id = first[-1]["data"]["message_id"]  # an answer, not a question: nothing to replace
    stale = client.post("/api/chat", json={"question": "x", "conversation_id": cid, "replace_from": answer_id})
    assert stale.status_code == 404 and "reload" in stale.json()["error"]["hint"]


def test_unknown_attachment_is_an_error_not_a_crash(client: Any) -> None:
    items = ask(client, "what is in the picture?", attachments=["no-such-attachment"])
    error = next(i["data"] for i in items if i["type"] == "error")
    assert error["message"] and error["hint"] and error["code"] != "internal"


# ---- the pages in Chromium -------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


class Site:
    def __init__(self, url: str, standin: StandinLLM | None, vault: Path) -> None:
        self.url, self.standin, self.vault = url, standin, vault


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    from vaultseek.web.server import BackgroundServer

    vault = make_study_vault(tmp_path)
    with StandinLLM(token_delay=0.005) as standin:
        app = make_app(vault, tmp_path / "i.db", standin.url)
        try:
            with BackgroundServer(app) as server:
                yield Site(server.url, standin, vault)
        finally:
            app.notebook.close()


@pytest.fixture
def down_site(tmp_path: Path) -> Iterator[Site]:
    from vaultseek.web.server import BackgroundServer

    vault = make_study_vault(tmp_path)
    app = make_app(vault, tmp_path / "i.db", dead_url())
    try:
        with BackgroundServer(app) as server:
            yield Site(server.url, None, vault)
    finally:
        app.notebook.close()


def open_page(browser: Any, site: Site, width: str, hash_: str = "#chat") -> Any:
    w, h = WIDTHS[width]
    page = browser.new_page(viewport={"width": w, "height": h})
    page.errors = []
    page.outside = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" and not missing_asset(message.text) else None)
    page.on("request", lambda request: page.outside.append(request.url)
            if not request.url.startswith(site.url) and not request.url.startswith("data:") else None)  # fmt: skip
    page.goto(site.url + "/" + hash_)
    return page


def missing_asset(text: str) -> bool:
    """A console error about a file that is not there (a 404, whose JSON body Chromium also
    refuses as a style sheet): another section's style sheet not written yet is not this
    page's failure."""
    return "404" in text or "MIME type ('application/json')" in text


def no_sideways_scroll(page: Any) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), page.evaluate(
        "[document.documentElement.scrollWidth, window.innerWidth]")


def wrapped_buttons(page: Any, selector: str) -> list[str]:
    """The labels of the visible buttons under ``selector`` that run onto a second line."""
    return list(page.evaluate("""(selector) => [...document.querySelectorAll(selector)]
      .filter((b) => b.offsetParent && b.textContent.trim())
      .filter((b) => { const r = document.createRange(); r.selectNodeContents(b);
                       return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1; })
      .map((b) => b.textContent.trim())""", selector))


def shot(page: Any, name: str, *, full: bool = False) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full)


def wait_answer(page: Any, n: int = 1) -> Any:
    answer = page.locator(".msg.assistant").nth(n - 1)
    answer.locator(".meta").filter(has_text="tokens").wait_for(timeout=30_000)
    return answer


MARKDOWN_ANSWER = (
    "### Notice\n\nThe notice period is **three months** [1].\n\n- in writing [1]\n- signed by both parties\n\n"
    "| term | value |\n|---|---|\n| notice | 3 months |\n\n```python\nprint('notice')\n```\n"
)


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_chat_renders_markdown_and_opens_cited_passages(browser: Any, site: Site, width: str) -> None:
    assert site.standin is not None
    page = open_page(browser, site, width)
    question = page.locator("textarea[name=question]")
    question.wait_for()
    page.locator(".model-select option").first.wait_for(state="attached")  # the model list is in
    ask_button = page.locator("button.ask")
    assert ask_button.is_disabled()  # nothing typed yet
    question.fill("What is the notice period for a tenancy?")
    assert ask_button.is_enabled()
    site.standin.scripted.append(MARKDOWN_ANSWER)
    question.press("Enter")
    assert ask_button.is_disabled()  # while the answer runs
    assert wrapped_buttons(page, ".composer-actions button") == []  # Ask (and Stop) on one line each
    answer = wait_answer(page)
    assert answer.locator(".answer h3").inner_text() == "Notice"
    assert answer.locator(".answer strong").first.inner_text() == "three months"
    assert answer.locator(".answer li").count() == 2 and answer.locator(".answer table td").count() == 2
    assert answer.locator(".answer pre code").inner_text().strip() == "print('notice')"
    assert "###" not in answer.inner_text() and "**" not in answer.inner_text()
    assert answer.locator(".answer button.cite").count() == 2
    assert answer.locator(".source").count() == 1  # only the relevant note
    assert answer.locator(".followup").count() >= 1
    assert answer.get_by_role("button", name="Copy").count() == 1
    no_sideways_scroll(page)
    shot(page, f"chat-{WIDTHS[width][0]}")
    answer.locator(".answer button.cite").first.click()
    cited = page.locator("#panel .passage.cited")
    cited.wait_for()
    assert "three months" in cited.inner_text()
    assert cited.locator("mark").count() >= 1  # the question's words marked
    assert "law/tenancy.md" in page.locator("#panel-where").inner_text()
    no_sideways_scroll(page)
    shot(page, f"chat-passage-{WIDTHS[width][0]}")
    page.keyboard.press("Escape")
    page.locator("#panel").wait_for(state="hidden")
    # Regenerate replaces the answer in place; the conversation keeps one turn.
    answer.get_by_role("button", name="Regenerate").click()
    wait_answer(page)
    assert page.locator(".msg.assistant").count() == 1 and page.locator(".msg.user").count() == 1
    assert page.errors == [] and page.outside == []


def test_edit_a_question_and_resume_after_reload(browser: Any, site: Site) -> None:
    page = open_page(browser, site, "desktop")
    page.locator("textarea[name=question]").fill("What is the notice period for a tenancy?")
    page.keyboard.press("Enter")
    wait_answer(page)
    page.locator(".msg.user").hover()
    page.locator(".msg.user").get_by_role("button", name="Edit").click()
    page.locator(".edit-form textarea").fill("How do I feed the sourdough starter?")
    assert wrapped_buttons(page, ".composer-actions button") == []  # Cancel, Ask again and Ask
    page.get_by_role("button", name="Ask again").click()
    answer = wait_answer(page)
    assert "cooking/bread.md" in answer.locator(".source").first.get_attribute("aria-label")
    assert page.locator(".msg.user").count() == 1
    page.reload()
    page.locator(".msg.user .bubble").filter(has_text="sourdough").wait_for()  # the conversation is remembered
    assert page.locator(".conversation-list .conversation").count() == 1
    assert page.errors == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_model_down_says_how_to_start_it_and_shows_the_passages(browser: Any, down_site: Site, width: str) -> None:
    page = open_page(browser, down_site, width)
    page.locator(".model-status.down").wait_for()
    assert "ollama serve" in page.locator(".chat-welcome").inner_text()
    page.locator("textarea[name=question]").fill("What is the notice period for a tenancy?")
    page.keyboard.press("Enter")
    notice = page.locator(".msg.assistant .notice.error")
    notice.wait_for(timeout=30_000)
    text = notice.inner_text()
    assert "not answering" in text and "ollama serve" in text
    assert page.locator(".msg.assistant .source").count() == 1
    assert "three months" in page.locator(".msg.assistant .source-snippet").inner_text()
    assert page.get_by_role("button", name="Try again").count() == 1
    assert page.locator("button.ask").is_disabled()  # the box was emptied; nothing is running
    no_sideways_scroll(page)
    shot(page, f"chat-model-down-{WIDTHS[width][0]}")
    assert page.errors == [] and page.outside == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_search_and_privacy_pages(browser: Any, site: Site, width: str) -> None:
    page = open_page(browser, site, width, "#search")
    page.locator("input[name=q]").fill("sourdough starter flour")
    page.keyboard.press("Enter")
    note = page.locator(".search-results .note-result").first  # the page itself: test_ui_search.py
    note.wait_for()
    assert "cooking/bread.md" in note.inner_text() and note.locator("mark").count() >= 1
    assert page.url.endswith("#search/sourdough%20starter%20flour")
    no_sideways_scroll(page)
    first = note.locator(".result").first
    first.click()
    page.locator("#panel .passage.cited").wait_for()
    page.keyboard.press("Escape")

    page.locator('.app-nav a[data-route="privacy"]').click()
    page.locator(".privacy .facts").first.wait_for()
    assert "127.0.0.1" in page.locator(".privacy").inner_text()
    # A card left out (no embedding server here) leaves no stray text behind.
    assert "null" not in page.locator(".privacy").inner_text().split()
    port = site.url.rsplit(":", 1)[1]
    rows = [r.split("\t") for r in page.locator(".connections tbody tr").all_inner_texts()]
    assert ["listening", f"127.0.0.1:{port}"] in [r[:2] for r in rows]
    # Every connection stays on this machine. (Sockets left open by an earlier test's stand-in
    # server, in this same process, may be listed as "other": both of their ends are here.)
    assert all(r[2].startswith(("127.", "0.0.0.0:", "::")) for r in rows), rows
    no_sideways_scroll(page)
    shot(page, f"privacy-{WIDTHS[width][0]}", full=True)
    # The shell remembers the section across a reload of the bare address.
    page.goto(site.url + "/")
    page.locator(".privacy .facts").first.wait_for()
    assert page.url.endswith("#privacy")
    assert page.errors == [] and page.outside == []


def test_theme_toggle_and_keyboard(browser: Any, site: Site) -> None:
    page = open_page(browser, site, "desktop", "#privacy")
    page.locator(".privacy .facts").first.wait_for()
    before = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.locator("#theme-toggle").click()
    after = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert before != after
    page.reload()
    page.locator(".privacy .facts").first.wait_for()
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == after
    page.keyboard.press("Tab")  # the skip link, then the sections
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.getAttribute('href')")
    assert focused == "#chat"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    page.keyboard.press("Enter")  # the focused link opens the chat
    page.locator("textarea[name=question]").fill("What is the notice period for a tenancy?")
    page.keyboard.press("Enter")
    wait_answer(page)
    shot(page, "chat-dark-1280" if after == "rgb(20, 22, 24)" else "chat-light-1280")


def test_hostile_notes_names_and_model_output_never_run(browser: Any, site: Site) -> None:
    assert site.standin is not None
    hostile_name = 'law/<img src=x onerror="window.__xss=1">.md'
    target = site.vault / hostile_name
    target.write_text(f"# Tenancy trap\n\nThe notice period for a tenancy {HOSTILE} is three months.\n"
                      f"<a href=\"javascript:window.__xss=1\">notice</a>\n", "utf-8")  # fmt: skip
    with httpx.Client(base_url=site.url, timeout=30) as http:
        http.post("/api/documents", files={"file": ('"><svg onload=window.__xss=1>.txt', b"Tenancy notice period: three months, <script>window.__xss=1</script>")})
    page = open_page(browser, site, "desktop", "#search")
    page.locator("input[name=q]").fill("notice period tenancy")
    page.keyboard.press("Enter")
    page.locator(".search-results .result").first.wait_for(timeout=30_000)
    page.wait_for_timeout(300)
    for result in page.locator(".search-results .result").all():
        result.click()
        page.locator("#panel .passage").first.wait_for()
        page.keyboard.press("Escape")
    page.locator('.app-nav a[data-route="chat"]').click()
    page.locator(".model-select option").first.wait_for(state="attached")  # the model list is in
    hostile_answer = (f"Sure [1]. {HOSTILE} <iframe src=\"javascript:window.__xss=1\"></iframe> [click](javascript:window.__xss=1) "
                      "![x](http://attacker.example/t.png) <a href=x onclick=window.__xss=1>a</a>")  # fmt: skip
    site.standin.scripted.extend([hostile_answer] * 3)  # spares, should anything else ask the stand-in first
    page.locator("textarea[name=question]").fill("What is the notice period for a tenancy?")
    page.keyboard.press("Enter")
    answer = wait_answer(page)
    for link in answer.locator(".answer a").all():
        href = link.get_attribute("href") or ""
        assert not href.lower().startswith("javascript"), href
        link.click(modifiers=["Control"]) if href.startswith("http") else link.click()
    for source in answer.locator(".source").all():
        source.click()
        page.locator("#panel .passage").first.wait_for()
        page.keyboard.press("Escape")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__xss") is None
    assert page.locator(".answer img, .answer iframe, .answer script, #panel img, #panel script, .sources img").count() == 0
    assert "<img" in answer.locator(".answer").inner_text(), [str(r)[:300] for r in site.standin.requests]  # shown as the text it is
    assert [u for u in page.outside if "attacker" in u] == []


def test_scope_chips_and_a_redacted_question(browser: Any, site: Site) -> None:
    assert site.standin is not None
    page = open_page(browser, site, "phone")
    page.locator("textarea[name=question]").wait_for()
    # The knowledge base's checkboxes write the scope; the chat shows it as chips and sends it.
    page.evaluate("""localStorage.setItem("vaultseek.chat.scope", JSON.stringify({paths: ["cooking/bread.md"]}))""")
    page.reload()
    chip = page.locator(".scope-chips .chip")
    chip.wait_for()
    assert chip.inner_text().startswith("bread.md")
    page.locator("textarea[name=question]").fill(f"How do I feed the sourdough starter? My key: {KEY}")
    page.keyboard.press("Enter")
    wait_answer(page)
    system = site.standin.requests[-1]["messages"][0]["content"]
    assert "cooking/bread.md" in system and "law/tenancy.md" not in system
    bubble = page.locator(".msg.user .bubble").inner_text()
    assert KEY not in bubble and "[REDACTED:" in bubble
    assert "removed before sending" in page.locator(".msg.user .redacted").inner_text()
    assert all(KEY not in str(r) for r in site.standin.requests)
    no_sideways_scroll(page)
    shot(page, "chat-scope-redacted-390")
    chip.get_by_role("button").click()
    assert page.locator(".scope-chips .chip").count() == 0
    assert page.evaluate("""localStorage.getItem("vaultseek.chat.scope")""") is None
    assert page.errors == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_mistyped_question_shows_what_was_searched_and_the_passage_marks_it(browser: Any, site: Site, width: str) -> None:
    page = open_page(browser, site, width)
    page.locator("textarea[name=question]").fill("What is the notice perod for a tenancy?")
    page.keyboard.press("Enter")
    wait_answer(page)
    said = page.locator(".msg.user .searched")
    assert said.inner_text() == "No note has “perod”: searched “period”."
    no_sideways_scroll(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"chat-searched-{WIDTHS[width][0]}.png"))
    page.locator(".msg.assistant .cite").first.click()
    passage = page.locator("#panel .passage.cited")
    passage.wait_for()
    assert "period" in [m.lower() for m in passage.locator("mark").all_inner_texts()]
    page.keyboard.press("Escape")
    page.reload()  # the reopened conversation says it again
    page.locator(".msg.user .searched").wait_for()
    assert page.errors == []


def test_a_section_that_fails_to_load_says_so_and_the_rest_works(browser: Any, site: Site) -> None:
    # Opened on another section, so the dashboard's module is fetched only when it is chosen
    # (a reload would take it from the browser's cache: the app's files are kept for good).
    page = open_page(browser, site, "desktop", "#chat")
    page.locator("textarea[name=question]").wait_for()
    page.route("**/static/**/js/pages/dashboard.js", lambda route: route.abort())
    page.locator('.app-nav a[data-route="dashboard"]').click()
    failed = page.locator("#page-dashboard .page-failed")
    failed.wait_for()
    assert "could not be loaded" in failed.inner_text() and "other sections still work" in failed.inner_text()
    page.locator('.app-nav a[data-route="search"]').click()
    page.locator("input[name=q]").wait_for()
    assert page.locator("#page-dashboard").is_hidden()
