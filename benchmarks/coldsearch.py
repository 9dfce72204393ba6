"""``python -m benchmarks.coldsearch``: what one fresh ``vaultseek search`` costs, against
a bare interpreter, and what a running daemon saves.

1. Indexes the real tldr pages (``../shared/data/tldr/pages``, ~7,400 notes) into
   ``--workdir`` (once: a later run reuses the index).
2. Runs, round-robin so a shared machine's slow spells fall on all of them alike, ``--runs``
   times each: ``python -c pass`` (the baseline), ``python -c "import vaultseek"``,
   ``vaultseek search --no-daemon`` in BM25 and in hybrid mode, and a hybrid search routed
   through a daemon started for the index (``vaultseek daemon start --no-watch``); with
   ``--baseline-src DIR``, also the two in-process searches on the code in ``DIR`` (another
   checkout's ``src``), so a change's before and after share the run.
3. Checks that the daemon's answer is the in-process one, and that after ``daemon stop`` the
   command falls back to searching in its own process.
4. Breaks one in-process search down by stage (``benchmarks/coldstart.py``).

Reports the median wall time and CPU time (user + system, of the child process: the steadier
figure on a shared machine) of each, and their ratios to the baseline. Children run with their
own XDG folders, so no daemon or configuration of the user's takes part.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("VAULTSEEK_SHARED_DATA", REPO.parent / "shared" / "data"))
QUERY = "extract a tar archive"


def _environment(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VAULTSEEK_", "XDG_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode cached
    for name in ("DATA", "CONFIG", "STATE", "CACHE"):
        env[f"XDG_{name}_HOME"] = str(work / "xdg" / name.lower())
    runtime = work / "xdg" / "run"
    runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
    env["XDG_RUNTIME_DIR"] = str(runtime)
    return env


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall ms, CPU ms (user + system of the child) and stdout of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    wall = (time.perf_counter() - t) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu, done.stdout


def _results(stdout: str) -> list[tuple[str, int]]:
    """Every section the answer shows (a note view's note by note), as (path, chunk id)."""
    body = json.loads(stdout)
    shown = [s for note in body["results"] for s in note["sections"]] if body["view"] == "notes" else body["results"]
    return [(r["path"], r["chunk_id"]) for r in shown]


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="vaultseek-cold-"))
    work.mkdir(parents=True, exist_ok=True)
    vault = Path(args.vault) if args.vault else SHARED / "tldr" / "pages"
    db = work / "coldsearch.db"
    env = _environment(work)
    python = sys.executable
    vaultseek = [python, "-m", "vaultseek"]
    common = ["--vault", str(vault), "--db", str(db)]
    if not db.exists():
        subprocess.run([*vaultseek, "index", *common, "--no-deep", "--quiet"], env=env, check=True)
    search = [*vaultseek, "search", QUERY, *common, "--json"]
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import vaultseek'": [python, "-c", "import vaultseek"],
        "vaultseek search --mode bm25 --no-daemon": [*search, "--mode", "bm25", "--no-daemon"],
        "vaultseek search --no-daemon": [*search, "--no-daemon"],
        "vaultseek search, daemon running": search,
    }
    envs = dict.fromkeys(commands, env)
    if args.baseline_src:  # the same searches on another checkout's code, in the same rounds
        other = {**env, "PYTHONPATH": str(Path(args.baseline_src).resolve())}
        for name in ("vaultseek search --mode bm25 --no-daemon", "vaultseek search --no-daemon"):
            commands[f"{name} (baseline code)"], envs[f"{name} (baseline code)"] = commands[name], other
    local = _timed(commands["vaultseek search --no-daemon"], env)[2]  # also warms the page cache
    subprocess.run([*vaultseek, "daemon", "start", "--no-watch", *common], env=env, check=True, capture_output=True)
    try:
        routed = _timed(search, env)[2]
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for name, cmd in commands.items():  # writes each code's bytecode cache, warms the page cache
            _timed(cmd, envs[name])
        for _ in range(args.runs):
            for name, cmd in commands.items():
                wall, cpu, _out = _timed(cmd, envs[name])
                walls[name].append(wall)
                cpus[name].append(cpu)
    finally:
        subprocess.run([*vaultseek, "daemon", "stop", *common], env=env, check=True, capture_output=True)
    fallback = _timed(search, env)[2]
    probe = [python, "-m", "benchmarks.coldstart", "--db", str(db), "--vault", str(vault), QUERY]
    stages = [json.loads(subprocess.run(probe, env=env, check=True, capture_output=True, text=True).stdout)
              for _ in range(max(3, args.runs // 3))]  # fmt: skip
    files = sum(1 for _ in vault.rglob("*.md"))
    return {
        "vault": str(vault), "files": files, "query": QUERY, "runs": args.runs,
        "wall_p50_ms": {name: statistics.median(v) for name, v in walls.items()},
        "cpu_p50_ms": {name: statistics.median(v) for name, v in cpus.items()},
        "daemon_answer_matches": _results(routed) == _results(local),
        "fallback_after_stop_matches": _results(fallback) == _results(local),
        "stages_p50_ms": {k: statistics.median(s[k] for s in stages) for k in stages[0] if k.endswith("_ms")},
    }  # fmt: skip


def render(r: dict[str, Any]) -> str:
    wall, cpu = r["wall_p50_ms"], r["cpu_p50_ms"]
    base_wall, base_cpu = wall["python -c pass"], cpu["python -c pass"]
    lines = [
        f"{r['files']:,} notes, query {r['query']!r}, median of {r['runs']} runs each",
        "",
        "| command | wall p50 | CPU p50 | ratio to bare Python, wall / CPU |",
        "|---|---:|---:|---:|",
    ]
    for name in wall:
        ratios = f"{wall[name] / base_wall:.1f}× / {cpu[name] / base_cpu:.1f}×"
        lines.append(f"| `{name}` | {wall[name]:.0f} ms | {cpu[name]:.0f} ms | {ratios} |")
    lines += [
        "",
        (f"daemon's answer = in-process answer: {r['daemon_answer_matches']}; "
         f"after `daemon stop`, searched in-process with the same answer: {r['fallback_after_stop_matches']}"),
        "",
        "| stage of an in-process search (wall p50) | ms |",
        "|---|---:|",
    ]
    lines += [f"| {name.removesuffix('_ms')} | {value:.0f} |" for name, value in r["stages_p50_ms"].items()]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--workdir", help="keep the index here (reused by the next run)")
    parser.add_argument("--vault", help="the vault to index (default: the shared tldr pages)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline-src", metavar="DIR",
                        help="also time the searches with this src folder's code (e.g. a checkout of "
                             "the previous release: git archive HEAD~1 src | tar -x -C /tmp/old)")  # fmt: skip
    parser.add_argument("--json", metavar="FILE", help="also write the raw figures here")
    args = parser.parse_args()
    result = run(args)
    print(render(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
