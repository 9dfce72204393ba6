"""Drawing for people at a terminal: the progress bar and human-readable results.

Only the CLI imports this. Nothing here decides anything; it renders records.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, TextIO

from ..records import QueryParse, SearchResponse, SearchResult, SkippedFile
from ..text.lexical import STOPWORDS

if TYPE_CHECKING:
    from ..reports import (
        DeepProgress,
        DeepStatus,
        DeepWorkerStatus,
        IndexStatus,
        Progress,
        SyncReport,
    )
    from ..storage.writer_lock import LockHolder

_PHASE_LABEL = {
    "scan": "Scanning",
    "index": "Indexing",
    "extract": "Reading page",
    "ocr": "OCR page",
    "embed": "Re-embedding",
    "delete": "Removing",
    "done": "Done",
}


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
QUERY_SHOWN = 80
"""A query longer than this is shown cut, with an ellipsis (a pasted page is not echoed back)."""


def clean(text: str) -> str:
    """Drop control characters, so a note cannot move the cursor or retitle the terminal."""
    return _CONTROL.sub("", text)


def use_color(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


class ProgressBar:
    """A one-line bar on stderr, redrawn at most 10 times a second; silent when stderr is not
    a terminal (logs and pipes get the summary only)."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        stream = sys.stderr if stream is None else stream  # the current stderr, not import time's
        self.stream = stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self._last = 0.0
        self._drawn = False
        self._phase = ""
        self._phase_started = 0.0

    def __call__(self, event: Progress) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        final = event.phase == "done" or (event.total and event.done >= event.total)
        if not final and now - self._last < 0.1:
            return
        self._last = now
        if event.phase == "done":
            self.clear()
            return
        if event.phase != self._phase:
            self._phase, self._phase_started = event.phase, now
        width = shutil.get_terminal_size((80, 20)).columns
        label = _PHASE_LABEL[event.phase]
        if event.phase in ("extract", "ocr"):  # one document's pages: "OCR page 3 of 21 · scan.pdf"
            line = f"{label} {event.done:,} of {event.total:,}"
            room = width - len(line) - 4
            if event.path and room > 10:
                path = clean(event.path)
                line += " · " + (path if len(path) <= room else "…" + path[-room + 1 :])
            self.stream.write("\r" + line[: width - 1].ljust(width - 1))
            self.stream.flush()
            self._drawn = True
            return
        if event.total:
            fraction = min(1.0, event.done / event.total)
            bar_len = max(10, min(30, width // 4))
            filled = int(bar_len * fraction)
            line = (
                f"{label} {'█' * filled}{'░' * (bar_len - filled)} "
                f"{event.done:,}/{event.total:,} {fraction:4.0%}"
            )
            elapsed = now - self._phase_started
            if event.done and elapsed > 2 and event.done < event.total:
                left = elapsed / event.done * (event.total - event.done)
                line += f" · {int(left) // 60}:{int(left) % 60:02d} left"
        else:
            line = f"{label}…"
        if event.path:
            room = width - len(line) - 4
            if room > 10:
                path = clean(event.path)
                path = path if len(path) <= room else "…" + path[-room + 1 :]
                line += f"  {path}"
        self.stream.write("\r" + line[: width - 1].ljust(width - 1))
        self.stream.flush()
        self._drawn = True

    def clear(self) -> None:
        if self._drawn:
            width = shutil.get_terminal_size((80, 20)).columns
            self.stream.write("\r" + " " * (width - 1) + "\r")
            self.stream.flush()
            self._drawn = False


class GracefulStop:
    """Ctrl-C while long work runs: the first asks it to stop at its next safe point (and
    says so on stderr, unless ``quiet``), the second aborts. Call the object to ask whether a
    stop was requested; the previous handler is back after the ``with`` block."""

    def __init__(self, message: str, *, quiet: bool = False) -> None:
        self.message, self.quiet = message, quiet
        self.requested = False
        self._previous: Any = None

    def __call__(self) -> bool:
        return self.requested

    def _on_sigint(self, _signum: int, _frame: object) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        if not self.quiet:
            sys.stderr.write(f"\n{self.message} (Ctrl-C again to abort)…\n")

    def __enter__(self) -> GracefulStop:
        self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *_exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)


def searched_vault_line(vault: Path) -> str:
    """What a search that no ``--vault`` named says on stderr: which vault it searched."""
    home = Path.home()
    shown = f"~/{vault.relative_to(home)}" if vault.is_relative_to(home) and vault != home else str(vault)
    return f"searching {shown} (the last vault indexed; --vault to choose)"


@contextlib.contextmanager
def exit_on_sigterm() -> Iterator[None]:
    """SIGTERM (``kill``, a service manager) ends the process as Ctrl-C would let it end: by
    unwinding, so ``with`` blocks clean up (``serve --demo`` deletes its scratch folder), then
    exit status 143 (128 + SIGTERM). uvicorn, which handles SIGTERM itself while it serves,
    raises it again when it has stopped, and lands here."""

    def terminate(_signum: int, _frame: object) -> None:
        raise SystemExit(128 + signal.SIGTERM)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class DeepBar(ProgressBar):
    """The deep job's bar on stderr: chunks with a deep vector of all, rate, time left."""

    def __call__(self, event: DeepProgress) -> None:  # type: ignore[override]  # another event type, same drawing
        now = time.monotonic()
        if not self.enabled or (now - self._last < 0.1 and event.done < event.total):
            return
        self._last = now
        width = shutil.get_terminal_size((80, 20)).columns
        fraction = min(1.0, event.done / event.total) if event.total else 1.0
        bar_len = max(10, min(30, width // 4))
        filled = int(bar_len * fraction)
        line = f"Deep vectors {'█' * filled}{'░' * (bar_len - filled)} {event.done:,}/{event.total:,} {fraction:4.0%}"
        if event.rate:
            line += f" · {event.rate:.1f} chunks/s"
            if event.done < event.total:
                left = event.seconds_left if event.seconds_left is not None else (event.total - event.done) / event.rate
                line += f" · {format_duration(left)} left"
        self.stream.write("\r" + line[: width - 1].ljust(width - 1))
        self.stream.flush()
        self._drawn = True


def format_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 20 min``."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def format_time_left(
    eta: float | None, openings_eta: float | None, *, openings_pending: int, rate: float | None = None
) -> str:
    """``~1 h 20 min left at 4.1 chunks/s (every note's opening in ~12 min)``, or ``time
    left: measuring`` before the job has timed a batch. ``rate`` is the average the estimate
    assumes for the chunks left (``DeepStatus.rate_left``), not the rate of the last batches:
    the short openings go first and faster. The openings' time is said when it is well short
    of the whole (the openings go first)."""
    if eta is None:
        return "time left: measuring"
    text = f"~{format_duration(eta)} left" + (f" at {rate:.1f} chunks/s" if rate else "")
    if openings_pending and openings_eta is not None and openings_eta < 0.8 * eta:
        soon = format_duration(openings_eta)
        if soon != format_duration(eta):
            text += f" (every note's opening in ~{soon})"
    return text


def format_deep_status(deep: DeepStatus) -> str:
    """One line: how many chunks have a deep vector, what happens next, and the embedding
    server the texts go to (when there is one)."""
    line = _deep_line(deep)
    return f"{line}; texts go to the embedding server at {deep.host}" if deep.host else line


def _deep_line(deep: DeepStatus) -> str:
    share = f"{deep.embedded:,} of {deep.chunks:,} chunks" + (
        f" ({deep.embedded / deep.chunks:.0%})" if deep.chunks and deep.pending else ""
    )
    if deep.serving_model:  # a new model's vectors, built while the old ones serve
        share = f"{share} by {deep.model}"
    if deep.openings_pending:
        share += f", {deep.openings_embedded:,} of {deep.openings:,} notes' openings"
    if deep.serving_model:
        share += f"; search uses {deep.serving_model} until they are all done"
    if deep.state == "unavailable":
        return f"off here: {deep.reason} ({share})"
    if deep.state == "complete":
        return f"{share}, complete ({deep.model or 'deep model'})"
    if deep.state == "paused" and deep.problem:
        return f"{share}; paused: {deep.problem} — it resumes when the server answers (`vaultseek deep` now)"
    left = format_time_left(deep.eta_seconds, deep.openings_eta_seconds, openings_pending=deep.openings_pending, rate=deep.rate_left)
    if deep.state == "running":
        return f"{share}; embedding the rest in the background, {left}"
    if deep.state == "queued":
        return f"{share}; queued for the background worker, {left}"
    if deep.state == "paused":
        return f"{share}; paused (`vaultseek deep --resume` continues)"
    known = f", ~{format_duration(deep.eta_seconds)} of work left" if deep.eta_seconds else ""
    return f"{share}; the rest waits for the next `vaultseek index`, the daemon or `vaultseek deep`{known}"


def format_deep_worker(worker: DeepWorkerStatus) -> str:
    """The background worker and one line per index it serves, for ``vaultseek status``."""
    count = len(worker.entries)
    indexes = f"{count:,} {'index' if count == 1 else 'indexes'} queued"
    if worker.state == "running":
        threads = "" if worker.threads is None else f", {worker.threads} engine thread{'s' if worker.threads > 1 else ''}"
        head = f"running (pid {worker.pid}{threads}), {indexes} — `vaultseek deep --stop` stops it, `--pause` holds it"
    elif worker.state == "paused":
        head = f"paused, {indexes} — `vaultseek deep --resume` continues"
    else:
        head = f"not running, {indexes} — `vaultseek deep --resume` starts it"
    lines = [f"deep worker:  {head}"]
    vaults = [entry.vault for entry in worker.entries]
    for entry in worker.entries:
        name = clean(entry.vault if vaults.count(entry.vault) == 1 else f"{entry.vault} ({entry.index})")
        if entry.deep is None:
            lines.append(f"  {name}: cannot be opened now: {clean(entry.problem or '')}")
        else:
            lines.append(f"  {name}: {format_deep_status(entry.deep)}")
    return "\n".join(lines)


def format_sync_report(report: SyncReport, *, vault: str, db: str) -> str:
    done = report.added + report.updated + report.unchanged + report.touched
    headline = (
        f"Stopped after {report.seconds:.1f} s with {done:,} of {report.scanned:,} files indexed → {db}"
        if report.interrupted
        else f"Indexed {vault} in {report.seconds:.1f} s → {db}"
    )
    lines = [
        headline,
        (
            f"  {report.scanned:,} files: {report.added:,} added, {report.updated:,} updated, "
            f"{report.unchanged + report.touched:,} unchanged, {report.deleted:,} removed, "
            f"{len(report.skipped):,} skipped"
        ),
        f"  {report.chunks_written:,} chunks written ({report.vectors_reused:,} vectors reused)",
    ]
    if report.documents_extracted:
        pages = f", {report.pages_extracted:,} PDF pages read" if report.pages_extracted else ""
        ocr = f", {report.pages_ocred:,} pages OCRed" if report.pages_ocred else ""
        resumed = (
            f", {report.pages_resumed:,} OCRed pages resumed from an interrupted run"
            if report.pages_resumed
            else ""
        )
        lines.append(f"  {report.documents_extracted:,} documents extracted{pages}{ocr}{resumed}")
    if report.redactions:
        total = sum(report.redactions.values())
        kinds = ", ".join(f"{name} ×{n}" for name, n in report.redactions.items())
        lines.append(f"  {total:,} credentials redacted before storing: {kinds}")
    for notice in report.notices:
        lines.append(f"  note: {notice}")
    if report.skipped:
        lines.append("  skipped (see `vaultseek status` for all):")
        for item in report.skipped[:5]:
            lines.append(f"    {clean(item.path)}: {clean(item.reason)}")
        if len(report.skipped) > 5:
            lines.append(f"    … and {len(report.skipped) - 5:,} more")
    if report.interrupted:
        lines.append("  run the same command again to continue: the files already written are kept")
    return "\n".join(lines)


def format_results(response: SearchResponse, *, color: bool, verbose: bool = False) -> str:
    """The answer for a reader: notices, then a numbered entry per result. In the note view an
    entry is a note — its path and title, then its sections indented, each with its label, why
    it ranked and its snippet; in the chunk view, a section with its heading context.

    A result shows how likely it is to answer the query (the calibrated relevance,
    ``search/relevance.py``), not the fused score, which is normalised per query and means
    nothing to a reader (the best hit of any query scores about 1); ``verbose`` adds it."""
    bold, dim, reset = ("\033[1m", "\033[2m", "\033[0m") if color else ("", "", "")
    marks = _marks(response) if color else None

    def snippet(hit: SearchResult) -> str:
        text = clean(hit.snippet)
        return marks.sub(lambda m: f"{bold}{m.group(0)}{reset}", text) if marks is not None else text

    lines: list[str] = [f"{dim}{format_parse(response.parsed)}{reset}"] if response.parsed is not None else []
    lines += [f"note: {n}" for n in response.notices]
    lines += [f"{dim}{line}{reset}" for line in format_model_steps(response)]
    if response.intent is not None:
        lines.append(f"intent: {response.intent} ({'exact words' if response.intent == 'identifier' else 'meaning'} weighted up)")
    if not response.results:
        shown = response.query if len(response.query) <= QUERY_SHOWN else response.query[: QUERY_SHOWN - 1] + "…"
        lines.append(f"No results for {shown!r}.")
        return "\n".join(lines)
    if response.view == "notes":
        for number, note in enumerate(response.notes, start=1):
            title = f" — {note.title}" if note.title and note.title != PurePosixPath(note.path).stem else ""
            judged = _judgment(note.sections[0] if note.sections else None, verbose, note.score)
            lines.append(f"{number:>2}. {bold}{clean(note.path)}{reset}{clean(title)}{f'  {dim}{judged}{reset}' if judged else ''}")
            for hit in note.sections:
                label = clean(hit.label) or "(top of the note)"
                lines.append(f"    › {label}  {dim}{_why(hit)}{reset}")
                lines.append(f"      {snippet(hit)}")
        return "\n".join(lines)
    for number, hit in enumerate(response.results, start=1):
        where = hit.path
        if hit.location is not None and hit.location.label():
            where += f" · {hit.location.label()}"
        where = clean(f"{where} › {hit.section}" if hit.section else where)
        shown = " · ".join(part for part in (_judgment(hit, verbose), _why(hit)) if part)
        lines.append(f"{number:>2}. {bold}{where}{reset}  {dim}{shown}{reset}")
        lines.append(f"    {dim}{clean(hit.heading_context)}{reset}")
        lines.append(f"    {snippet(hit)}")
    return "\n".join(lines)


def _marks(response: SearchResponse) -> re.Pattern[str] | None:
    """What a snippet marks: the words searched (three letters or more, common words left
    out) and what the search added for the ones no chunk holds (``response.alternatives``),
    each at the start of a word and with up to two letters of its ending free, as snippets
    are cut (*retry* marks *retries*); None when there is nothing to mark."""
    searched = response.parsed.text if response.parsed is not None else response.query
    words = [w for w in re.findall(r"\w{3,}", searched[:QUERY_SHOWN * 10].lower()) if w not in STOPWORDS]
    words += [w.lower() for w in response.alternative_words]
    stems = {w if len(w) <= 4 else w[: max(4, len(w) - 2)] for w in words if w}
    if not stems:
        return None
    return re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(stems, key=len, reverse=True))) + r")\w*", re.IGNORECASE)


def format_model_steps(response: SearchResponse) -> list[str]:
    """What query expansion searched and what the reranker did, with the time each took:
    ``expanded by ollama:qwen3:4b in 850 ms: keywords …`` and ``reranked 20 by tei in 95 ms``."""
    lines = []
    expansion = response.expansion
    if expansion is not None:
        parts = []
        if expansion.lexical:
            parts.append("keywords " + " · ".join(clean(q) for q in expansion.lexical))
        if expansion.semantic:
            parts.append("rephrased " + " · ".join(clean(q) for q in expansion.semantic))
        if expansion.passage:
            passage = clean(expansion.passage)
            parts.append(f"answer \"{passage[:80]}{'…' if len(passage) > 80 else ''}\"")
        cached = ", cached" if expansion.cached else ""
        lines.append(f"expanded by {clean(expansion.model)} ({expansion.ms:.0f} ms{cached}): " + "; ".join(parts))
    if response.reranking is not None:
        r = response.reranking
        lines.append(f"reranked the best {r.candidates} by {clean(r.reranker)} in {r.ms:.0f} ms")
    return lines


def format_parse(parsed: QueryParse) -> str:
    """One line saying what a query's operators asked for: ``searched: sync · excluded
    "android" · filters tag:work``."""
    parts = [f"searched: {clean(parsed.text)}"]
    parts += [f'required "{clean(phrase)}"' for phrase in parsed.required]
    if parsed.excluded:
        parts.append("excluded " + ", ".join(f'"{clean(item)}"' for item in parsed.excluded))
    if parsed.fields:
        parts.append("filters " + " ".join(clean(typed) for typed in parsed.fields))
    for prefix, words in parsed.prefixes.items():
        parts.append(f"{clean(prefix)} as {', '.join(words)}" if words else f"no word starts with {clean(prefix.rstrip('*'))}")
    return " · ".join(parts)


def _judgment(hit: SearchResult | None, verbose: bool, score: float | None = None) -> str:
    """``84% likely relevant`` (the calibrated probability that the hit answers the query),
    and with ``verbose`` the raw fused score (``score``: a note's, which it ranks by, in place
    of its best section's): ``84% likely relevant · score 1.0000``."""
    if hit is None:
        return ""
    parts = [] if hit.relevance is None else [f"{_percent(hit.relevance)} likely relevant"]
    if verbose:
        parts.append(f"score {hit.score if score is None else score:.4f}")
    return " · ".join(parts)


def _percent(probability: float) -> str:
    """``84%``; ``<1%`` and ``>99%`` at the ends, where a rounded 0% or 100% would claim
    certainty the judgment does not have."""
    if probability < 0.005:
        return "<1%"
    if probability > 0.995:
        return ">99%"
    return f"{probability:.0%}"


def _why(hit: SearchResult) -> str:
    """A section's ranks in the lists and the signals that moved it, in words."""
    ranks = []
    if hit.bm25_rank is not None:
        ranks.append(f"bm25 #{hit.bm25_rank}")
    if hit.vec_rank is not None:
        ranks.append(f"vector #{hit.vec_rank}")
    if hit.deep_rank is not None:
        ranks.append(f"deep #{hit.deep_rank}")
    if "title" in hit.signals:
        ranks.append("title match")
    if "recency" in hit.signals:
        ranks.append(f"recency ×{hit.signals['recency']:.2f}")
    return ", ".join(ranks)


def format_status(status: IndexStatus, *, show_all_skipped: bool = False) -> str:
    size = status.db_bytes / 1_000_000
    lines = [
        f"vault:        {status.vault}",
        f"index:        {status.db_path} ({size:.1f} MB, schema v{status.schema_version})",
        f"files:        {status.files:,} indexed, {len(status.skipped):,} skipped",
        f"chunks:       {status.chunks:,} ({status.vectors:,} with vectors)",
        f"model:        {status.model or '—'} ({status.model_fingerprint or 'no vectors yet'})",
        f"last indexed: {status.last_indexed or 'never'}",
    ]
    if status.deep is not None:
        lines.insert(5, f"deep tier:    {format_deep_status(status.deep)}")
    if status.documents or status.failed_documents:
        kinds = ", ".join(f"{kind} {n:,}" for kind, n in status.documents.items())
        total = sum(status.documents.values())
        no_text = f", {len(status.textless_documents):,} with no text" if status.textless_documents else ""
        lines.insert(
            3,
            f"documents:    {total:,} indexed{f' ({kinds})' if kinds else ''}, "
            f"{len(status.failed_documents):,} failed{no_text}",
        )
    if status.ocr_pages or status.ocr_pending or status.ocr_over_limit:
        waiting = f", {status.ocr_pending:,} waiting for OCR" if status.ocr_pending else ""
        if status.ocr_over_limit:
            waiting += f", {status.ocr_over_limit:,} not OCRed (limit: ocr_max_pages_per_document = {status.ocr_max_pages:,})"
        lines.insert(4, f"OCR:          {status.ocr_pages:,} pages OCRed{waiting}")
    if status.follow_external_symlinks:
        lines.append("symlinks:     followed out of the vault (follow_external_symlinks = true)")
    elif status.external_symlinks:
        lines.append(
            f"symlinks:     {status.external_symlinks:,} lead out of the vault and were skipped "
            "(follow_external_symlinks = true indexes what they lead to)"
        )
    failed = {item.path for item in status.failed_documents}
    others = tuple(item for item in status.skipped if item.path not in failed)
    from ..reports import NO_TEXT  # here, not at the top: a plain search never loads reports

    textless = tuple(SkippedFile(path, NO_TEXT) for path in status.textless_documents)
    sections = (("failed documents:", status.failed_documents), ("documents with no text:", textless), ("skipped files:", others))
    for title, items in sections:
        if not items:
            continue
        lines.append(title)
        shown = items if show_all_skipped else items[:20]
        for item in shown:
            lines.append(f"  {clean(item.path)}: {clean(item.reason)}")
        if len(shown) < len(items):
            lines.append(f"  … and {len(items) - len(shown):,} more (--all to list them)")
    return "\n".join(lines)


def format_backend(info: dict[str, str]) -> str:
    """``status``'s lines about an index on a database server (``Index.backend_info()``), one
    ``key: value`` each, aligned with :func:`format_status`'s."""
    return "\n".join(f"{key.replace('_', ' ') + ':':<14}{clean(value)}" for key, value in info.items())


_SHOWN_NOTICES: set[str] = set()


def lock_waiter(db: Any, *, timeout: float | None, err: TextIO | None = None) -> Callable[[LockHolder], None]:
    """The ``on_wait`` of a sync started from the terminal: one line on stderr saying who
    writes the index and that this run waits for it (again if the writer changes)."""
    sink = err if err is not None else sys.stderr
    patience = "until it is done" if timeout is None else f"up to {timeout:g} s"

    def on_wait(holder: LockHolder) -> None:
        sink.write(
            f"waiting: the index {db} is being written by {clean(holder.describe())}; "
            f"this run waits {patience}, then starts (Ctrl-C to stop)\n"
        )
        sink.flush()

    return on_wait


def show_notices(notices: tuple[str, ...], err: TextIO | None = None) -> None:
    """The configuration's notices (settings it left out, and why) as ``warning:`` lines on
    stderr, each once per process however often the configuration is loaded."""
    sink = err if err is not None else sys.stderr
    for notice in notices:
        if notice not in _SHOWN_NOTICES:
            _SHOWN_NOTICES.add(notice)
            sink.write(f"warning: {clean(notice)}\n")
