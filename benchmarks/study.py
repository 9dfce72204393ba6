"""``python -m benchmarks.study``: the study app's figures, each beside a baseline
measured in the same run, on a generated vault (no shared data needed).

* time to the first streamed byte of ``POST /api/chat`` (stand-in LLM over real HTTP), against
  the stand-in's own time to first byte when asked directly;
* the first page load on localhost: HTML + CSS + JS over HTTP, and (when Playwright and
  Debian's chromium are there) a real headless Chromium navigation to the load event;
* search from the UI's API (``/api/search``, server time) against ``Index.search`` alone.

Prints a Markdown table (docs/benchmarks.md's); ``--json FILE`` writes the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from tests.support.standin_llm import StandinLLM

WORDS = (
    "tenancy notice contract payment invoice oauth token rotation refresh bread starter flour "
    "kitchen garden tomato watering budget quarter revenue margin meeting agenda project deadline "
    "release deploy server database index query vector cosine lexical ranking fusion chapter "
    "lecture exam biology cell protein enzyme history empire treaty war economy market price"
).split()
QUERIES = ["notice period for a tenancy", "how to rotate refresh tokens", "quarterly revenue margin",
           "protein enzyme in the cell", "deploy the database server", "feeding the bread starter"]  # fmt: skip


def build_vault(root: Path, files: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    vault = root / "vault"
    for i in range(files):
        folder = rng.choice(["law", "work", "study", "kitchen", "notes"])
        sections = "\n\n".join(
            f"## {' '.join(rng.choices(WORDS, k=3)).title()}\n\n" + " ".join(rng.choices(WORDS, k=rng.randint(40, 120)))
            for _ in range(rng.randint(1, 4))
        )
        target = vault / folder / f"note{i:05d}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"# Note {i}\n\n{sections}\n", encoding="utf-8")
    return vault


def p50(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def _first_byte_ms(http: httpx.Client, url: str, body: dict[str, object]) -> float:
    """Milliseconds from sending a streaming POST to its first body bytes (the rest is read
    and dropped, so the connection is clean for the next request)."""
    started = time.perf_counter()
    with http.stream("POST", url, json=body) as response:
        chunks = response.iter_raw()
        next(chunks)
        elapsed = (time.perf_counter() - started) * 1000
        for _rest in chunks:
            pass
    return elapsed


def direct_ttfb(url: str, runs: int) -> list[float]:
    body = {"model": "standin", "stream": True, "messages": [{"role": "system", "content": "[1] a.md\ntext"},
                                                              {"role": "user", "content": "question"}]}  # fmt: skip
    with httpx.Client(timeout=30) as http:
        return [_first_byte_ms(http, f"{url}/api/chat", body) for _ in range(runs)]


def chat_ttfb(url: str, runs: int) -> list[float]:
    with httpx.Client(base_url=url, timeout=30) as http:
        return [
            _first_byte_ms(http, "/api/chat", {"question": QUERIES[i % len(QUERIES)], "tools": False})
            for i in range(runs)
        ]


_ASSET = re.compile(r'(?:href|src)="(/static/[^"]+)"')


def page_load_http(url: str, runs: int) -> list[float]:
    """The page and every stylesheet and script it names (under their versioned URLs), one
    after another over a fresh connection."""
    out = []
    for _ in range(runs):
        with httpx.Client(base_url=url, timeout=30) as http:  # a fresh client: no warm connection
            started = time.perf_counter()
            html = http.get("/").text
            assets = _ASSET.findall(html)
            if not any(a.endswith(".css") for a in assets) or not any(a.endswith("/shell.js") for a in assets):
                raise SystemExit(f"the page names no stylesheet or no shell.js: {assets}")
            for asset in assets:
                http.get(asset).raise_for_status()
            out.append((time.perf_counter() - started) * 1000)
    return out


def page_load_browser(url: str, runs: int) -> list[float] | None:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path(chromium).exists():
        return None
    out = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])  # fmt: skip
        for _ in range(runs):
            context = browser.new_context()  # a cold cache each time
            page = context.new_page()
            started = time.perf_counter()
            page.goto(url + "/", wait_until="load")
            out.append((time.perf_counter() - started) * 1000)
            context.close()
        browser.close()
    return out


def search_times(url: str, index: Any, runs: int) -> tuple[list[float], list[float], list[float]]:
    server, client, engine = [], [], []
    with httpx.Client(base_url=url, timeout=30) as http:
        for i in range(runs):
            query = QUERIES[i % len(QUERIES)]
            started = time.perf_counter()
            response = http.get("/api/search", params={"q": query, "k": 10})
            client.append((time.perf_counter() - started) * 1000)
            server.append(float(response.headers["Server-Timing"].partition("dur=")[2]))
            started = time.perf_counter()
            index.search(query, k=10)
            engine.append((time.perf_counter() - started) * 1000)
    return server, client, engine


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.study")
    parser.add_argument("--files", type=int, default=2000, help="notes in the generated vault")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)

    from vaultseek.config import load_config
    from vaultseek.engine import Index
    from vaultseek.web.app import create_app
    from vaultseek.web.server import BackgroundServer

    with tempfile.TemporaryDirectory() as scratch, StandinLLM() as standin:
        root = Path(scratch)
        vault = build_vault(root, args.files)
        config = load_config(vault=vault, db=root / "index.db", llm_url=standin.url, llm_model="standin")
        with Index(config, create=True) as index:
            index.sync(remember=False)
            chunks = index.status().chunks
            app = create_app(lambda: Index(config, create=True), config)
            app.notebook.kb.ingest.idle.wait(600)
            with BackgroundServer(app) as server:
                chat_ttfb(server.url, 3)  # warm: model, vectors, connections
                results = {
                    "files": args.files, "chunks": chunks,
                    "chat_ttfb_ms": chat_ttfb(server.url, args.runs),
                    "llm_ttfb_ms": direct_ttfb(standin.url, args.runs),
                    "page_http_ms": page_load_http(server.url, args.runs),
                    "page_browser_ms": page_load_browser(server.url, 5),
                }  # fmt: skip
                index.search("warm up", k=1)
                server_ms, client_ms, engine_ms = search_times(server.url, index, args.runs)
                results.update(search_server_ms=server_ms, search_client_ms=client_ms, engine_search_ms=engine_ms)
            app.notebook.close()
    rows = [
        ("time to first byte of /api/chat (stand-in LLM)", p50(results["chat_ttfb_ms"]), "≤ 150 ms",
         f"stand-in LLM's own first byte: {p50(results['llm_ttfb_ms'])} ms"),
        ("first page load: HTML + CSS + JS over HTTP", p50(results["page_http_ms"]), "≤ 1,000 ms", "—"),
    ]  # fmt: skip
    if results["page_browser_ms"]:
        rows.append(("first page load: headless Chromium to the load event", p50(results["page_browser_ms"]), "≤ 1,000 ms", "—"))
    rows += [
        ("search from the UI (/api/search), server time", p50(results["search_server_ms"]), "≤ 100 ms",
         f"Index.search alone: {p50(results['engine_search_ms'])} ms"),
        ("search from the UI, round trip at the client", p50(results["search_client_ms"]), "—", "—"),
    ]  # fmt: skip
    print(f"Generated vault: {results['files']} notes, {results['chunks']} chunks; p50 of {args.runs} runs "
          f"(browser: 5).\n")  # fmt: skip
    print("| figure | p50 (ms) | target | baseline, same run |")
    print("|---|---|---|---|")
    for name, value, target, baseline in rows:
        print(f"| {name} | {value} | {target} | {baseline} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
