"""What one index run counts and has to say, kept as it goes and turned into its report.

Every step of a run — the walk, reading and parsing a file, embedding, writing — adds to the
same :class:`Tally`: counts by name, the credential redactions made, the files skipped and why,
notices for the user, and the optional extras documents needed. A skipped file is recorded in
the index here too, so a later run knows why it was left out and when to try it again.
"""

from __future__ import annotations

from collections import Counter

from ..documents import kind_of
from ..errors import MissingExtraError
from ..records import SkippedFile, SyncReport
from ..storage.store import FileState, Store
from .names import shown_path
from .sources import SourceFile

TEXTLESS_NAMED = 5
"""Documents with no text named in a run's notice; ``vaultseek status`` lists them all."""


class Tally:
    """The counts, redactions, skips and notices of one index run."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.counts: Counter[str] = Counter()
        self.redactions: Counter[str] = Counter()
        self.skipped: list[SkippedFile] = []
        self.notices: list[str] = []
        self.missing_extras: dict[str, list[MissingExtraError]] = {}
        """Extra name → one error per document skipped for want of it (one notice per extra)."""
        self.textless: list[str] = []
        """Documents read without error in which no text was found (shown paths)."""

    def notice(self, text: str) -> None:
        """Say ``text`` once in this run's report, however many files gave cause to."""
        if text not in self.notices:
            self.notices.append(text)

    def skip(self, source: SourceFile, state: FileState | None, reason: str) -> None:
        """Record a file that cannot be indexed (writing only when something changed)."""
        if (
            state is None
            or state.status != "skipped"
            or state.error != reason
            or (state.size, state.mtime_ns) != (source.size, source.mtime_ns)
        ):
            self.store.record_skip(
                source.path,
                size=source.size,
                mtime_ns=source.mtime_ns,
                reason=reason,
                kind=kind_of(source.path) or "note",
            )
        self.skipped.append(SkippedFile(shown_path(source.path), reason))

    def skip_for_extra(self, source: SourceFile, state: FileState | None, error: MissingExtraError) -> None:
        """Skip a document like a damaged file; the hint to install the extra comes once, in
        the report's notices."""
        reason = f"needs the optional '{error.extra}' extra, which is not installed"
        self.skip(source, state, reason)
        self.missing_extras.setdefault(error.extra, []).append(error)

    def report(self, *, scanned: int, interrupted: bool, seconds: float, full: bool) -> SyncReport:
        """The run's report, from what was counted."""
        return SyncReport(
            scanned=scanned,
            added=self.counts["added"],
            updated=self.counts["updated"],
            unchanged=self.counts["unchanged"],
            touched=self.counts["touched"],
            deleted=self.counts["deleted"],
            skipped=tuple(self._final_skips()),
            chunks_written=self.counts["chunks"],
            vectors_reused=self.counts["reused"],
            reembedded=self.counts["reembedded"],
            redactions=dict(sorted(self.redactions.items())),
            interrupted=interrupted,
            seconds=seconds,
            notices=(*self.notices, *self._missing_extra_notices(), *self._textless_notices()),
            documents_extracted=self.counts["documents"],
            pages_extracted=self.counts["pages"],
            pages_ocred=self.counts["ocred"],
            pages_resumed=self.counts["resumed"],
            full=full,
        )

    def _missing_extra_notices(self) -> list[str]:
        """One notice per missing extra, however many documents needed it."""
        notices = []
        for extra, errors in sorted(self.missing_extras.items()):
            count, them = (f"{len(errors):,} documents", "them") if len(errors) > 1 else ("1 document", "it")
            notices.append(
                f"{count} skipped: reading {them} needs the optional '{extra}' extra; "
                f"install it with {errors[0].install} and run again"
            )
        return notices

    def _textless_notices(self) -> list[str]:
        """One notice naming the documents in which no text was found: indexed, so their
        links resolve, but nothing in them can be searched."""
        if not self.textless:
            return []
        shown = ", ".join(self.textless[:TEXTLESS_NAMED]) + (" …" if len(self.textless) > TEXTLESS_NAMED else "")
        count = f"{len(self.textless):,} documents have" if len(self.textless) > 1 else "1 document has"
        return [f"{count} no text to search (empty, or only pictures): {shown}; `vaultseek status` lists them"]

    def _final_skips(self) -> list[SkippedFile]:
        """Each skipped file once (the last reason given for it), in path order."""
        return sorted({s.path: s for s in self.skipped}.values(), key=lambda s: s.path)
