"""``python -m benchmarks.deepworker``: what the deep tier's background worker costs interactive
work, and how soon it makes every note findable by meaning.

    python -m benchmarks.deepworker interference [--workdir DIR] [--kinds shipped,nice]
    python -m benchmarks.deepworker openings [--workdir DIR] [--files 16894] [--until openings]
    python -m benchmarks.deepworker eta [--workdir DIR] [--source DIR] [--seconds 180] [--every 10]

**interference** builds (or reuses, in ``--workdir``) the benchmark vault (16,894 files, ~50k
chunks) and gives every chunk a deep vector (the sampled chunks' real vectors repeated with a
little noise, as ``benchmarks.deep`` does: a search's cost depends on how many vectors it
scans, not their values). A second vault (``--queued-files``) is queued for a background
worker, which embeds it throughout. Then, for ``--rounds`` rounds:

- warm hybrid search p50 in this process (deep list included),
- ``vaultseek hook user-prompt-submit`` p50 through the daemon, and cold (no daemon),

call by call with the worker running and frozen (SIGSTOP: no processor time at all) in turn,
so both sides meet the same load from whatever else runs on the machine: the baseline is the
frozen calls of the same run. Each call comes after ``--gap`` seconds of quiet (longer than
the worker's two-second rest), so that a running worker is in the middle of a batch when it
arrives: the case a prompt after a pause meets. ``--kinds`` picks the workers, each in a
session of its own as the real one runs: ``shipped`` (idle priority, half the cores' engine
threads, rests while interactive work touches the marker), ``cores`` (the same with a thread
on every core, as ``deep_threads`` allows), ``idle`` (one thread, without the rest) and ``nice``
(``nice 10`` without the rest, as one of the earlier per-index workers ran). The load average
is printed before and after.

**openings** builds a vault of ``--files`` notes, indexes it without the deep tier, queues it
for the real background worker (``vaultseek deep --background``) and times until every file's
opening has a deep vector (``--until all``: every chunk), polling once a second. The
baseline, from the same run: how many texts chunk-id order (the order before openings went
first) embeds before the last file's opening, and when this run had embedded as many
(extrapolated at the run's overall rate when it stopped before: ``--until openings``).

**eta** copies ``--source`` (default: the PowerShell 7.5 cmdlet reference, 472 files, ~8.8k
chunks: short openings, long later chunks), indexes it with no deep vectors, queues it for the
real background worker and reads ``deep_status`` every ``--every`` seconds for ``--seconds``:
the time left it says (the work left at the measured work rate) beside the time left the
chunks left at the chunk rate would have said (the baseline: how it was estimated before),
both from the same run. Polled once a second in between, it notes when every opening had its
vector — the truth to hold the openings' estimates to — and projects the whole job's time from
the pace after the openings: the run's time so far plus the work left at the end over the work
a second embedded after the openings (and, model-free, the chunks left over the chunks a
second then); when the job ends within ``--seconds``, the time it took instead. It ends by
stopping the worker. It also times ``deep_status`` (the query of what
is left included) on that index.

``--json FILE`` writes the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.__main__ import _sample_queries
from benchmarks.agents import PROMPTS, vaultseek_command, wait_for_first_sync
from benchmarks.deep import _fill_deep_vectors
from benchmarks.vaultgen import VaultSpec, build_vault, find_shared_data
from vaultseek.config import load_config

_WORKER = """
import os, signal, sys
from vaultseek.agents.deep_worker import DeepWorker, lower_priority
from vaultseek.index import deep_queue
if sys.argv[1] == "nice":
    os.nice(10)
else:
    lower_priority()
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
lock = deep_queue.adopt_worker_lock(None)
DeepWorker(should_stop=lambda: bool(stop), log=lambda _line: None, resting=lambda: False).run(lock)
"""
"""A worker that never rests for interactive work: ``idle`` (the shipped worker's priority:
SCHED_IDLE, its session's autogroup at nice 19) or ``nice`` (``nice 10`` alone)."""


WORKER_KINDS = ("shipped", "cores", "idle", "nice")


def _env(work: Path) -> None:
    """Private state and runtime folders (the user's own worker and daemon are never
    touched), the deep tier on."""
    for name, folder in (("XDG_STATE_HOME", "state"), ("XDG_RUNTIME_DIR", "run"), ("XDG_DATA_HOME", "data")):
        (work / folder).mkdir(parents=True, exist_ok=True)
        os.environ[name] = str(work / folder)
    os.environ["VAULTSEEK_DEEP_TIER"] = "true"


def _cli(*words: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*vaultseek_command(), *words], capture_output=True, text=True, check=False, env=env)


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def _worker_cpu() -> tuple[int, float] | None:
    """The running worker's pid and the processor seconds it has used (Linux ``/proc``), or
    None. Processor time is what the work costs on a core nobody else wants, whatever else
    the machine was doing meanwhile."""
    from vaultseek.index.deep_queue import worker_pid

    pid = worker_pid()
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text("ascii").rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return pid, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _queued_progress(vault: Path, db: Path) -> int:
    from vaultseek.engine import open_index

    with open_index(vault, db=db, read_only=True) as index:
        return index.store.deep_progress()[0]


class Workers:
    """Starts and stops each kind of worker on the queued vault."""

    def __init__(self, vault: Path, db: Path) -> None:
        self.vault, self.db = vault, db
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, kind: str) -> None:
        from vaultseek.engine import open_index
        from vaultseek.index import deep_queue

        with open_index(self.vault, db=self.db) as index:  # queued (paused), with work left
            status = index.deep_status()
            if status is not None and status.pending < 200:
                index.store.reset_deep_vectors("none", "none", "none")
            deep_queue.enqueue(index.config)
        before = _queued_progress(self.vault, self.db)
        if kind == "shipped":
            _cli("deep", "--resume")
        elif kind == "cores":  # the shipped worker given every core (deep_threads)
            _cli("deep", "--resume", env={**os.environ, "VAULTSEEK_DEEP_THREADS": str(os.cpu_count() or 1)})
        else:
            with deep_queue.locked_queue() as queue:
                queue.paused = False
            env = {**os.environ, "OMP_NUM_THREADS": "1"}
            # A session of its own, as the shipped worker and the earlier per-index ones run.
            self._process = subprocess.Popen([sys.executable, "-c", _WORKER, kind], env=env, start_new_session=True)
        deadline = time.monotonic() + 300
        while _queued_progress(self.vault, self.db) <= before:  # working, model loaded
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {kind} worker embedded nothing in 300 s")
            time.sleep(0.5)

    def run(self, on: bool) -> None:
        """Let the worker run, or freeze it (SIGSTOP: it takes no processor time at all)."""
        from vaultseek.index import deep_queue

        pid = self._process.pid if self._process is not None else deep_queue.worker_pid()
        if pid is None:
            raise RuntimeError("the worker is gone: see worker.log")
        os.kill(pid, signal.SIGCONT if on else signal.SIGSTOP)

    def stop(self) -> None:
        self.run(True)  # a frozen process would not hear SIGTERM
        _cli("deep", "--pause")  # ends the shipped worker; keeps the next from starting
        if self._process is not None:
            self._process.send_signal(signal.SIGTERM)
            self._process.wait(120)
            self._process = None


def _timed_calls(call: Any, items: list[str], gap: float) -> list[float]:
    times = []
    for item in items:
        time.sleep(gap)
        started = time.perf_counter()
        call(item)
        times.append((time.perf_counter() - started) * 1000)
    return times


def _hook(vault: Path, db: Path, prompt: str) -> None:
    payload = json.dumps({"session_id": "bench-deepworker", "prompt": prompt})
    subprocess.run([*vaultseek_command(), "hook", "user-prompt-submit", f"--vault={vault}", f"--db={db}"],
                   input=payload, capture_output=True, text=True, check=False)  # fmt: skip


def interference(args: argparse.Namespace) -> dict[str, Any]:
    from vaultseek.engine import open_index
    from vaultseek.index import deep_queue

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="vaultseek-deepworker-"))
    _env(work)
    vault, db = work / "vault", work / "index.db"
    queued_vault, queued_db = work / f"queued-vault-{args.queued_files}", work / f"queued-{args.queued_files}.db"
    if not vault.exists():
        print(f"building a {args.files:,}-file vault …", file=sys.stderr)
        build_vault(vault, VaultSpec.scaled(args.files, seed=args.seed))
    if not queued_vault.exists():
        build_vault(queued_vault, VaultSpec.scaled(args.queued_files, seed=args.seed + 4))
    with open_index(vault, db=db, create=True) as index:
        index.sync(remember=False)
        complete = index.deep_status()
        chunks = index.status().chunks
        queries = _sample_queries(index, args.queries, args.seed)
    if complete is None or complete.state != "complete":
        print("filling the deep vectors …", file=sys.stderr)
        _fill_deep_vectors(vault, db, 24, args.seed)
    deep_queue.pause()  # the queued vault waits until a round starts a worker
    with open_index(queued_vault, db=queued_db, create=True) as index:
        index.sync(remember=False)
        deep_queue.enqueue(index.config)
    results: dict[str, Any] = {"files": args.files, "chunks": chunks, "queued_files": args.queued_files,
                               "gap_s": args.gap, "load_before": _load()}  # fmt: skip
    workers = Workers(queued_vault, queued_db)
    kinds = [kind for kind in args.kinds.split(",") if kind in WORKER_KINDS]
    samples: dict[str, dict[str, dict[str, list[float]]]] = {
        kind: {state: {"search": [], "hook_daemon": [], "hook_cold": []} for state in ("off", "on")} for kind in kinds
    }
    embedded_before = _queued_progress(queued_vault, queued_db)
    prompts = [PROMPTS[i % len(PROMPTS)] for i in range(max(args.hooks, args.cold_hooks))]

    def alternate(kind: str, what: str, call: Any, items: list[str], round_number: int) -> None:
        """Each call with the worker running or frozen in turn, after the same quiet."""
        for i, item in enumerate(items):
            on = (i + round_number) % 2 == 1
            workers.run(on)
            samples[kind]["on" if on else "off"][what] += _timed_calls(call, [item], args.gap)

    with open_index(vault, db=db) as index:
        for query in queries[:20]:  # warm: the models, the matrices, the page cache
            index.search(query)
        for kind in kinds:
            workers.start(kind)
            try:
                for round_number in range(args.rounds):
                    print(f"{kind} worker, round {round_number + 1}: warm search, hooks through the daemon …", file=sys.stderr)
                    _cli("daemon", "start", "--vault", str(vault), "--db", str(db))
                    wait_for_first_sync(db)
                    picked = queries[20:][round_number * args.searches :][: args.searches]
                    alternate(kind, "search", index.search, picked, round_number)
                    alternate(kind, "hook_daemon", lambda p: _hook(vault, db, p), prompts[: args.hooks], round_number)
                    _cli("daemon", "stop", "--vault", str(vault), "--db", str(db))
                    print(f"{kind} worker, round {round_number + 1}: cold hooks …", file=sys.stderr)
                    alternate(kind, "hook_cold", lambda p: _hook(vault, db, p), prompts[: args.cold_hooks], round_number)
            finally:
                workers.stop()
    results["queued_embedded"] = _queued_progress(queued_vault, queued_db) - embedded_before
    results["load_after"] = _load()
    results["p50_ms"] = {
        kind: {state: {what: round(statistics.median(values), 1) for what, values in by.items()} for state, by in states.items()}
        for kind, states in samples.items()
    }
    results["n"] = {what: len(values) for what, values in samples[kinds[0]]["on"].items()}
    results["samples_ms"] = samples
    return results


def render_interference(r: dict[str, Any]) -> str:
    names = {
        "shipped": "the worker (idle priority, half the cores' threads, rests for interactive work)",
        "cores": "the same with a thread on every core (deep_threads)",
        "idle": "idle priority, one thread, no rest",
        "nice": "nice 10, one thread, no rest (as the per-index workers ran)",
    }
    lines = [
        (
            f"Benchmark vault: {r['files']:,} files, {r['chunks']:,} chunks, deep tier complete; the worker embeds "
            f"a second vault ({r['queued_files']:,} files; {r['queued_embedded']:,} texts during the run), running or "
            f"frozen (SIGSTOP) in turn call by call, {r['gap_s']:g} s of quiet before each call. "
            f"Load average before {r['load_before']}, after {r['load_after']}."
        ),
        "",
        "| worker | warm hybrid search p50, frozen → running | hook p50 through the daemon | cold hook p50 |",
        "|---|---|---|---|",
    ]
    for kind, row in r["p50_ms"].items():
        cells = [
            f"{row['off'][what]:.1f} → {row['on'][what]:.1f} ms ({row['on'][what] / row['off'][what]:.2f}×)"
            for what in ("search", "hook_daemon", "hook_cold")
        ]
        lines.append(f"| {names[kind]} | {' | '.join(cells)} |")
    n = r["n"]
    lines.append(f"\n{n['search']} searches, {n['hook_daemon']} daemon hooks and {n['hook_cold']} cold hooks each way per worker.")
    return "\n".join(lines)


def _id_order_texts(vault: Path, db: Path) -> int:
    """Distinct texts chunk-id order embeds up to and including the last file's opening."""
    from vaultseek.engine import open_index

    with open_index(vault, db=db, read_only=True) as index:
        rows = index.conn.execute("SELECT embed_hash, position FROM chunks ORDER BY id").fetchall()
    seen: set[Any] = set()
    last = 0
    for digest, position in rows:
        seen.add(digest)
        if position == 0:
            last = len(seen)
    return last


def _start_worker(vault: Path, db: Path) -> tuple[float, Any]:
    """Queue ``db`` for a resumed background worker; when it was queued (monotonic clock) and
    the index's configuration, to follow it with."""
    _cli("deep", "--resume")
    started = time.monotonic()
    queued = _cli("deep", "--background", "--vault", str(vault), "--db", str(db))
    if queued.returncode != 0:
        raise RuntimeError(queued.stderr)
    return started, load_config(vault=vault, db=db)


def openings(args: argparse.Namespace) -> dict[str, Any]:
    from vaultseek.engine import open_index

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="vaultseek-openings-"))
    _env(work)
    vault, db = work / "openings-vault", work / "openings.db"
    if not vault.exists():
        print(f"building a {args.files:,}-file vault …", file=sys.stderr)
        build_vault(vault, VaultSpec.scaled(args.files, seed=args.seed))
    _cli("deep", "--stop")
    with open_index(vault, db=db, create=True) as index:
        index.sync(remember=False)
        index.store.reset_deep_vectors("none", "none", "none")  # every run starts from no deep vectors
        status = index.deep_status()
        assert status is not None
    results: dict[str, Any] = {"files": status.openings, "chunks": status.chunks, "load_before": _load(),
                               "id_order_texts_before_last_opening": _id_order_texts(vault, db)}  # fmt: skip
    started, config = _start_worker(vault, db)
    with open_index(config=config, read_only=True) as index:
        while True:
            time.sleep(1.0)
            status = index.deep_status()
            assert status is not None
            elapsed = time.monotonic() - started
            if status.state == "waiting":
                raise RuntimeError(f"the worker stopped before the end: see {work / 'state' / 'vaultseek' / 'deep' / 'worker.log'}")
            if "id_order_s" not in results and status.embedded >= results["id_order_texts_before_last_opening"]:
                results["id_order_s"] = round(elapsed, 1)  # as many texts as id order needed first
            if "cpu_start" not in results and (sample := _worker_cpu()) is not None:
                results["worker_pid"], results["cpu_start"] = sample
            if "openings_s" not in results and status.openings_embedded >= status.openings:
                results["openings_s"] = round(elapsed, 1)
                sample = _worker_cpu()
                if sample is not None and sample[0] == results.get("worker_pid"):
                    results["openings_cpu_s"] = round(sample[1] - results["cpu_start"], 1)
                results["texts_at_openings"] = status.embedded
                print(f"every opening after {elapsed:.0f} s", file=sys.stderr)
            if ("openings_s" in results and args.until == "openings") or status.state == "complete":
                break
            if int(elapsed) % 60 == 0:
                print(f"{elapsed:.0f} s: {status.openings_embedded:,} of {status.openings:,} openings, "
                      f"{status.embedded:,} of {status.chunks:,} chunks", file=sys.stderr)  # fmt: skip
        results["rate"] = status.rate
        if status.state == "complete":
            results["all_s"] = round(time.monotonic() - started, 1)
    _cli("deep", "--stop")
    results["load_after"] = _load()
    per_opening = results["openings_s"] / results["files"]
    results["seconds_per_opening"] = round(per_opening, 3)
    if "id_order_s" not in results:  # the run ended first: at the rate it kept overall
        spent = results.get("all_s", results["openings_s"])
        done = status.embedded
        results["id_order_s"] = round(results["id_order_texts_before_last_opening"] * spent / max(done, 1), 1)
        results["id_order_extrapolated"] = True
    return results


def render_openings(r: dict[str, Any]) -> str:
    lines = [
        f"Vault: {r['files']:,} files, {r['chunks']:,} chunks. Load average before {r['load_before']}, after {r['load_after']}.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| every file's opening has a deep vector after | {r['openings_s']:,.0f} s ({r['seconds_per_opening']:.2f} s an opening) |",
        *(
            [f"| … the worker's processor time until then (one core) | {r['openings_cpu_s']:,.0f} s |"]
            if "openings_cpu_s" in r
            else []
        ),
        (
            f"| chunk-id order: {r['id_order_texts_before_last_opening']:,} texts before the last opening; "
            f"this run had embedded as many after | {'~' if r.get('id_order_extrapolated') else ''}{r['id_order_s']:,.0f} s "
            f"({r['id_order_s'] / r['openings_s']:.1f}× as long{', extrapolated' if r.get('id_order_extrapolated') else ''}) |"
        ),
    ]
    if "all_s" in r:
        lines.append(f"| every chunk has a deep vector after | {r['all_s']:,.0f} s |")
    return "\n".join(lines)


def eta(args: argparse.Namespace) -> dict[str, Any]:
    """Estimates of the time left against the time taken (see the module docstring)."""
    import shutil

    from vaultseek.engine import open_index
    from vaultseek.index.deepening import pending_work

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="vaultseek-eta-"))
    _env(work)
    vault, db = work / "eta-vault", work / "eta.db"
    if not vault.exists():
        shared = find_shared_data()
        source = Path(args.source) if args.source else shared / "powershell-docs" / "reference" / "7.5" if shared else None
        if source is None or not source.is_dir():
            raise SystemExit("no --source folder, and no shared data with the PowerShell reference")
        shutil.copytree(source, vault)
    _cli("deep", "--stop")
    with open_index(vault, db=db, create=True) as index:
        index.sync(remember=False)
        index.store.reset_deep_vectors("none", "none", "none")  # every run starts from no deep vectors
        for key in ("deep_rate", "deep_work_rate"):
            index.store.delete_meta(key)
        status = index.deep_status()
        assert status is not None
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            index.deep_status()
            timings.append((time.perf_counter() - started) * 1000)
    results: dict[str, Any] = {"files": status.openings, "chunks": status.chunks, "load_before": _load(),
                               "deep_status_ms": round(min(timings), 1), "polls": []}  # fmt: skip
    started, config = _start_worker(vault, db)
    after: tuple[float, int, float] | None = None  # when the openings were done: time, chunks, work left
    try:
        with open_index(config=config, read_only=True) as index:
            next_poll = args.every
            while (elapsed := time.monotonic() - started) < args.seconds:
                time.sleep(1.0)
                elapsed = time.monotonic() - started
                status = index.deep_status()
                assert status is not None
                if status.state == "complete":
                    results["all_s"] = round(elapsed, 1)
                    print(f"every chunk after {elapsed:.0f} s", file=sys.stderr)
                    break
                if status.state == "waiting":
                    raise RuntimeError("the worker stopped before the end: see its worker.log")
                if after is None and status.openings_embedded >= status.openings:
                    after = (elapsed, status.embedded, status.work_left or 0.0)
                    results["openings_s"] = round(elapsed, 1)
                    print(f"every opening after {elapsed:.0f} s", file=sys.stderr)
                if elapsed >= next_poll:
                    next_poll += args.every
                    old = status.pending / status.rate if status.rate else None
                    poll = {"s": round(elapsed), "embedded": status.embedded, "openings_embedded": status.openings_embedded,
                            "eta_s": status.eta_seconds, "openings_eta_s": status.openings_eta_seconds,
                            "chunk_eta_s": old, "chunk_openings_eta_s": status.openings_pending / status.rate if status.rate else None,
                            "rate": status.rate}  # fmt: skip
                    results["polls"].append(poll)
                    print(f"{poll['s']} s: {status.embedded:,} embedded, time left {_minutes(status.eta_seconds)} "
                          f"(chunk rate: {_minutes(old)})", file=sys.stderr)  # fmt: skip
            end = (elapsed, status.embedded, status.work_left or 0.0)
    finally:
        _cli("deep", "--stop")
    results["load_after"] = _load()
    results["seconds"] = round(end[0], 1)
    if after is not None and end[0] > after[0] + 30 and "all_s" not in results:
        span = end[0] - after[0]
        work_pace = (after[2] - end[2]) / span
        chunk_pace = (end[1] - after[1]) / span
        results["projected_total_s"] = round(end[0] + end[2] / work_pace) if work_pace > 0 else None
        results["projected_total_chunks_s"] = round(end[0] + (status.chunks - end[1]) / chunk_pace) if chunk_pace > 0 else None
    with open_index(config=config, read_only=True) as index:
        started_q = time.perf_counter()
        pending_work(index.store)
        results["pending_work_ms"] = round((time.perf_counter() - started_q) * 1000, 1)
    return results


def _minutes(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds / 60:.1f} min"


def render_eta(r: dict[str, Any]) -> str:
    total = r.get("projected_total_s")
    lines = [
        f"Vault: {r['files']:,} files, {r['chunks']:,} chunks. Load average before {r['load_before']}, after {r['load_after']}.",
        (
            f"Every opening had its deep vector after {r.get('openings_s', float('nan')):,.0f} s; "
            + (
                f"every chunk after {_minutes(r['all_s'])}."
                if "all_s" in r
                else f"the whole job, projected from the pace after the openings: {_minutes(total)} by work, "
                f"{_minutes(r.get('projected_total_chunks_s'))} by chunks."
            )
        ),
        (
            f"deep_status on this index: {r['deep_status_ms']:.1f} ms with nothing embedded (the query of what is left: "
            f"{r['pending_work_ms']:.1f} ms at the end)."
        ),
        "",
        "| after | chunks embedded | time left (work rate) → total | time left (chunk rate) → total | openings left (work / chunks) |",
        "|---|---|---|---|---|",
    ]
    for p in r["polls"]:
        cells = []
        for key in ("eta_s", "chunk_eta_s"):
            value = p[key]
            cells.append("?" if value is None else f"{_minutes(value)} → {_minutes(p['s'] + value)}")
        openings = f"{_minutes(p['openings_eta_s'])} / {_minutes(p['chunk_openings_eta_s'])}"
        lines.append(f"| {p['s']} s | {p['embedded']:,} | {cells[0]} | {cells[1]} | {openings} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.deepworker", description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=("interference", "openings", "eta"))
    parser.add_argument("--workdir", help="keep the vaults and indexes here, reused by later runs")
    parser.add_argument("--files", type=int, default=VaultSpec().files, help="vault size (default 16,894)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", metavar="FILE", help="write the raw numbers here")
    interfere = parser.add_argument_group("interference")
    interfere.add_argument("--queued-files", type=int, default=2_000, help="the vault the worker embeds meanwhile")
    interfere.add_argument("--rounds", type=int, default=3)
    interfere.add_argument("--kinds", default="shipped", help=f"workers to measure, comma-separated (of {', '.join(WORKER_KINDS)})")
    interfere.add_argument("--searches", type=int, default=20, help="warm searches per worker and round, half each way")
    interfere.add_argument("--hooks", type=int, default=10, help="hooks through the daemon per worker and round")
    interfere.add_argument("--cold-hooks", type=int, default=8, help="cold hooks per worker and round")
    interfere.add_argument("--queries", type=int, default=200, help="queries sampled from the vault")
    interfere.add_argument("--gap", type=float, default=2.5, help="seconds of quiet before each call")
    opening = parser.add_argument_group("openings")
    opening.add_argument("--until", choices=("openings", "all"), default="openings")
    estimate = parser.add_argument_group("eta")
    estimate.add_argument("--source", help="the folder copied and indexed (default: the shared data's PowerShell 7.5 reference)")
    estimate.add_argument("--seconds", type=float, default=180.0, help="how long the worker runs")
    estimate.add_argument("--every", type=float, default=10.0, help="seconds between the estimates recorded")
    args = parser.parse_args(argv)
    run, render = {"interference": (interference, render_interference), "openings": (openings, render_openings),
                   "eta": (eta, render_eta)}[args.part]  # fmt: skip
    results = run(args)
    print(render(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
