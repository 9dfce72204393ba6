"""The front end's files as the app serves them: the page names its files under the build's
version (cached for good), the plain ``/static/`` paths are revalidated (ETag, 304), the one
stylesheet carries every page's styles, and in headless Chromium a reload of the page asks the
server for nothing but the page and its data, while a cold load asks for the opening section's
module up front (no import waterfall)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from tests.support.browser import chromium

STATIC = Path(__file__).resolve().parent.parent / "src" / "vaultseek" / "web" / "static"


def page_urls(html: str) -> list[str]:
    return re.findall(r'(?:href|src)="(/static/[^"]+)"', html)


def test_the_page_names_versioned_files_cached_for_good(client: Any) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.headers["cache-control"] == "no-cache" and page.headers["etag"]
    csp = page.headers["content-security-policy"]
    assert "script-src 'self';" in csp and "style-src 'self';" in csp and "unsafe" not in csp
    urls = page_urls(page.text)
    versions = {url.split("/")[2] for url in urls}
    assert len(versions) == 1 and re.fullmatch(r"[0-9a-f]{12}", versions.pop()), urls
    assert [url for url in urls if url.endswith(".css")] == [url for url in urls if url.endswith("/css/all.css")]
    assert len([url for url in urls if url.endswith(".css")]) == 1  # one stylesheet
    assert any(url.endswith("/js/ui.js") for url in urls)  # preloaded beside the shell
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable", url
        kind = "text/css" if url.endswith(".css") else "text/javascript"
        assert response.headers["content-type"].startswith(kind), (url, response.headers)
        assert response.headers["x-content-type-options"] == "nosniff"
    again = client.get("/", headers={"if-none-match": page.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


def test_plain_paths_are_revalidated_and_unknown_ones_refused(client: Any) -> None:
    plain = client.get("/static/js/shell.js")
    assert plain.status_code == 200 and plain.headers["cache-control"] == "no-cache"
    assert plain.content == (STATIC / "js" / "shell.js").read_bytes()
    etag = plain.headers["etag"]
    unchanged = client.get("/static/js/shell.js", headers={"if-none-match": f'W/{etag}, "other"'})
    assert unchanged.status_code == 304 and unchanged.content == b"" and unchanged.headers["etag"] == etag
    head = client.head("/static/js/shell.js")
    assert head.status_code == 200 and head.content == b"" and head.headers["content-length"] == str(len(plain.content))
    # A version this server did not make (a page opened before an upgrade) gets today's file,
    # revalidated rather than kept for good.
    stale = client.get("/static/0123456789ab/js/shell.js")
    assert stale.status_code == 200 and stale.content == plain.content and stale.headers["cache-control"] == "no-cache"
    for missing in ("/static/js/nothing.js", "/static/../app.py", "/static/%2e%2e/app.py", "/static/"):
        assert client.get(missing).status_code == 404, missing


def test_the_one_stylesheet_carries_every_page_in_order(client: Any) -> None:
    bundle = client.get("/static/css/all.css").text
    assert "@import" not in bundle
    parts = ["app.css", *(f"pages/{name}" for name in ("chat.css", "library.css", "search.css", "map.css", "hub.css",
                                                       "dashboard.css", "privacy.css")), "attachments.css"]  # fmt: skip
    places = []
    for part in parts:
        text = (STATIC / "css" / part).read_text("utf-8").strip()
        assert text in bundle, part
        places.append(bundle.index(text))
    assert places == sorted(places)  # the cascade's order is the import order


def test_a_reload_asks_only_for_the_page_and_its_data(live: Any) -> None:
    fetched = ("[performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]"
               ".filter((r) => r.transferSize > 0).map((r) => new URL(r.name).pathname)")  # fmt: skip
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 390, "height": 844})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(live.url + "/#kb")
        page.locator(".kb-row").first.wait_for()
        page.locator(".kb-tree .kb-root").wait_for(state="attached")  # folded above the list on a phone
        assert "null" not in (page.locator(".kb-tree").text_content() or "")  # no categories, one status: nothing shown
        # head.js asked for the section's module before the shell ran: a preload in the head.
        preloads = page.eval_on_selector_all("link[rel=modulepreload]", "(links) => links.map((l) => l.href)")
        assert any(href.endswith("/js/pages/library.js") for href in preloads), preloads
        assert not any("marked" in href for href in preloads)  # the list renders no Markdown
        cold = page.evaluate(fetched)
        assert any(path.endswith("/js/pages/library.js") for path in cold), cold
        page.reload()
        page.locator(".kb-row").first.wait_for()
        warm = page.evaluate(fetched)
        assert [path for path in warm if path.startswith("/static/")] == [], warm
        assert "/" in warm and "/api/documents" in warm
        assert errors == []
        context.close()


def test_head_preloads_exactly_what_each_section_imports() -> None:
    """head.js names each section's modules by hand (it runs before any module): they must be
    the page module's imports, followed through every file (static and dynamic ``import``),
    without ``ui.js``, which the shell itself imports (its own on-demand import of the
    Markdown modules, for the passage panel, is not the section's)."""
    js = Path(__file__).resolve().parents[1] / "src" / "vaultseek" / "web" / "static" / "js"
    found = re.compile(r"""(?:from\s+|import\s*\(\s*)["']([^"'`]+)["']""")

    def closure(relative: str) -> set[str]:
        seen: set[str] = set()
        todo = [relative]
        while todo:
            name = todo.pop()
            if name in seen or name == "ui.js":
                continue
            seen.add(name)
            folder = (js / name).parent
            for target in found.findall((js / name).read_text("utf-8")):
                todo.append(Path(os.path.relpath(folder / target, js)).as_posix())
        return seen

    head = (js / "head.js").read_text("utf-8")
    markdown = re.findall(r'"([^"]+)"', re.search(r"var MARKDOWN = \[(.*?)\];", head, re.S)[1])  # type: ignore[index]
    table = re.search(r"var MODULES = \{(.*?)\};", head, re.S)[1]  # type: ignore[index]
    sections = dict(re.findall(r"(\w+): (\[[^\]]*\](?:\.concat\(MARKDOWN\))?)", table))
    shell = (js / "shell.js").read_text("utf-8")
    routes = dict(re.findall(r'(\w+): \{ module: "(\w+)"', shell))
    assert set(sections) == set(routes)
    for section, listed in sections.items():
        named = set(re.findall(r'"([^"]+)"', listed)) | (set(markdown) if "MARKDOWN" in listed else set())
        assert named == closure(f"pages/{routes[section]}.js"), section
