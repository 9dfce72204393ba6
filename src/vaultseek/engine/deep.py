"""The deep tier of one index: its job (chunks without a deep vector given one, under the job's
lock; ``index/deepening.py`` does the work) and its status (coverage, the job's state and
rate, and why it waits).

The job's modules and the report types are imported when the tier is used: a search needs
none of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Config
from ..errors import ConfigError, EmbeddingServerError
from ..records import DeepState
from ..search.sides import Sides
from ..storage.store import Store
from .backend import ErrorScope

if TYPE_CHECKING:
    from ..embeddings.deep import DeepModel
    from ..index.deepening import DeepProgressCallback
    from ..index.sync import StopCheck
    from ..reports import DeepReport, DeepStatus


class DeepTier:
    """The deep tier's job and status for :class:`~vaultseek.engine.Index` (documented there).
    ``errors`` re-raises database failures as vaultseek errors. The configuration comes with
    each call, as the index has it then (a caller may replace it on an open index)."""

    def __init__(self, store: Store, sides: Sides, *, db_path: Path, errors: ErrorScope) -> None:
        self.store = store
        self.sides = sides
        self.db_path = db_path
        self.errors = errors

    def deepen(
        self,
        config: Config,
        *,
        progress: DeepProgressCallback | None,
        should_stop: StopCheck | None,
        seconds: float | None,
        limit: int | None,
        model: DeepModel | None,
    ) -> DeepReport | None:
        from ..index.deepening import deepen, take_lock
        from ..search.hubs import store_probes

        if not config.deep_tier:
            raise ConfigError("the deep tier is off (deep_tier = false)", hint="set deep_tier = true to use it")
        try:
            if model is None:
                self.sides.forget_deep_failure()  # the job asks the server again
                model = self.sides.deep_model()
            lock = take_lock(self.db_path)
            if lock is None:
                return None
            self.sides.forget_deep_vectors()
            try:
                with self.errors():
                    serving = self.store.get_meta("deep_model_fingerprint")
                    if serving in (None, model.fingerprint):  # hub probes of the vectors search uses
                        store_probes(self.store, model)
                    report = deepen(
                        self.store, model, progress=progress, should_stop=should_stop, seconds=seconds, limit=limit
                    )
                    if report.reset:
                        store_probes(self.store, model)
                    return report
            finally:
                lock.close()
        except EmbeddingServerError as exc:  # down at start or mid-job: status says why until it answers
            from ..index.deepening import PROBLEM_KEY

            with self.errors():
                self.store.set_meta({PROBLEM_KEY: exc.message})
            raise

    def status(self, config: Config) -> DeepStatus | None:
        """The deep tier's coverage and job (None when the tier is off)."""
        if not config.deep_tier:
            return None
        from ..embeddings.deep import deep_model_unavailable
        from ..embeddings.server import server_host
        from ..index.deep_queue import paused, queue_state
        from ..index.deepening import (
            PROBLEM_KEY,
            job_running,
            pending_work,
            stored_rate,
            stored_work_rate,
        )
        from ..reports import DeepStatus

        store = self.store
        with self.errors():
            building = bool(store.get_meta("deep_next_fingerprint"))
            embedded, chunks = store.deep_progress(building=building)
            openings_embedded, openings = store.deep_opening_progress(building=building)
            name = store.get_meta("deep_next_name" if building else "deep_model_name")
            serving = store.get_meta("deep_model_name") if building else None
            rate = stored_rate(store)
            work_rate = stored_work_rate(store)
            # what is left, weighed by length (timed by `python -m benchmarks.deepworker eta`)
            work_left, openings_work_left = pending_work(store, building=building) if embedded < chunks else (0.0, 0.0)
            problem = store.get_meta(PROBLEM_KEY) or None
        reason = deep_model_unavailable(config.deep_model)
        state: DeepState
        if reason is not None:
            state = "unavailable"
        elif embedded >= chunks:
            state, problem = "complete", None
        elif job_running(self.db_path):
            state = "running"
        elif problem is not None:
            state = "paused"
        else:
            queued = queue_state(self.db_path)
            # not queued (the watcher or the daemon synced it): under a pause nothing embeds it
            state = queued if queued is not None else "paused" if paused() else "waiting"
        return DeepStatus(
            model=name, chunks=chunks, embedded=embedded, state=state, rate=rate, reason=reason,
            openings=openings, openings_embedded=openings_embedded, serving_model=serving,
            host=server_host(config.deep_model, config.deep_url), problem=problem,
            work_rate=work_rate, work_left=work_left, openings_work_left=openings_work_left,
        )  # fmt: skip
