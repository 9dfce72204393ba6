"""The agent figures: hook start-up with and without the daemon, MCP round trip, readers
under a writing watcher, save-to-searchable latency.

    python -m benchmarks.agents [--workdir DIR] [--files N] [--readers-seconds 60]
                                     [--json FILE]

Builds (or reuses, in ``--workdir``) the benchmark vault from ``../shared/data`` (the same
generator as ``python -m benchmarks``; 16,894 files by default) and indexes it, then:

1. **hook, no daemon**: ``vaultseek hook user-prompt-submit --vault=… --db=…`` (the command
   ``vaultseek hook install --vault`` writes) as fresh processes, p50/p95, and the breakdown of
   one cold run (interpreter, imports, open, model, vectors, the hook itself);
2. **hook, with the daemon**: the same command while ``vaultseek daemon`` runs (the launcher's
   fast lane), p50/p95, and its breakdown (interpreter, client imports, the round trip); and
   the command with ``--vault`` only, which loads the configuration to find the index;
3. **MCP**: the ``search`` tool through the SDK's client over stdio, warm, p50/p95;
4. **readers under the watcher**: 8 reader processes searching (hybrid, BM25, vector in turn)
   for ``--readers-seconds`` while notes are edited every 0.5 s and the daemon's watcher
   re-indexes them; every exception in a reader counts as an error;
5. **freshness**: 20 saves of a unique word into a note; the time until a search through the
   daemon finds it, p50/p95;
6. **hook on a busy machine**: step 2's command again while one CPU burner per core (processes
   this benchmark starts and stops) keeps every core busy, p50/p95 beside the quiet figures;
7. **MCP answer size**: the bytes of a ``search`` answer for k = 10 (structured content and
   text content) over the ten prompts, against the full search JSON of the same searches in
   the same two forms (``search --json``'s fields, the text indented as the SDK writes a
   dict), measured in the same run.

``--parts`` runs some of them (``hooks`` = 1, 2 and 6; ``mcp`` = 3 and 7; ``readers``;
``freshness``), e.g. ``--parts hooks,mcp --files 2000`` for a run of a few minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.vaultgen import VaultSpec, build_vault, edit_one_file
from vaultseek.evaluation.metrics import percentile

PROMPTS = (
    "how do I list files sorted by size with ls",
    "compress a folder into a tar.gz archive",
    "find and kill the process listening on a port",
    "git: undo the last commit but keep the changes",
    "convert a video to mp4 with ffmpeg",
    "PowerShell: get the services that are stopped",
    "show disk usage of each directory",
    "how do I rename many files at once",
    "copy files over ssh to a remote machine",
    "set an environment variable permanently",
)

_COLD = """
import json, sys, time
t0 = time.perf_counter()
from vaultseek.engine import Index
from vaultseek.config import load_config
from vaultseek.agents.hooks import HookSettings, run_event
t1 = time.perf_counter()
index = Index(load_config(vault=sys.argv[1]))
t2 = time.perf_counter()
index.embedder()
t3 = time.perf_counter()
index.search("warm", k=1)
t4 = time.perf_counter()
run_event(index, "user-prompt-submit", {"prompt": sys.argv[2]}, HookSettings())
t5 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "open": t2 - t1, "model": t3 - t2, "vectors": t4 - t3, "hook": t5 - t4}))
"""

_CLIENT = """
import json, sys, time
t0 = time.perf_counter()
from vaultseek.agents import daemon_client
from vaultseek.cli import launcher
t1 = time.perf_counter()
daemon_client.request(sys.argv[3], {"op": "hook", "event": "user-prompt-submit", "input": {"prompt": sys.argv[2]}, "prepare": True})
t2 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "round_trip": t2 - t1}))
"""

_READER = """
import sys, time
from vaultseek import open_index
vault, seconds, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
words = ["list files", "archive", "process port", "git commit", "video", "services", "disk usage", "rename", "ssh copy", "environment"]
searches = errors = 0
end = time.monotonic() + seconds
with open_index(vault) as index:
    while time.monotonic() < end:
        for mode in ("hybrid", "bm25", "vector"):
            try:
                index.search(words[(searches + seed) % len(words)], mode=mode, k=10)
                searches += 1
            except Exception as exc:
                errors += 1
                print(f"error: {exc!r}", file=sys.stderr)
print(searches, errors)
"""


def ms(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50) * 1000, 1), "p95": round(percentile(values, 95) * 1000, 1)}


def vaultseek_command() -> list[str]:
    script = Path(sys.executable).parent / "vaultseek"
    return [str(script)] if script.exists() else [sys.executable, "-m", "vaultseek.cli.main"]


def time_hook(vault: Path, runs: int, db: Path | None = None) -> list[float]:
    """Fresh hook processes. With ``db``, the command as `hook install --vault` writes it
    (``--vault=… --db=…``: the launcher's fast lane); without, ``--vault`` only (config loaded)."""
    times = []
    names = [f"--vault={vault}"] + ([f"--db={db}"] if db else [])
    for i in range(runs):
        payload = json.dumps({"session_id": "bench", "prompt": PROMPTS[i % len(PROMPTS)]})
        started = time.perf_counter()
        result = subprocess.run([*vaultseek_command(), "hook", "user-prompt-submit", *names],
                                input=payload, capture_output=True, text=True, check=False)  # fmt: skip
        times.append(time.perf_counter() - started)
        if i == 0 and not result.stdout.startswith("## Relevant Memory Context"):
            print(f"  note: the hook injected nothing for {PROMPTS[0]!r}", file=sys.stderr)
    return times


def wait_for_first_sync(db: Path, limit: float = 120.0) -> float:
    """Seconds until the daemon's watcher has finished its start-up sync (a full walk of the
    vault, which shares the daemon's process for a second or two): hooks are timed after it,
    in the steady state a session spends its time in."""
    from vaultseek.agents import daemon_client

    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        status = daemon_client.request(db, {"op": "status"}) or {}
        if status.get("daemon", {}).get("syncs", 0) >= 1:
            break
        time.sleep(0.05)
    return round(time.perf_counter() - started, 2)


def breakdown(script: str, vault: Path, db: Path, runs: int = 5) -> dict[str, float]:
    samples: list[dict[str, float]] = []
    for i in range(runs):
        out = subprocess.run([sys.executable, "-c", script, str(vault), PROMPTS[i % len(PROMPTS)], str(db)],
                             capture_output=True, text=True, check=True)  # fmt: skip
        samples.append(json.loads(out.stdout))
    bare = [_timed([sys.executable, "-c", "pass"]) for _ in range(runs)]
    result = {"interpreter": percentile(bare, 50)}
    result.update({key: percentile([s[key] for s in samples], 50) for key in samples[0]})
    return {k: round(v * 1000, 1) for k, v in result.items()}


def _timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=False)
    return time.perf_counter() - started


async def mcp_round_trips(vault: Path, calls: int) -> list[float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "vaultseek.cli.main", "mcp", "--vault", str(vault)],
                                   env=dict(os.environ))  # fmt: skip
    times = []
    async with Client(params) as client:
        for i in range(calls + 20):
            started = time.perf_counter()
            result = await client.call_tool("search", {"query": PROMPTS[i % len(PROMPTS)], "k": 8})
            if i >= 20:  # the first 20 warm up
                times.append(time.perf_counter() - started)
            assert not result.is_error
    return times


async def mcp_answer_sizes(vault: Path, k: int = 10) -> dict[str, int]:
    """Mean bytes of a search tool answer (structured, text) against the full search JSON of
    the same search (compact, and indented as the SDK's text for a returned dict)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from vaultseek.contract import SearchRequest
    from vaultseek.engine import open_index

    params = StdioServerParameters(command=sys.executable, args=["-m", "vaultseek.cli.main", "mcp", "--vault", str(vault)],
                                   env=dict(os.environ))  # fmt: skip
    sizes = {"answer_structured": 0, "answer_text": 0, "search_json_structured": 0, "search_json_text": 0}
    async with Client(params) as client:
        for prompt in PROMPTS:
            result = await client.call_tool("search", {"query": prompt, "k": k})
            sizes["answer_structured"] += len(_compact(result.structured_content))
            sizes["answer_text"] += sum(len(c.text.encode()) for c in result.content if c.type == "text")
    with open_index(vault) as index:
        for prompt in PROMPTS:
            full = index.search(SearchRequest.from_mapping({"query": prompt, "k": k})).to_dict()
            sizes["search_json_structured"] += len(_compact(full))
            sizes["search_json_text"] += len(json.dumps(full, indent=2, ensure_ascii=False).encode())
    return {key: round(value / len(PROMPTS)) for key, value in sizes.items()}


def _compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


_BURN = "while True:\n    pass\n"


def busy_cores() -> list[subprocess.Popen[bytes]]:
    """One CPU burner per core, started here (stop them with :func:`stop_burners`)."""
    return [subprocess.Popen([sys.executable, "-c", _BURN]) for _ in range(os.cpu_count() or 1)]


def stop_burners(burners: list[subprocess.Popen[bytes]]) -> None:
    for burner in burners:
        burner.kill()
        burner.wait()


def readers_under_watcher(vault: Path, seconds: float, readers: int = 8) -> dict[str, Any]:
    procs = [subprocess.Popen([sys.executable, "-c", _READER, str(vault), str(seconds), str(n)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(readers)]  # fmt: skip
    edits = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        edit_one_file(vault, seed=10_000 + edits)
        edits += 1
        time.sleep(0.5)
    searches = errors = 0
    messages: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=seconds + 120)
        done, failed = (int(x) for x in out.split())
        searches += done
        errors += failed
        messages += err.strip().splitlines()[:3]
    return {"readers": readers, "seconds": seconds, "searches": searches, "errors": errors,
            "edits": edits, "sample_errors": messages[:5]}  # fmt: skip


def freshness(vault: Path, db: Path, saves: int = 20) -> list[float]:
    from vaultseek.agents import daemon_client
    from vaultseek.engine import open_index

    with open_index(vault, db=db) as index:  # notes the index holds (not excluded, not too big)
        indexed = {row[0] for row in index.conn.execute("SELECT path FROM files WHERE status = 'indexed'")}
    notes = sorted(vault / p for p in indexed)
    rng = random.Random(3)
    latencies = []
    for i in range(saves):
        word = f"zqfresh{i}x{time.time_ns()}"  # unique across runs of the benchmark
        note = rng.choice(notes)
        started = time.perf_counter()
        note.write_text(note.read_text("utf-8") + f"\n\n## Fresh {i}\n\nA fresh word: {word}\n", "utf-8")  # its own section: a trailing "Related" section is not indexed
        while True:
            found = daemon_client.request(db, {"op": "search", "query": word, "mode": "bm25", "k": 1})
            if found and found["results"]:
                latencies.append(time.perf_counter() - started)
                break
            if time.perf_counter() - started > 30:
                raise RuntimeError(f"a save to {note} was not searchable after 30 s")
            time.sleep(0.01)
        time.sleep(0.3)
    return latencies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agents", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=None, help="reuse the vault and index here")
    parser.add_argument("--files", type=int, default=VaultSpec().files, help="vault size (default 16,894)")
    parser.add_argument("--runs", type=int, default=30, help="fresh hook processes per variant")
    parser.add_argument("--readers-seconds", type=float, default=60.0)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here too")
    parser.add_argument("--parts", default="hooks,mcp,readers,freshness", help="which figures (default: all)")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))

    from vaultseek.config import load_config
    from vaultseek.engine import open_index

    work = args.workdir or Path(tempfile.mkdtemp(prefix="vaultseek-agents-"))
    work.mkdir(parents=True, exist_ok=True)
    vault, db = work / "vault", work / "index.db"
    if not vault.exists():
        print(f"building a {args.files:,}-file vault in {vault} …", file=sys.stderr)
        build_vault(vault, VaultSpec.scaled(args.files))
    # Private runtime/state folders, so the user's own daemon is never touched.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(work / "run"))
    os.environ.setdefault("XDG_STATE_HOME", str(work / "state"))
    (work / "run").mkdir(exist_ok=True)
    os.environ["VAULTSEEK_DB"] = str(db)
    started = time.perf_counter()
    with open_index(vault, db=db, create=True) as index:
        report = index.sync(remember=False)
        chunks = index.status().chunks
    print(f"index: {report.scanned:,} files, {chunks:,} chunks ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    figures: dict[str, Any] = {"files": report.scanned, "chunks": chunks}

    cli = vaultseek_command()
    subprocess.run([*cli, "daemon", "stop", "--vault", str(vault)], capture_output=True, check=False)
    index_db = load_config(vault=vault).db or db
    figures["cores"] = os.cpu_count()
    if "hooks" in parts:
        print("hook without the daemon …", file=sys.stderr)
        figures["hook_cold"] = ms(time_hook(vault, max(args.runs // 2, 5), index_db))
        figures["hook_cold_breakdown_ms"] = breakdown(_COLD, vault, index_db)

    subprocess.run([*cli, "daemon", "start", "--vault", str(vault)], check=True, capture_output=True)
    try:
        figures["daemon_watcher_ready_s"] = wait_for_first_sync(index_db)
        if "hooks" in parts:
            print("hook with the daemon …", file=sys.stderr)
            time_hook(vault, 3, index_db)  # warm the page cache for the client modules
            figures["load_average_quiet"] = round(os.getloadavg()[0], 2)
            figures["hook_daemon"] = ms(time_hook(vault, args.runs, index_db))
            figures["hook_daemon_breakdown_ms"] = breakdown(_CLIENT, vault, index_db)
            figures["hook_daemon_vault_only"] = ms(time_hook(vault, args.runs))
            print(f"hook with the daemon, {os.cpu_count()} cores kept busy …", file=sys.stderr)
            burners = busy_cores()
            try:
                time.sleep(1.0)
                figures["hook_daemon_busy"] = ms(time_hook(vault, args.runs, index_db))
                figures["hook_daemon_busy_breakdown_ms"] = breakdown(_CLIENT, vault, index_db)
                figures["load_average_busy"] = round(os.getloadavg()[0], 2)
            finally:
                stop_burners(burners)
        if "freshness" in parts:
            print("freshness …", file=sys.stderr)
            figures["save_to_searchable"] = ms(freshness(vault, index_db))
        if "readers" in parts:
            print(f"8 readers for {args.readers_seconds:g} s under the watcher …", file=sys.stderr)
            figures["readers_under_watcher"] = readers_under_watcher(vault, args.readers_seconds)
    finally:
        subprocess.run([*cli, "daemon", "stop", "--vault", str(vault)], capture_output=True, check=False)
    if "mcp" in parts:
        print("MCP round trips …", file=sys.stderr)
        figures["mcp_search_warm"] = ms(asyncio.run(mcp_round_trips(vault, 200)))
        sizes = asyncio.run(mcp_answer_sizes(vault))
        figures["mcp_answer_bytes_k10"] = sizes
        before = sizes["search_json_structured"] + sizes["search_json_text"]
        figures["mcp_answer_vs_search_json"] = round((sizes["answer_structured"] + sizes["answer_text"]) / before, 2)

    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
