"""``python -m benchmarks.mappage``: the study app's map page at 17k points, in Chromium.

The page is measured, not the map's computation (``vaultseek map``'s own figures measure
that): the app is served on a two-note vault, with ``GET /api/map`` answered by a map of the
contract's shape generated here (:func:`synthetic_map`: notes in clusters of different sizes
and spreads, titles, folders, tags, dates, missing links), so the page draws exactly as many
points as asked. For each size (17k points, and the baseline of a tenth of it, measured in the
same run), in headless Chromium (Debian's ``chromium`` through Playwright):

* first paint: from the start of the navigation to ``/#map`` until the first frame that drew
  every point (the page's ``map-points-drawn`` performance mark), with a cold cache;
* frames while panning and zooming: a scripted sequence of drags and wheel turns (mouse events
  sent as a user's would be), the interval between animation frames (requestAnimationFrame
  timestamps; 16.7 ms is a frame every screen refresh) and the time the page spent drawing each
  frame, p50 and p95.

Prints a Markdown table (docs/study.md's); ``--json FILE`` writes the raw numbers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
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

WORDS = ("docker container image kubernetes pod deploy tenancy lease notice contract invoice budget "
         "sourdough starter flour oven garden tomato compost protein enzyme cell lecture exam history "
         "treaty market economy token oauth rotation backup restore python typing async database index "
         "query search vector cluster map note link").split()  # fmt: skip
FOLDERS = ("Work", "Study", "Personal", "Archive", "Projects", "Reading", "Admin", "Kitchen", "Garden", "Inbox")
DAY = 86400.0


def synthetic_map(notes: int, seed: int = 0, *, now: float | None = None) -> dict[str, Any]:
    """A map of ``notes`` points in the JSON shape of ``GET /api/map``: about √n/3 clusters
    of uneven size and spread, a few notes between them, 200 missing links."""
    rng = random.Random(seed)
    now = time.time() if now is None else now
    count = max(3, round(math.sqrt(notes) / 3))
    centres = [(rng.uniform(0.08, 0.92), rng.uniform(0.08, 0.92), rng.uniform(0.015, 0.06)) for _ in range(count)]
    weights = [rng.paretovariate(1.4) for _ in range(count)]
    words = [rng.sample(WORDS, 3) for _ in range(count)]
    out_notes: list[dict[str, Any]] = []
    members: list[list[int]] = [[] for _ in range(count)]
    for i in range(notes):
        c = rng.choices(range(count), weights)[0]
        x0, y0, spread = centres[c]
        bridge = rng.random() < 0.03
        if bridge:
            other = centres[rng.randrange(count)]
            t = rng.random()
            x0, y0 = x0 + (other[0] - x0) * t, y0 + (other[1] - y0) * t
        x = min(1.0, max(0.0, rng.gauss(x0, spread)))
        y = min(1.0, max(0.0, rng.gauss(y0, spread)))
        topic = " ".join(rng.sample(words[c], 2) + rng.sample(WORDS, 1)).capitalize()
        folder = f"{FOLDERS[c % len(FOLDERS)]}/{rng.choice(('2023', '2024', 'drafts', 'notes'))}"
        members[c].append(i)
        out_notes.append({
            "path": f"{folder}/{topic} {i:05d}.md", "title": f"{topic} {i}", "x": round(x, 5), "y": round(y, 5),
            "cluster": c, "folder": folder, "tags": rng.sample(words[c], rng.randint(0, 2)),
            "modified": round(now - rng.expovariate(1 / 200) * DAY, 1), "links": rng.randint(0, 9),
            "role": "bridge" if bridge else rng.choice(("core", "member", "member", "member", "island")),
            "bridge": round(rng.random() if bridge else rng.random() * 0.2, 3), "density": round(rng.uniform(0.2, 0.8), 3),
        })  # fmt: skip
    clusters = []
    for c in range(count):
        if not members[c]:
            continue
        xs = [out_notes[i]["x"] for i in members[c]]
        ys = [out_notes[i]["y"] for i in members[c]]
        clusters.append({"id": c, "label": " · ".join(words[c]), "words": words[c],
                         "central": [out_notes[i]["path"] for i in members[c][:3]], "size": len(members[c]),
                         "x": round(statistics.fmean(xs), 5), "y": round(statistics.fmean(ys), 5),
                         "density": round(rng.uniform(0.3, 0.7), 3), "thin": False})  # fmt: skip
    missing = []
    for _ in range(min(200, notes // 2)):
        c = rng.choice([k for k in range(count) if len(members[k]) > 1])
        a, b = rng.sample(members[c], 2)
        missing.append({"source": out_notes[a]["path"], "target": out_notes[b]["path"],
                        "similarity": round(rng.uniform(0.7, 0.95), 3),
                        "source_passage": {"chunk_id": a, "heading": None, "text": "A passage of the first note."},
                        "target_passage": {"chunk_id": b, "heading": "Notes", "text": "A passage of the second."},
                        "link": f"[[{Path(out_notes[b]['path']).stem}]]"})  # fmt: skip
    missing.sort(key=lambda m: -float(m["similarity"]))
    return {"space": "static", "deep_share": 0.0, "built_at": now, "updated_at": now, "notes": out_notes,
            "clusters": clusters, "missing_links": missing, "notices": []}  # fmt: skip


class WithMap:
    """The app, with ``GET /api/map`` answered by :attr:`body` (the map being measured), or
    by the app itself while :attr:`body` is None."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.body: bytes | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/api/map" or self.body is None:
            await self.app(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(self.body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": self.body})


FIRST_PAINT = "performance.getEntriesByName('map-points-drawn')[0].startTime"
DATA = "performance.getEntriesByName('map-data')[0].startTime"
RECORD = """() => { window.__frames = []; const tick = (t) => { window.__frames.push(t);
  if (window.__recording) requestAnimationFrame(tick); }; window.__recording = true; requestAnimationFrame(tick);
  document.querySelector('.map-canvas').mapView.drawTimes.length = 0; }"""
STOP = """() => { window.__recording = false; return { frames: window.__frames,
  draws: document.querySelector('.map-canvas').mapView.drawTimes.slice() }; }"""


def gesture(page: Any) -> None:
    """Drags across the map and wheel turns in and out, as a user's mouse sends them."""
    box = page.locator(".map-canvas").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    for dx, dy in ((220, 80), (-300, -120), (120, 200)):
        page.mouse.move(cx, cy)
        page.mouse.down()
        page.mouse.move(cx + dx, cy + dy, steps=40)
        page.mouse.up()
    page.mouse.move(cx, cy)
    for delta in [-120] * 20 + [120] * 20:
        page.mouse.wheel(0, delta)
        page.wait_for_timeout(16)
    for dx, dy in ((-200, 60), (200, -60)):
        page.mouse.move(cx, cy)
        page.mouse.down()
        page.mouse.move(cx + dx, cy + dy, steps=30)
        page.mouse.up()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)


def measure(browser: Any, url: str, width: int, height: int) -> dict[str, Any]:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(url + "/#map")
    page.locator(".map-canvas[data-drawn]").wait_for(state="attached", timeout=60_000)
    out: dict[str, Any] = {"first_paint_ms": round(page.evaluate(FIRST_PAINT), 1), "data_ms": round(page.evaluate(DATA), 1)}
    page.wait_for_timeout(300)
    page.evaluate(RECORD)
    gesture(page)
    recorded = page.evaluate(STOP)
    frames = recorded["frames"]
    out["frame_ms"] = [round(b - a, 2) for a, b in itertools.pairwise(frames)]
    out["draw_ms"] = [round(d, 3) for d in recorded["draws"]]
    context.close()
    return out


def serve(vault: Path, db: Path, llm_url: str) -> Any:
    """The study app on ``vault`` (indexed into ``db``), once its first sync is over."""
    from vaultseek.config import load_config
    from vaultseek.engine import Index
    from vaultseek.web.app import create_app

    config = load_config(vault=vault, db=db, llm_url=llm_url, llm_model="standin")
    app = create_app(lambda: Index(config, create=True), config)
    if not app.notebook.kb.ingest.idle.wait(600):
        raise SystemExit("the vault's first sync did not finish in 10 minutes")
    return app


def picture(browser: Any, url: str, path: str) -> None:
    """The measured map at 1280 px, coloured by cluster, one note picked (the first missing
    link's), with its nearest notes loaded."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.goto(url + "/#map")
    page.locator(".map-canvas[data-drawn]").wait_for(state="attached", timeout=60_000)
    item = page.locator(".map-missing-item").first
    item.wait_for(timeout=120_000)
    item.locator("button", has_text="Show on map").click()
    page.locator(".map-note .map-list").first.wait_for(timeout=120_000)
    page.locator(".map-note .map-section .muted", has_text="Loading").first.wait_for(state="detached", timeout=120_000)
    page.locator(".map-zoom button", has_text="Fit").click()
    page.wait_for_timeout(300)
    page.screenshot(path=path)
    context.close()


def server_figures(url: str, runs: int) -> dict[str, Any]:
    """The server's time (its ``Server-Timing``) for the page's first request,
    ``GET /api/map?limit=0``: the first answer (the kept map read from the index, brought up to
    date, encoded) and the ones after it (the answer kept while the index is unchanged); and,
    at the client, the missing links the page asks for next."""
    times = []
    for _ in range(runs + 1):
        response = httpx.get(f"{url}/api/map", params={"limit": "0"}, timeout=600)
        response.raise_for_status()
        times.append(float(response.headers["Server-Timing"].partition("dur=")[2].partition(";")[0]))
    missing = []
    for _ in range(runs):
        started = time.perf_counter()
        httpx.get(f"{url}/api/map/missing", params={"limit": "100"}, timeout=600).raise_for_status()
        missing.append(round((time.perf_counter() - started) * 1000, 1))
    return {"first_ms": times[0], "then_ms": times[1:], "missing_ms": missing}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mappage")
    parser.add_argument("--points", type=int, default=16_894, help="points on the measured map (the benchmark vault's files)")
    parser.add_argument("--baseline", type=int, default=0, help="points on the baseline map (default: a tenth)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--vault", metavar="DIR", help="measure this vault's own map (indexed in --db) instead of a generated one")
    parser.add_argument("--db", metavar="FILE", help="the index of --vault")
    parser.add_argument("--shot", metavar="PNG", help="save a picture of the measured map at 1280 px here")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    if args.vault and not args.db:
        parser.error("--vault needs --db (the index it was indexed into)")
    baseline = args.baseline or max(10, args.points // 10)
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    from playwright.sync_api import sync_playwright

    from vaultseek.web.server import BackgroundServer

    results: dict[str, Any] = {"load_before": round(os.getloadavg()[0], 1)}
    with tempfile.TemporaryDirectory() as scratch, StandinLLM() as standin:
        root = Path(scratch)
        if args.vault:
            app = serve(Path(args.vault), Path(args.db), standin.url)
        else:
            vault = root / "vault"
            vault.mkdir()
            (vault / "bread.md").write_text("# Sourdough\n\nFeed the starter with flour and water.\n", "utf-8")
            (vault / "lease.md").write_text("# Tenancy\n\nThe notice period is three months.\n", "utf-8")
            app = serve(vault, root / "index.db", standin.url)
        served = WithMap(app)
        try:
            with BackgroundServer(served) as server, sync_playwright() as playwright:
                if args.vault:  # the index's own map, and a tenth of it as the baseline
                    results["server"] = server_figures(server.url, args.runs)
                    real = httpx.get(f"{server.url}/api/map", timeout=600).json()
                    sizes: list[tuple[str, bytes | None, int]] = [
                        ("baseline", json.dumps({**real, "notes": real["notes"][::10]}).encode(), len(real["notes"][::10])),
                        ("measured", None, len(real["notes"]))]  # fmt: skip
                    results["source"] = f"the index of {args.vault}"
                else:
                    sizes = [(name, json.dumps(synthetic_map(points, seed=points)).encode(), points)
                             for name, points in (("baseline", baseline), ("measured", args.points))]  # fmt: skip
                    results["source"] = "generated maps"
                browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                                     args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])  # fmt: skip
                if args.vault:  # the page when the server has no answer kept: the first visit after a change
                    cold = []
                    for _ in range(args.runs):
                        app.app.state.map_answers.answers.clear()
                        cold.append(measure(browser, server.url, 1280, 860)["first_paint_ms"])
                    results["cold_first_paint_ms"] = cold
                for name, body, points in sizes:
                    served.body = body
                    runs = [measure(browser, server.url, 1280, 860) for _ in range(args.runs)]
                    size = len(body) if body is not None else len(httpx.get(f"{server.url}/api/map", timeout=600).content)
                    results[name] = {"points": points, "json_bytes": size, "runs": runs}
                if args.shot:
                    served.body = sizes[-1][1]
                    picture(browser, server.url, args.shot)
                browser.close()
        finally:
            app.notebook.close()
    results["load_after"] = round(os.getloadavg()[0], 1)

    def figures(name: str) -> dict[str, float]:
        runs = results[name]["runs"]
        frames = [f for run in runs for f in run["frame_ms"]]
        draws = [d for run in runs for d in run["draw_ms"]]
        return {"paint": round(statistics.median(r["first_paint_ms"] for r in runs), 1),
                "data": round(statistics.median(r["data_ms"] for r in runs), 1),
                "frame50": percentile(frames, 0.5), "frame95": percentile(frames, 0.95),
                "draw50": percentile(draws, 0.5), "draw95": percentile(draws, 0.95), "frames": len(frames)}  # fmt: skip

    base, big = figures("baseline"), figures("measured")
    n, m = results["measured"]["points"], results["baseline"]["points"]
    if "server" in results:
        server = results["server"]
        print(f"GET /api/map?limit=0 on the server: {server['first_ms']:.0f} ms the first time (the kept map read), "
              f"{statistics.median(server['then_ms']):.0f} ms after it (the answer kept), p50; the 100 missing links "
              f"after it: {statistics.median(server['missing_ms']):.0f} ms at the client.")
    print(f"Map page in headless Chromium at 1280×860 ({results['source']}), {args.runs} runs per size, map JSON of "
          f"{results['measured']['json_bytes'] / 1e6:.1f} MB ({n:,} points) and {results['baseline']['json_bytes'] / 1e6:.2f} MB "
          f"({m:,}); load average {results['load_before']} before, {results['load_after']} after.\n")  # fmt: skip
    print(f"| figure | {n:,} points | target | baseline: {m:,} points, same run |")
    print("|---|---|---|---|")
    rows = [
        ("first paint (navigation → every point drawn), p50", f"{big['paint']} ms", "≤ 1000 ms", f"{base['paint']} ms"),
        ("… of which the map's JSON arrived and was read", f"{big['data']} ms", "—", f"{base['data']} ms"),
        ("frame interval while panning and zooming, p50", f"{big['frame50']} ms", "≈ 16.7 ms", f"{base['frame50']} ms"),
        ("frame interval while panning and zooming, p95", f"{big['frame95']} ms", "≤ 33 ms", f"{base['frame95']} ms"),
        ("drawing one frame, p50", f"{big['draw50']} ms", "—", f"{base['draw50']} ms"),
        ("drawing one frame, p95", f"{big['draw95']} ms", "≤ 16 ms", f"{base['draw95']} ms"),
    ]  # fmt: skip
    if "cold_first_paint_ms" in results:
        rows.insert(1, ("first paint, the server's answer made afresh (first visit after the index changed)",
                        f"{statistics.median(results['cold_first_paint_ms'])} ms", "—", "—"))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\n({big['frames']} and {base['frames']} frames recorded.)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
