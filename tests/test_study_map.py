"""The vault map in the study app: ``GET /api/map``, ``/api/map/note`` and ``/api/map/missing``
against a real indexed vault (five topics in five folders, links inside each topic, two notes
that say the same thing and never link), and the map page (``#map``) in headless Chromium at
1280 and 390 px: points drawn, wheel, drag and keys move the view, a hover names its note, a
search lights up its hits, a click opens the note beside the map (a bottom sheet on a phone), a
missing link's button copies its ``[[link]]``, a note opens in the knowledge base; fingers pan,
pinch and tap on a phone. Screenshots go to ``docs/images/study/map-<width>.png`` and
``map-note-<width>.png``."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.browser import chromium
from tests.support.standin_llm import StandinLLM

from study_fixtures import make_app
from test_ui_chat import WIDTHS, Site, no_sideways_scroll, open_page, shot

TOPICS = {
    "cooking": ("food", ("sourdough starter flour water dough oven crust loaf yeast knead proof bake rye crumb "
                         "hydration levain salt butter")),
    "law": ("law", ("tenancy lease landlord tenant notice termination deposit contract clause court rent "
                    "eviction signature agreement statute")),
    "garden": ("garden", ("tomato compost seedling soil mulch prune harvest greenhouse watering weeds bed "
                          "fertiliser roots sunlight basil")),
    "ops": ("ops", ("docker container image kubernetes pod deploy registry volume network restart logs "
                    "cluster node helm rollout")),
    "biology": ("biology", ("protein enzyme cell membrane ribosome amino acid folding substrate catalyst "
                            "mitochondria gene transcription mutation")),
}  # fmt: skip
NOTES_PER_TOPIC = 8
TWIN_A = "cooking/feeding a starter.md"
TWIN_B = "cooking/starter feeding routine.md"
LONE = "misc/Birthday gift ideas.md"
"""A note nothing else in the vault is about."""
TWIN_TEXT = ("Feed the sourdough starter twice a day with equal weights of flour and water, discard half "
             "before each feed, and keep the jar warm so the levain rises and smells of yoghurt.")  # fmt: skip


def make_map_vault(root: Path) -> Path:
    """Five topics of eight notes each, every note linking to the next of its topic; two more
    notes (the twins) that say the same thing in other words and link nowhere; one on nothing
    else's subject (:data:`LONE`)."""
    rng = random.Random(7)
    vault = root / "vault"
    for folder, (tag, words) in TOPICS.items():
        vocabulary = words.split()
        (vault / folder).mkdir(parents=True, exist_ok=True)
        for i in range(NOTES_PER_TOPIC):
            title = f"{vocabulary[i].capitalize()} {vocabulary[(i + 3) % len(vocabulary)]}"
            sentences = [" ".join(rng.sample(vocabulary, 7)).capitalize() + "." for _ in range(6)]
            link = f"\n\nSee [[{vocabulary[i + 1].capitalize()} {vocabulary[(i + 4) % len(vocabulary)]}]].\n" if i < NOTES_PER_TOPIC - 1 else "\n"
            text = f"---\ntags: [{tag}]\n---\n# {title}\n\n" + " ".join(sentences) + link
            (vault / folder / f"{title}.md").write_text(text, "utf-8")
    (vault / TWIN_A).write_text(f"# Feeding a starter\n\n{TWIN_TEXT}\n", "utf-8")
    (vault / TWIN_B).write_text("# Starter feeding routine\n\nTwice a day the sourdough starter gets equal weights of "
                                "flour and water; discard half first, keep the jar warm, and the levain rises.\n", "utf-8")  # fmt: skip
    (vault / LONE).parent.mkdir(parents=True, exist_ok=True)
    (vault / LONE).write_text("# Birthday gift ideas for Mum\n\n- A framed photo from the Lisbon trip\n"
                              "- Tickets to the string quartet in March\n- A scarf in her favourite green\n", "utf-8")  # fmt: skip
    return vault


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    from vaultseek.web.server import BackgroundServer

    root = tmp_path_factory.mktemp("map")
    vault = make_map_vault(root)
    with StandinLLM() as standin:
        app = make_app(vault, root / "index.db", standin.url)
        try:
            with BackgroundServer(app) as server:
                yield Site(server.url, standin, vault)
        finally:
            app.notebook.close()


def vault_paths(vault: Path) -> set[str]:
    return {p.relative_to(vault).as_posix() for p in vault.rglob("*.md")}


def get(site: Site, route: str, **params: Any) -> httpx.Response:
    return httpx.get(f"{site.url}{route}", params=params, timeout=120)


# ---- the routes ----------------------------------------------------------------------------------
def test_the_map_places_every_note_in_clusters(site: Site) -> None:
    answer = get(site, "/api/map")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert {"space", "deep_share", "built_at", "updated_at", "notes", "clusters", "missing_links", "notices"} <= set(body)
    notes = {note["path"]: note for note in body["notes"]}
    assert set(notes) == vault_paths(site.vault)
    cluster_ids = {cluster["id"] for cluster in body["clusters"]}
    assert len(cluster_ids) >= 2
    for note in notes.values():
        assert 0.0 <= note["x"] <= 1.0 and 0.0 <= note["y"] <= 1.0
        assert {"title", "cluster", "folder", "tags", "modified", "links", "role", "bridge", "density"} <= set(note)
    for cluster in body["clusters"]:
        assert cluster["label"] and cluster["size"] >= 1 and 0.0 <= cluster["x"] <= 1.0
    # The twins say the same thing and never link: a missing link, with its two passages.
    pairs = {frozenset((m["source"], m["target"])): m for m in body["missing_links"]}
    twins = pairs.get(frozenset((TWIN_A, TWIN_B)))
    assert twins is not None, list(pairs)[:10]
    assert twins["link"].startswith("[[") and twins["source_passage"]["text"] and twins["target_passage"]["text"]


def test_a_scoped_map_and_a_rebuilt_one(site: Site) -> None:
    scoped = get(site, "/api/map", folders="cooking").json()
    assert {note["path"] for note in scoped["notes"]} == {p for p in vault_paths(site.vault) if p.startswith("cooking/")}
    tagged = get(site, "/api/map", tags="law").json()
    assert {note["path"].split("/")[0] for note in tagged["notes"]} == {"law"}
    rebuilt = get(site, "/api/map", rebuild="true")
    assert rebuilt.status_code == 200
    assert {note["path"] for note in rebuilt.json()["notes"]} == vault_paths(site.vault)


def test_a_note_on_the_map_and_its_missing_links(site: Site) -> None:
    answer = get(site, "/api/map/note", path=TWIN_A, k=3)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["path"] == TWIN_A and {"id", "label"} <= set(body["cluster"])
    assert 1 <= len(body["neighbours"]) <= 3 and TWIN_A not in {n["path"] for n in body["neighbours"]}
    assert body["neighbours"][0]["path"] == TWIN_B and body["neighbours"][0]["linked"] is False
    assert body["neighbours"][0]["close"] is True  # the twins say the same thing
    lone = get(site, "/api/map/note", path=LONE, k=5).json()
    assert lone["neighbours"] and all(n["close"] is False for n in lone["neighbours"])  # only the nearest
    assert {frozenset((m["source"], m["target"])) for m in body["missing_links"]} >= {frozenset((TWIN_A, TWIN_B))}
    missing = get(site, "/api/map/missing", limit=1).json()["missing_links"]
    assert len(missing) == 1
    mine = get(site, "/api/map/missing", path=TWIN_B).json()["missing_links"]
    assert mine and all(TWIN_B in (m["source"], m["target"]) for m in mine)


def test_the_whole_map_is_answered_again_until_the_index_changes(tmp_path: Path) -> None:
    """Asked again, the whole map is the answer kept from the last time (the server says so in
    its Server-Timing; a reload with the ETag gets a 304), until the index changes: then a note
    written since is on it. Without links (limit=0) it comes quicker and lists none."""
    from starlette.testclient import TestClient

    vault = make_map_vault(tmp_path)
    with StandinLLM() as standin:
        app = make_app(vault, tmp_path / "index.db", standin.url)
        try:
            with TestClient(app, base_url="http://127.0.0.1") as client:
                first = client.get("/api/map")
                again = client.get("/api/map")
                assert "desc=made" in first.headers["server-timing"]
                assert "desc=kept" in again.headers["server-timing"] and again.content == first.content
                assert client.get("/api/map", headers={"If-None-Match": again.headers["etag"]}).status_code == 304
                bare = client.get("/api/map", params={"limit": "0"}).json()
                assert bare["missing_links"] == [] and len(bare["notes"]) == len(first.json()["notes"])
                (vault / "garden" / "new bed.md").write_text("# New bed\n\nA raised bed of compost and soil for tomato seedlings.\n", "utf-8")
                assert app.notebook.kb.ingest.sync().wait(60)
                changed = client.get("/api/map")
                assert "desc=made" in changed.headers["server-timing"]
                assert "garden/new bed.md" in {note["path"] for note in changed.json()["notes"]}
                assert client.get("/api/map", headers={"If-None-Match": again.headers["etag"]}).status_code == 200
                scoped = client.get("/api/map", params={"folders": "garden"})
                assert "desc=made" in scoped.headers["server-timing"] and "etag" not in scoped.headers
        finally:
            app.notebook.close()


@pytest.mark.parametrize(("route", "params", "status", "words"), [
    ("/api/map", {"colour": "cluster"}, 400, "unknown map parameter"),
    ("/api/map", {"rebuild": "maybe"}, 400, "rebuild must be true or false"),
    ("/api/map", {"modified_after": "last tuesday-ish"}, 400, ""),
    ("/api/map/note", {}, 400, "give a note"),
    ("/api/map/note", {"path": "nowhere/none.md"}, 404, ""),
    ("/api/map/note", {"path": TWIN_A, "k": "0"}, 400, "k must be a whole number"),
    ("/api/map/note", {"path": TWIN_A, "k": "ten"}, 400, "k must be a whole number"),
    ("/api/map/missing", {"limit": "100000"}, 400, "limit must be a whole number"),
])  # fmt: skip
def test_bad_map_requests_say_what_is_wrong(site: Site, route: str, params: dict[str, str], status: int, words: str) -> None:
    answer = get(site, route, **params)
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert words in error["message"] and error["message"]


# ---- the page ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def wait_drawn(page: Any) -> int:
    page.locator(".map-canvas[data-drawn]").wait_for(state="attached", timeout=30_000)
    return int(page.locator(".map-canvas").get_attribute("data-drawn"))


def inked(page: Any) -> int:
    """How many of the canvas's pixels are not blank."""
    return int(page.evaluate("""() => { const c = document.querySelector('.map-canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }"""))


def loneliest(page: Any) -> str:
    """The note drawn farthest from any other (so the pointer on it can mean no other), among
    those inside the window (the canvas may reach below it: a touch there would miss)."""
    return str(page.evaluate("""() => { const v = document.querySelector('.map-canvas').mapView;
      const top = v.canvas.getBoundingClientRect().top, bottom = window.innerHeight - top;
      let best = -1, far = -1;
      for (let i = 0; i < v.n; i++) {
        const a = v.screenOf(i); let near = Infinity;
        for (let j = 0; j < v.n; j++) if (j !== i) { const b = v.screenOf(j); near = Math.min(near, Math.hypot(a.x - b.x, a.y - b.y)); }
        const inside = a.x > 30 && a.y > 30 && a.x < v.width - 30 && a.y < Math.min(v.height, bottom) - 30;
        if (inside && near > far) { far = near; best = i; }
      }
      return v.paths[best]; }"""))


def point_of(page: Any, path: str) -> tuple[float, float]:
    """Where the note at ``path`` is drawn, in the page's coordinates."""
    at = page.evaluate("""(path) => { const v = document.querySelector('.map-canvas').mapView;
      const i = v.paths.indexOf(path); return i < 0 ? null : v.screenOf(i); }""", path)
    assert at is not None, path
    box = page.locator(".map-canvas").bounding_box()
    return box["x"] + at["x"], box["y"] + at["y"]


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_map_page(browser: Any, site: Site, width: str, tmp_path: Path) -> None:
    body = get(site, "/api/map").json()
    titles = {note["path"]: note["title"] for note in body["notes"]}
    page = open_page(browser, site, width, "#map")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    assert wait_drawn(page) == len(body["notes"])
    assert inked(page) > len(body["notes"])  # every point is at least a few pixels
    assert page.locator(".map-summary").inner_text().startswith(f"{len(body['notes'])} notes · ")
    assert page.locator(".map-legend li").count() >= 2

    # Wheel and drag move the view; Fit brings every note back.
    camera = "(() => { const v = document.querySelector('.map-canvas').mapView; return [v.zoom, v.cx, v.cy]; })()"
    fitted = page.evaluate(camera)
    box = page.locator(".map-canvas").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    page.wait_for_timeout(100)
    assert page.evaluate(camera)[0] > fitted[0] * 1.5
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 80, box["y"] + box["height"] / 2 + 40, steps=5)
    page.mouse.up()
    assert page.evaluate(camera)[1] < fitted[1]
    page.locator(".map-zoom button", has_text="Fit").click()
    assert page.evaluate(camera) == fitted
    assert page.locator(".map-note").is_hidden()  # a drag is not a click
    # … and so do the keys: + zooms, 0 fits, Enter opens the note nearest the middle.
    page.locator(".map-canvas").focus()
    page.keyboard.press("+")
    assert page.evaluate(camera)[0] > fitted[0]
    page.keyboard.press("0")
    assert page.evaluate(camera) == fitted
    middle = page.evaluate("(() => { const v = document.querySelector('.map-canvas').mapView; v.centreOn(0); return v.titles[0]; })()")
    page.keyboard.press("Enter")
    page.locator(".map-note h2", has_text=middle).wait_for()
    page.locator(".map-note button[aria-label='Close the note']").click()
    page.locator(".map-zoom button", has_text="Fit").click()

    # Hover a point: its title, then its opening words.
    lone = loneliest(page)
    x, y = point_of(page, lone)
    page.mouse.move(x, y)
    tip = page.locator(".map-tip")
    tip.wait_for()
    assert tip.locator(".map-tip-title").inner_text() == titles[lone]
    page.locator(".map-tip-snippet").filter(has_text=re.compile(r"\w{4}")).wait_for()

    # Search: the hits lit up, the rest dimmed.
    page.locator(".map-toolbar input[name=q]").fill("tenancy lease landlord")
    page.keyboard.press("Enter")
    page.locator(".map-search-meta", has_text="lit up").wait_for()
    lit = set(page.evaluate("() => { const v = document.querySelector('.map-canvas').mapView; return v.litList.map((i) => v.paths[i]); }"))
    found = get(site, "/api/search", q="tenancy lease landlord", view="notes", k="50").json()["results"]
    answering = {r["path"] for r in found if max(s["relevance"] for s in r["sections"]) >= 0.2}
    assert lit == answering and {p.split("/")[0] for p in lit} == {"law"} and len(lit) < len(found)
    no_sideways_scroll(page)
    page.mouse.move(1, 1)
    tip.wait_for(state="hidden")
    shot(page, f"map-{WIDTHS[width][0]}")
    page.locator(".map-toolbar button", has_text="Clear").click()
    assert page.evaluate("document.querySelector('.map-canvas').mapView.lit") is None

    # Click a point: the note beside the map (a bottom sheet on a phone), its neighbours loaded.
    x, y = point_of(page, lone)
    page.mouse.click(x, y)
    note = page.locator(".map-note")
    note.locator("h2", has_text=titles[lone]).wait_for()
    note.locator(".map-list button").first.wait_for()
    note.locator(".map-section .muted", has_text="Loading").first.wait_for(state="detached")
    assert note.locator(".notice.error").count() == 0
    box = note.bounding_box()
    viewport = page.viewport_size
    if width == "phone":
        assert abs(box["y"] + box["height"] - viewport["height"]) < 2 and box["width"] == viewport["width"]
    shot(page, f"map-note-{WIDTHS[width][0]}")
    # Its related notes as the server judged them: the ones only among the nearest marked so.
    related = get(site, "/api/related", path=lone, k="8").json()
    nearest, related_section = note.locator(".map-section").nth(0), note.locator(".map-section").nth(2)
    assert related_section.locator(".map-weak").count() == sum(r["close"] is False for r in related["results"])
    assert related_section.locator(".map-nothing-close").count() == int(related["nothing_close"])
    on_map = get(site, "/api/map/note", path=lone, k="10").json()["neighbours"]
    assert nearest.locator(".map-weak").count() == sum(n["close"] is False for n in on_map)
    note.locator("button[aria-label='Close the note']").click()
    assert note.is_hidden()
    # A note nothing is close to says so above its nearest, each drawn as weak.
    page.mouse.click(*point_of(page, LONE))
    related_section.locator(".map-nothing-close").wait_for()
    assert related_section.locator(".map-weak").count() == len(get(site, "/api/related", path=LONE, k="8").json()["results"]) > 0
    assert related_section.locator(".map-list .badge", has_text="not close").count() == 0  # the line says it once
    # Its nearest on the map too: no percentage for a note that is only the nearest.
    nearest.locator(".map-nothing-close").wait_for()
    assert nearest.locator(".map-weak").count() == nearest.locator(".map-list > li").count() > 0
    assert "% alike" not in nearest.inner_text()
    nearest.locator(".map-nothing-close").scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / f"map-note-lonely-{WIDTHS[width][0]}.png"))  # looked at, not published
    note.locator("button[aria-label='Close the note']").click()

    # A missing link: copy its [[link]].
    first = body["missing_links"][0]
    item = page.locator(".map-missing > .map-missing-list > .map-missing-item").first
    assert (item.get_attribute("data-source"), item.get_attribute("data-target")) == (first["source"], first["target"])
    item.scroll_into_view_if_needed()
    expected = item.locator(".map-copy code").inner_text()
    assert expected == first["link"]
    item.locator(".map-copy").click()
    page.locator(".toast", has_text="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == expected and expected.startswith("[[")
    # … and open one of its notes at the passage.
    item.locator(".map-passage").first.click()
    page.locator("#panel .passage.cited").wait_for()
    page.keyboard.press("Escape")

    # A note opens in the knowledge base: its row found, its text in the side panel.
    page.locator(".map-canvas").scroll_into_view_if_needed()
    page.mouse.click(*point_of(page, lone))
    note.locator("button", has_text="In the knowledge base").click()
    page.locator(".kb-row").first.wait_for()
    page.locator("#panel .passage").first.wait_for()
    assert page.evaluate("location.hash") == "#kb"
    assert page.locator(".kb-toolbar input[name=q]").input_value() == lone.split("/")[-1]
    assert page.locator("#panel-where").inner_text().startswith(lone)
    assert page.errors == [] and page.outside == []


def test_a_phone_pans_and_pinches_with_fingers(browser: Any, site: Site) -> None:
    """Touch, as a phone sends it (Chromium's touch events): one finger pans, two pinch to
    zoom around their middle, a tap opens the note under it."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = context.new_page()
    page.goto(site.url + "/#map")
    wait_drawn(page)
    cdp = context.new_cdp_session(page)
    camera = "(() => { const v = document.querySelector('.map-canvas').mapView; return [v.zoom, v.cx, v.cy]; })()"
    box = page.locator(".map-canvas").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    def touch(kind: str, *points: tuple[float, float]) -> None:
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [
            {"x": x, "y": y, "id": i} for i, (x, y) in enumerate(points)]})  # fmt: skip

    before = page.evaluate(camera)
    touch("touchStart", (cx, cy))
    for step in range(1, 6):
        touch("touchMove", (cx + 12 * step, cy))
    touch("touchEnd")
    panned = page.evaluate(camera)
    assert panned[1] < before[1] and panned[0] == before[0]
    touch("touchStart", (cx - 20, cy), (cx + 20, cy))
    for step in range(1, 6):
        touch("touchMove", (cx - 20 - 15 * step, cy), (cx + 20 + 15 * step, cy))
    touch("touchEnd")
    assert page.evaluate(camera)[0] > before[0] * 2
    page.locator(".map-zoom button", has_text="Fit").tap()
    settled, seen = None, page.evaluate(camera)
    while settled != seen:  # Fit may take a frame or two to land
        page.wait_for_timeout(50)
        settled, seen = seen, page.evaluate(camera)
    lone = loneliest(page)
    x, y = point_of(page, lone)
    touch("touchStart", (x, y))
    touch("touchEnd")
    page.locator(".map-note h2").wait_for()
    context.close()


def test_an_empty_vault_says_so(browser: Any, tmp_path: Path) -> None:
    from vaultseek.web.server import BackgroundServer

    vault = tmp_path / "vault"
    vault.mkdir()
    with StandinLLM() as standin:
        app = make_app(vault, tmp_path / "index.db", standin.url)
        try:
            with BackgroundServer(app) as server:
                page = open_page(browser, Site(server.url, standin, vault), "phone", "#map")
                state = page.locator(".map-state")
                state.locator("text=No notes to map yet").or_(state.locator("text=The map is not available")).wait_for()
                assert state.locator(".notice small").inner_text()  # says what to do
                no_sideways_scroll(page)
                assert [e for e in page.errors if "503" not in e] == []
        finally:
            app.notebook.close()
