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
* the knowledge-base page's first render in headless Chromium (Debian's ``chromium`` through
  Playwright): from navigating to ``/#kb`` until the first page of rows is on screen, against
  a navigation to the same app's page that renders nothing of the list.

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


def first_render(url: str, runs: int) -> dict[str, list[float]] | None:
    """Milliseconds from the start of the navigation to ``/#kb`` until the page has put its
    first rows on screen (its ``kb-first-rows`` performance mark), and, as the baseline, to the
    load event of the same app opened on ``/#privacy`` (the shell and its modules, no list);
    both read from the page's own performance timeline, a cold cache each time."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path(chromium).exists():
        return None
    kb, shell = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])  # fmt: skip
        for _ in range(runs):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.goto(url + "/#kb", wait_until="commit")
            page.locator(".kb-row").nth(49).wait_for(timeout=60_000)
            kb.append(page.evaluate("performance.getEntriesByName('kb-first-rows')[0].startTime"))
            context.close()
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.goto(url + "/#privacy", wait_until="load")
            shell.append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
            context.close()
        browser.close()
    return {"kb_render_ms": kb, "shell_load_ms": shell}


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
            with BackgroundServer(app) as server:
                results: dict[str, Any] = {"files": len(paths), "chunks": chunks, "index_seconds": index_seconds,
                                           "load_before": round(os.getloadavg()[0], 1)}  # fmt: skip
                results["rebuilt_ms"] = rebuilt
                results["refiled_ms"] = refiled
                results.update(api_figures(server.url, args.runs))
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
    if results["browser"]:
        browser = results["browser"]
        rows.append(("first render of the page in Chromium (50 rows on screen)", f"{p50(browser['kb_render_ms'])} ms",
                     "≤ 300 ms", f"the app's privacy page to its load event: {p50(browser['shell_load_ms'])} ms"))  # fmt: skip
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
