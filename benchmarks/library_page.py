"""``python -m benchmarks.library_page``: the knowledge-base page at 20k files.

Builds a generated vault of small files (notes, text files and CSV tables in nested folders,
with long real-looking names), indexes it, files a fifth of it under categories, and serves
the study app. Then, each beside a baseline measured in the same run:

* the payload of one page of ``GET /api/documents`` (the default 50 rows, and the largest
  page of 200) against the whole list in one answer, which is what the page fetched before it
  was paged;
* the server time of a page — first page, a search, a sort by size, the last page, a folder
  and a category filter — and of the folder tree (``GET /api/documents/tree``), against a page
  made right after the list changed (read again from every row of the index);
* the round trip of one of the app's static files, against a bare HTML page answered by the
  same server in front of the app;
* the knowledge-base page's first render in headless Chromium (Debian's ``chromium`` through
  Playwright): from navigating to ``/#kb`` until the first page of rows is on screen, and the
  app's shell to its load event, each with a cold cache and reloaded, against a bare HTML page
  served by the same server (:func:`first_render`).

Prints a Markdown table (docs/benchmarks.md's); ``--json FILE`` writes the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from tests.support.standin_llm import StandinLLM

TOPICS = (
    "tenancy", "contract", "invoice", "oauth", "token rotation", "sourdough", "garden", "budget",
    "revenue", "meeting", "deploy", "database", "lecture", "biology", "protein", "history",
    "treaty", "economy", "market", "chapter", "exam", "enzyme", "release", "agenda",
)  # fmt: skip
WORDS = " ".join(TOPICS).split() + "the a of for and with notes draft final review summary".split()
FOLDERS = ("Work", "Study", "Personal", "Archive", "Projects", "Reading", "Admin", "Kitchen")
SUBFOLDERS = ("2022", "2023", "2024", "drafts", "meetings", "lectures", "receipts", "misc")
CATEGORIES = ("law", "finance", "biology", "cooking", "engineering")


def build_vault(root: Path, files: int, seed: int = 0) -> Path:
    """``files`` small files under ``root/vault``: eight top folders with eight subfolders
    each, nine in ten Markdown notes, the rest plain text and CSV tables; names of 3–9 words,
    some long enough to wrap on a phone."""
    rng = random.Random(seed)
    vault = root / "vault"
    for i in range(files):
        folder = f"{rng.choice(FOLDERS)}/{rng.choice(SUBFOLDERS)}"
        words = rng.choices(TOPICS, k=rng.randint(3, 9))
        stem = f"{' '.join(words).capitalize()} {i:05d}"
        roll = rng.random()
        if roll < 0.9:
            name, text = f"{stem}.md", f"# {stem}\n\n" + " ".join(rng.choices(WORDS, k=rng.randint(20, 60))) + "\n"
        elif roll < 0.96:
            name, text = f"{stem}.txt", " ".join(rng.choices(WORDS, k=rng.randint(20, 60))) + "\n"
        else:
            rows = "\n".join(f"{rng.choice(TOPICS)},{rng.randint(1, 999)}" for _ in range(5))
            name, text = f"{stem}.csv", f"item,amount\n{rows}\n"
        target = vault / folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return vault


def p50(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def _server_ms(response: httpx.Response) -> float:
    return float(response.headers["Server-Timing"].partition("dur=")[2])


def api_figures(url: str, runs: int) -> dict[str, Any]:
    """Payload sizes and server times of the list and the tree."""
    out: dict[str, Any] = {}
    with httpx.Client(base_url=url, timeout=120) as http:
        first = http.get("/api/documents")
        first.raise_for_status()
        total = first.json()["total"]
        out["total"] = total
        out["page_bytes"] = len(first.content)
        out["page_200_bytes"] = len(http.get("/api/documents", params={"limit": 200}).content)
        started = time.perf_counter()
        everything = [http.get("/api/documents", params={"offset": offset, "limit": 200}).json()["items"]
                      for offset in range(0, total, 200)]  # fmt: skip
        out["all_pages_ms"] = round((time.perf_counter() - started) * 1000, 1)
        whole = json.dumps({"documents": [row for page in everything for row in page]}).encode()
        out["whole_list_bytes"] = len(whole)
        asks = {
            "first_page": {},
            "search": {"q": "protein"},
            "sort_size": {"sort": "size", "order": "desc"},
            "deep_page": {"offset": total - 50},
            "folder": {"folder": "Work/2024"},
            "category": {"category": "biology"},
        }
        for name, params in asks.items():
            times = []
            for _ in range(runs):
                response = http.get("/api/documents", params=params)
                response.raise_for_status()
                times.append(_server_ms(response))
            out[f"{name}_ms"] = times
        tree_times = []
        for _ in range(runs):
            response = http.get("/api/documents/tree")
            response.raise_for_status()
            tree_times.append(_server_ms(response))
        out["tree_ms"] = tree_times
        out["tree_bytes"] = len(response.content)
    return out


BARE_PAGE = "/bench/bare.html"
BARE_HTML = (b"<!doctype html><html lang=en><head><meta charset=utf-8><title>bare</title></head>"
             b"<body><h1>A bare page</h1><p>One request, no style sheet, no script.</p></body></html>")  # fmt: skip


class WithBarePage:
    """The app, plus :data:`BARE_PAGE` answered by the same server: the baseline of the
    browser figures (what Chromium, uvicorn and this machine cost for a page that does
    nothing)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != BARE_PAGE:
            await self.app(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-cache"),
                                (b"content-length", str(len(BARE_HTML)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": BARE_HTML})


def static_figures(url: str, runs: int) -> dict[str, list[float]]:
    """Round trips at the client of one of the app's files (``js/ui.js``, through the app's
    guard and router) and of :data:`BARE_PAGE` (answered before them), on one connection."""
    out: dict[str, list[float]] = {"static_ms": [], "bare_ms": []}
    with httpx.Client(base_url=url, timeout=60) as http:
        for _ in range(runs):
            for key, path in (("static_ms", "/static/js/ui.js"), ("bare_ms", BARE_PAGE)):
                started = time.perf_counter()
                http.get(path).raise_for_status()
                out[key].append(round((time.perf_counter() - started) * 1000, 2))
    return out


LOAD_EVENT = "performance.getEntriesByType('navigation')[0].loadEventEnd"
FIRST_ROWS = "performance.getEntriesByName('kb-first-rows')[0].startTime"
FETCHED = ("[performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]"
           ".filter((r) => r.transferSize > 0).length")  # fmt: skip
"""Requests the page sent to the server (a response taken from the browser's cache has no
transfer; a 304 has its headers')."""


def first_render(url: str, runs: int) -> dict[str, list[float]] | None:
    """Headless Chromium, each figure read from the page's own performance timeline, cold (a
    new browser context: empty cache) and warm (the same page reloaded):

    * ``kb``: from the start of the navigation to ``/#kb`` until the page has put its first
      rows on screen (its ``kb-first-rows`` performance mark);
    * ``shell``: to the load event of the app opened on ``/#privacy`` (the shell and its
      modules, no list);
    * ``bare``: to the load event of :data:`BARE_PAGE`, the baseline;

    and how many requests a warm reload of ``/#kb`` sends."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path(chromium).exists():
        return None
    out: dict[str, list[float]] = {f"{name}_{state}_ms": [] for name in ("kb", "shell", "bare") for state in ("cold", "warm")}
    out["kb_warm_requests"] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])  # fmt: skip
        for _ in range(runs):
            for name, path, figure in (("bare", BARE_PAGE, LOAD_EVENT), ("kb", "/#kb", FIRST_ROWS), ("shell", "/#privacy", LOAD_EVENT)):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                for state in ("cold", "warm"):
                    if state == "cold":
                        page.goto(url + path, wait_until="load")
                    else:
                        page.reload(wait_until="load")
                    if name == "kb":
                        page.locator(".kb-row").nth(49).wait_for(timeout=60_000)
                        if state == "warm":
                            out["kb_warm_requests"].append(page.evaluate(FETCHED))
                    else:
                        page.wait_for_function(f"{LOAD_EVENT} > 0")
                    out[f"{name}_{state}_ms"].append(round(page.evaluate(figure), 1))
                context.close()
        browser.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.library_page")
    parser.add_argument("--files", type=int, default=20_000, help="files in the generated vault")
    parser.add_argument("--runs", type=int, default=20, help="API runs per figure")
    parser.add_argument("--browser-runs", type=int, default=5)
    parser.add_argument("--workdir", metavar="DIR", help="keep the vault and index here (reused when present)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)

    from vaultseek.config import load_config
    from vaultseek.engine import Index
    from vaultseek.study.catalogue import DocumentQuery
    from vaultseek.web.app import create_app
    from vaultseek.web.server import BackgroundServer

    with tempfile.TemporaryDirectory() as scratch, StandinLLM() as standin:
        root = Path(args.workdir) if args.workdir else Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        vault = root / "vault"
        if not vault.exists():
            build_vault(root, args.files)
        config = load_config(vault=vault, db=root / "index.db", llm_url=standin.url, llm_model="standin")
        started = time.perf_counter()
        with Index(config, create=True) as index:
            index.sync(remember=False)
            chunks = index.status().chunks
        index_seconds = round(time.perf_counter() - started, 1)
        app = create_app(lambda: Index(config, create=True), config)
        try:
            kb = app.notebook.kb
            kb.ingest.idle.wait(600)
            rng = random.Random(1)
            paths = sorted(row[0] for row in kb.listing_rows())
            for path in rng.sample(paths, len(paths) // 5):
                kb.store.set_category(path, rng.choice(CATEGORIES))
            kb.filed += 1  # filed behind the knowledge base's back: say so
            rebuilt = []
            for _ in range(5):  # a page right after the index or the categories changed
                kb.filed += 1
                started = time.perf_counter()
                kb.list_documents(DocumentQuery())
                rebuilt.append((time.perf_counter() - started) * 1000)
            kb.list_documents(DocumentQuery())
            refiled = []
            for path in paths[:5]:  # a page right after a file was re-filed: the kept list is patched
                kb.set_category(path, "reading")
                started = time.perf_counter()
                kb.list_documents(DocumentQuery(category="reading"))
                refiled.append((time.perf_counter() - started) * 1000)
            with BackgroundServer(WithBarePage(app)) as server:
                results: dict[str, Any] = {"files": len(paths), "chunks": chunks, "index_seconds": index_seconds,
                                           "load_before": round(os.getloadavg()[0], 1)}  # fmt: skip
                results["rebuilt_ms"] = rebuilt
                results["refiled_ms"] = refiled
                results.update(api_figures(server.url, args.runs))
                results.update(static_figures(server.url, args.runs * 5))
                results["browser"] = first_render(server.url, args.browser_runs)
                results["load_after"] = round(os.getloadavg()[0], 1)
        finally:
            app.notebook.close()
    kib = 1024
    rows = [
        ("payload of one page (50 rows)", f"{results['page_bytes'] / kib:.1f} KB", "≤ 100 KB",
         f"the whole list in one answer: {results['whole_list_bytes'] / kib:,.0f} KB"),
        ("payload of the largest page (200 rows)", f"{results['page_200_bytes'] / kib:.1f} KB", "—", "—"),
        ("folder and category tree: payload", f"{results['tree_bytes'] / kib:.1f} KB", "—", "—"),
    ]  # fmt: skip
    for name, label in (("first_page", "first page"), ("search", "search `q=protein`"), ("sort_size", "sorted by size"),
                        ("deep_page", "last page"), ("folder", "one folder"), ("category", "one category"),
                        ("tree", "folder and category tree")):  # fmt: skip
        rows.append((f"server time: {label}", f"{p50(results[f'{name}_ms'])} ms", "—", "—"))
    rows.append(("first page after a change (the list made again from every row), in process",
                 f"{p50(results['rebuilt_ms'])} ms", "—", f"a page from the kept list: {p50(results['first_page_ms'])} ms"))
    rows.append(("a category's page right after a file was re-filed, in process", f"{p50(results['refiled_ms'])} ms", "—", "—"))
    rows.append(("round trip of one of the app's files (`js/ui.js`, 14 KB), at the client", f"{p50(results['static_ms'])} ms",
                 "—", f"the bare page through the same server: {p50(results['bare_ms'])} ms"))  # fmt: skip
    if results["browser"]:
        browser = results["browser"]
        for state, label in (("cold", "a cold cache"), ("warm", "reloaded")):
            bare = p50(browser[f"bare_{state}_ms"])
            kb, shell = p50(browser[f"kb_{state}_ms"]), p50(browser[f"shell_{state}_ms"])
            rows.append((f"first render of the page in Chromium (50 rows on screen), {label}", f"{kb} ms", "≤ 300 ms",
                         f"a bare HTML page to its load event: {bare} ms ({kb / bare:.1f}×)"))
            rows.append((f"the app's shell (privacy page) to its load event, {label}", f"{shell} ms", "—",
                         f"the bare page: {bare} ms ({shell / bare:.1f}×)"))  # fmt: skip
        rows.append(("requests a reload of the page sends", f"{p50(browser['kb_warm_requests']):.0f}", "—", "—"))
    print(f"Generated vault: {results['files']:,} files, {results['chunks']:,} chunks (index run: "
          f"{results['index_seconds']} s); p50 of {args.runs} API runs, {args.browser_runs} browser runs; "
          f"load average {results['load_before']} before, {results['load_after']} after.\n")  # fmt: skip
    print("| figure | value | target | baseline, same run |")
    print("|---|---|---|---|")
    for name, value, target, baseline in rows:
        print(f"| {name} | {value} | {target} | {baseline} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
