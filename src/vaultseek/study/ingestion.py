"""Ingestion: the one writer thread that indexes and deletes in the order asked, with a live
step timeline per file, and the broadcast that carries each step to the app's listeners.

Every write runs on this thread with its own ``Index``, so two uploads never race; uploads
queued while a run is on ride along with the next one.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from typing import Any

from ..engine import Index
from ..records import Progress
from .catalogue import skipped_on_purpose
from .readers import IndexFactory
from .storage import StudyStore
from .uploads import upload_file


class Broadcast:
    """Fan events out from any thread to asyncio subscribers (one queue each)."""

    def __init__(self) -> None:
        self.subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]] = set()
        self.lock = threading.Lock()

    def subscribe(self) -> asyncio.Queue[dict[str, Any]]:
        q: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1000)
        with self.lock:
            self.subscribers.add((asyncio.get_running_loop(), q))
        return q

    def unsubscribe(self, q: asyncio.Queue[dict[str, Any]]) -> None:
        with self.lock:
            self.subscribers = {s for s in self.subscribers if s[1] is not q}

    def publish(self, event: dict[str, Any]) -> None:
        with self.lock:
            targets = list(self.subscribers)
        for loop, q in targets:
            try:
                loop.call_soon_threadsafe(_offer, q, event)
            except RuntimeError:  # the loop has closed: a subscriber that went away
                self.unsubscribe(q)


def _offer(q: asyncio.Queue[dict[str, Any]], event: dict[str, Any]) -> None:
    if not q.full():
        q.put_nowait(event)


class Ingestor:
    """The one writer: a thread that runs index syncs and deletions in order, keeping a
    step timeline for every file it was asked about."""

    def __init__(self, factory: IndexFactory, store: StudyStore, broadcast: Broadcast) -> None:
        self.factory = factory
        self.store = store
        self.broadcast = broadcast
        self.jobs: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.tasks: queue.Queue[tuple[str, str | None, threading.Event | None]] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="vaultseek-writer", daemon=True)
        self.stopping = False
        self.last_error: str | None = None
        """Why the latest indexing run failed (None once one succeeds): a run with no upload
        behind it, such as the start-up sync, has no timeline to report on."""
        self.idle = threading.Event()
        self.idle.set()
        self.generation = 0
        """Runs and deletions done: the knowledge base's list is made again after each."""
        self.thread.start()

    # -- asking -------------------------------------------------------------------------
    def sync(self, path: str | None = None) -> threading.Event:
        """Index the vault (incrementally); ``path`` gets a timeline. Returns an event set
        when the run is over."""
        if path is not None:
            self._step(path, "queued", status="queued")
        return self._put("sync", path)

    def delete(self, path: str) -> threading.Event:
        self._step(path, "deleting", status="deleting")
        return self._put("delete", path)

    def _put(self, kind: str, path: str | None) -> threading.Event:
        finished = threading.Event()
        self.idle.clear()
        self.tasks.put((kind, path, finished))
        return finished

    def close(self) -> None:
        self.stopping = True
        self.tasks.put(("stop", None, None))
        self.thread.join(timeout=10)

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(job, steps=list(job["steps"])) for job in self.jobs.values()]

    # -- the timeline -------------------------------------------------------------------
    def _step(self, path: str, step: str, *, detail: str = "", status: str | None = None,
              replace_last: bool = False) -> None:  # fmt: skip
        with self.lock:
            job = self.jobs.setdefault(path, {"path": path, "status": "queued", "steps": [], "error": None})
            entry = {"step": step, "detail": detail, "at": round(time.time(), 3)}
            if replace_last and job["steps"] and job["steps"][-1]["step"] == step:
                job["steps"][-1] = entry
            else:
                job["steps"].append(entry)
            if status is not None:
                job["status"] = status
            if step in ("failed", "skipped"):
                job["error"] = detail
            event = dict(job, steps=list(job["steps"]))
        self.broadcast.publish(event)

    # -- the writer thread --------------------------------------------------------------
    def _run(self) -> None:
        index: Index | None = None
        while True:
            kind, path, finished = self.tasks.get()
            if kind == "stop":
                break
            batch = [(kind, path, finished)]
            if kind == "sync":  # later uploads ride along with this run
                while True:
                    try:
                        more = self.tasks.get_nowait()
                    except queue.Empty:
                        break
                    if more[0] != "sync":
                        self.tasks.put(more)
                        break
                    batch.append(more)
            try:
                if index is None:
                    index = self.factory()
                if kind == "delete":
                    assert path is not None
                    self._delete(index, path)
                else:
                    self._sync(index, [p for _k, p, _f in batch if p is not None])
                self.last_error = None
            except Exception as exc:  # noqa: BLE001 - reported on the timeline, never lost
                self.last_error = str(exc) or type(exc).__name__
                for _k, p, _f in batch:
                    if p is not None:
                        self._step(p, "failed", detail=str(exc), status="failed")
                if index is not None:
                    index.close()
                    index = None
            finally:
                self.generation += 1
                for _k, _p, done in batch:
                    if done is not None:
                        done.set()
                if self.tasks.empty():
                    self.idle.set()
        if index is not None:
            index.close()

    def _sync(self, index: Index, paths: list[str]) -> None:
        watched = set(paths)
        for path in paths:
            self._step(path, "indexing", status="indexing")
        last = {"t": 0.0}

        def progress(event: Progress) -> None:
            if event.path in watched and event.phase in ("extract", "ocr"):
                now = time.monotonic()
                if now - last["t"] > 0.1 or event.done == event.total:
                    last["t"] = now
                    label = "reading pages" if event.phase == "extract" else "OCR"
                    self._step(event.path, label, detail=f"page {event.done} of {event.total}", replace_last=True)
            elif event.phase == "embed" and watched:
                for path in watched:
                    self._step(path, "embedding", detail=f"{event.done} of {event.total}", replace_last=True)

        report = index.sync(progress=progress, should_stop=lambda: self.stopping, remember=False)
        if report.chunks_written and index.config.deep_tier:
            from ..embeddings.deep import deep_model_unavailable
            from ..index.deep_queue import enqueue

            if deep_model_unavailable(index.config.deep_model) is None:  # the background worker gives the new chunks deep vectors
                enqueue(index.config)
        states = index.store.file_states(paths)
        for path in paths:
            state = states.get(path)
            if state is None:
                self._step(path, "failed", detail="the file is no longer in the vault", status="failed")
            elif state.status == "skipped":
                reason = state.error or "skipped"
                verdict = "skipped" if skipped_on_purpose(reason) else "failed"
                self._step(path, verdict, detail=reason, status=verdict)
            else:
                chunks = len(index.store.chunk_ids_of_files([path]))
                self._step(path, "done", detail=f"{chunks} chunks", status="indexed")

    def _delete(self, index: Index, path: str) -> None:
        upload_file(index.config, path).unlink(missing_ok=True)  # a symlink: the link, not its target
        index.forget(path)
        self.store.rename_path(path, None)
        self._step(path, "deleted", status="deleted")
