"""The Obsidian plugin's figures: search-as-you-type latency, bundle size, start-up cost.

    VAULTSEEK_DEEP_TIER=false python -m benchmarks.obsidian [--workdir DIR] [--queries 40]

1. Builds the benchmark vault (16,894 files, ~50k chunks, ``benchmarks.vaultgen``) and indexes
   it (static tier only), then starts ``vaultseek serve --token-file`` on it.
2. **Keystroke to list**: the shipped ``main.js``'s search session (under Node, with the
   project's stand-in for the ``obsidian`` module, over loopback HTTP with the token) is typed
   each sampled query a character at a time, 80 ms apart (a quick typist); one sample is the time
   from the last keystroke to the rows being ready. Run with several debounce delays (0 ms: a
   search per keystroke), beside the same searches asked directly (no typing, no debounce), in
   the same run, each row on its own sampled queries; with the searches each delay sent per
   query. Drawing the rows in Obsidian is
   not included (Obsidian cannot run here).
3. **Bundle size**: ``main.js`` and ``styles.css`` as shipped, and gzipped.
4. **Start-up cost**: loading ``main.js`` fresh and running its ``onload`` with the stand-in
   app, against an empty plugin loaded the same way, alternating in one process.

Prints a Markdown table (docs/obsidian.md's).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.vaultgen import VaultSpec, build_vault

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "obsidian-plugin"
SHIPPED = REPO / "src" / "vaultseek" / "obsidian" / "plugin"
DEBOUNCES = (0, 60, 120, 200)
CHOSEN = 120
GAP_MS = 80
TOKEN = "benchmark-obsidian-token-0123"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def node(*args: str) -> Any:
    result = subprocess.run(["node", "--require", "./test/standin/register.cjs", *args], cwd=PLUGIN,
                            capture_output=True, text=True, check=False)  # fmt: skip
    if result.returncode != 0:
        sys.exit(f"node {args[0]} failed: {result.stderr[-2000:]}")
    return json.loads(result.stdout)


def sample_queries(vault: Path, db: Path, count: int, seed: int) -> list[str]:
    from benchmarks.__main__ import _sample_queries
    from vaultseek import open_index

    with open_index(vault, db=db, create=True) as index:
        index.sync(remember=False)
        queries = _sample_queries(index, count, seed)
    return list(dict.fromkeys(q for q in queries if len(q) <= 60))[:count]


def serve(vault: Path, db: Path, work: Path) -> tuple[subprocess.Popen[bytes], str]:
    from tests.support.ports import free_port

    port = free_port()
    (work / "token").write_text(TOKEN)
    (work / "token").chmod(0o600)
    env = {**os.environ, "VAULTSEEK_DEEP_TIER": "false"}
    log = open(work / "serve.log", "wb")  # noqa: SIM115 - a pipe could fill and stall it
    process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli.launcher", "serve", "--vault", str(vault),
                                "--db", str(db), "--port", str(port), "--token-file", str(work / "token")],
                               stdout=log, stderr=subprocess.STDOUT, env=env)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            state = httpx.get(f"{url}/api/index/state", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5).json()
            if state["files"] > 0 and not state["indexing"]:
                return process, url
        except (httpx.HTTPError, ValueError, KeyError):
            pass
        if process.poll() is not None:
            break
        time.sleep(0.5)
    process.terminate()
    sys.exit(f"vaultseek serve did not start: see {work / 'serve.log'}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.obsidian", description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", help="reuse this folder (the vault is built and indexed once)")
    parser.add_argument("--files", type=int, default=16_894)
    parser.add_argument("--queries", type=int, default=30, help="queries per measurement (each its own)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--onload-runs", type=int, default=200)
    args = parser.parse_args()
    if shutil.which("node") is None:
        sys.exit("node is not installed")
    os.environ["VAULTSEEK_DEEP_TIER"] = "false"
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="vaultseek-obsidian-"))
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        os.environ[name] = str(work / "xdg" / name.lower())
    vault, db = work / "vault", work / "index.db"
    if not vault.exists():
        build_vault(vault, VaultSpec.scaled(args.files, seed=7))
    # Each measurement types its own queries: a query searched once is faster the next time
    # (the pages it reads are in memory), which would flatter whichever ran later.
    queries = sample_queries(vault, db, args.queries * (len(DEBOUNCES) + 1) * 2, args.seed)
    sets = [queries[n * args.queries:(n + 1) * args.queries] for n in range(len(DEBOUNCES) + 1)]
    if len(sets[-1]) < args.queries:
        sys.exit("too few distinct queries sampled")
    process, url = serve(vault, db, work)
    try:
        state = httpx.get(f"{url}/api/index/state", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        typed = node("bench/typing.cjs", url, TOKEN, json.dumps(sets), ",".join(map(str, DEBOUNCES)), str(GAP_MS))
    finally:
        process.terminate()
        process.wait(timeout=30)
    loads = node("bench/onload.cjs", str(args.onload_runs))

    rows = [("vault", f"{state['files']:,} files, {state['chunks']:,} chunks", "static tier only")]
    direct = typed["direct"]
    rows.append(("one search over loopback HTTP (no typing), p50 / p95",
                 f"{percentile(direct, 50):.1f} / {percentile(direct, 95):.1f} ms", f"{len(direct)} queries"))  # fmt: skip
    for debounce in DEBOUNCES:
        figures = typed[str(debounce)]
        lat = figures["latencies"]
        mark = " **(chosen)**" if debounce == CHOSEN else ""
        rows.append((f"keystroke to list, debounce {debounce} ms{mark}, p50 / p95",
                     f"{percentile(lat, 50):.1f} / {percentile(lat, 95):.1f} ms",
                     (f"{figures['requests'] / len(lat):.1f} searches per query "
                      f"({figures['keystrokes'] / len(lat):.1f} keystrokes)")))  # fmt: skip
    main_js, styles = (SHIPPED / "main.js").read_bytes(), (SHIPPED / "styles.css").read_bytes()
    rows.append(("main.js, as shipped / gzipped", f"{len(main_js) / 1024:.1f} / {len(gzip.compress(main_js)) / 1024:.1f} KB", "not minified"))
    rows.append(("styles.css, as shipped / gzipped", f"{len(styles) / 1024:.1f} / {len(gzip.compress(styles)) / 1024:.1f} KB", ""))
    plugin, empty = loads["plugin"], loads["empty"]
    rows.append(("load main.js + onload, first (cold) run", f"{plugin[0]:.2f} ms", f"empty plugin: {empty[0]:.2f} ms"))
    ratio = statistics.median(plugin[1:]) / statistics.median(empty[1:])
    rows.append(("load main.js + onload, median of the next runs", f"{statistics.median(plugin[1:]):.3f} ms",
                 f"empty plugin: {statistics.median(empty[1:]):.3f} ms (×{ratio:.1f})"))  # fmt: skip
    print(f"Typing {GAP_MS} ms between keystrokes; {args.queries} queries sampled from the vault per row, "
          f"each row its own (seed {args.seed}).\n")
    print("| figure | value | notes |\n|---|---|---|")
    for name, value, note in rows:
        print(f"| {name} | {value} | {note} |")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
