"""The knowledge base's list of files: each with a status that tells the truth, searched,
filtered, sorted and cut into pages on the server; the folder and category tree beside it; and
the rule for a category's name.

The whole list is read from the index (one compact row a file, see :meth:`Store.file_listing`)
and ordered here, in memory: a sort or a filter by category joins two databases (the index and
the study database), and 20k rows sort in tens of milliseconds. The list and each order asked
of it are kept until the index or the categories change (``KnowledgeBase.listing``), so a page
costs a slice, or one pass over the rows when it is filtered. Only the page asked for is turned
into JSON, so an answer stays small however large the vault.

Statuses:

``indexed``       searchable;
``ocr_pending``   indexed, but pages without a text layer wait for OCR (the reason says why);
``indexing``      queued or being read now (an upload, a re-index);
``deleting``      on its way out;
``failed``        could not be read: damaged, encrypted, bad encoding (the reason says which);
``skipped``       left out on purpose: a missing optional extra, over a size limit, a link
                  out of the vault, an unsupported type (the reason says which and the fix).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..errors import QueryError
from ..reports import NO_TEXT

STATUSES = ("indexed", "ocr_pending", "indexing", "deleting", "failed", "skipped")
SORTS = ("path", "title", "kind", "size", "chunks", "status", "indexed_at")
DEFAULT_LIMIT = 50
MAX_LIMIT = 200
MAX_QUERY_CHARS = 200
MAX_CATEGORY_CHARS = 80

_SKIPPED_ON_PURPOSE = (
    "needs the optional",  # a missing extra (sync's wording)
    "too large",  # over max_file_mb / max_document_mb
    "symlink",  # a link out of the vault, a loop
    "not a regular file",
    "unsupported document type",
    "file name is not valid UTF-8",
    "folder name is not valid UTF-8",
)
"""How the skip reasons of files left out on purpose begin; any other reason is a failure."""


class ListingRow(NamedTuple):
    """One file as the index holds it (the columns of :meth:`Store.file_listing`)."""

    path: str
    kind: str
    status: str
    size: int
    chunks: int
    title: str | None
    error: str | None
    indexed_at: str | None
    ocr_pending: int
    ocr_over_limit: int
    ocr_limit: int
    content_hash: str | None


class Entry(NamedTuple):
    """A file as the knowledge base shows it: the index's row with its true status, the
    ingestion job's state laid over it, its category and its duplicate (if any)."""

    path: str
    title: str | None
    kind: str | None
    size: int | None
    chunks: int
    status: str
    reason: str | None
    category: str | None
    indexed_at: str | None
    deletable: bool
    duplicate_of: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


@dataclass(frozen=True, slots=True)
class DocumentQuery:
    """One page of the list: a search over path and title, filters, an order and a window."""

    q: str = ""
    folder: str = ""
    category: str = ""
    statuses: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    sort: str = "path"
    descending: bool = False
    offset: int = 0
    limit: int | None = DEFAULT_LIMIT
    """None: every row (the chat's list-documents tool); the HTTP API caps it at MAX_LIMIT."""

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> DocumentQuery:
        """The query of ``GET /api/documents`` (raises :class:`QueryError` naming the bad
        parameter and what it takes)."""
        q = params.get("q", "").strip()
        if len(q) > MAX_QUERY_CHARS:
            raise QueryError(f"q has at most {MAX_QUERY_CHARS} characters")
        sort = params.get("sort", "path") or "path"
        if sort not in SORTS:
            raise QueryError(f"unknown sort {sort[:40]!r}", hint=f"sort by one of: {', '.join(SORTS)}")
        order = params.get("order", "asc") or "asc"
        if order not in ("asc", "desc"):
            raise QueryError(f"unknown order {order[:40]!r}", hint="order is asc or desc")
        statuses = _list(params.get("status", ""))
        unknown = [s for s in statuses if s not in STATUSES]
        if unknown:
            raise QueryError(f"unknown status {unknown[0][:40]!r}", hint=f"statuses: {', '.join(STATUSES)}")
        return cls(
            q=q, folder=params.get("folder", "").strip().strip("/"), category=params.get("category", "").strip(),
            statuses=statuses, kinds=_list(params.get("kind", "")), sort=sort, descending=order == "desc",
            offset=_number(params, "offset", 0, 0, None), limit=_number(params, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT),
        )  # fmt: skip


def _list(raw: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))


def _number(params: Mapping[str, str], name: str, default: int, low: int, high: int | None) -> int:
    raw = params.get(name, "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9:
        raise QueryError(f"{name} must be a whole number", hint=f"for example {name}={default}")
    value = int(raw)
    if value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise QueryError(f"{name} must be {span}")
    return value


def category_name(text: str | None) -> str | None:
    """A category as stored: trimmed, at most :data:`MAX_CATEGORY_CHARS` characters, no
    control characters; None for none. The one rule for uploads and for filing a document
    later (raises :class:`QueryError`)."""
    name = (text or "").strip()
    if not name:
        return None
    if len(name) > MAX_CATEGORY_CHARS:
        raise QueryError(f"a category name has at most {MAX_CATEGORY_CHARS} characters")
    if any(ch < " " or ch == "\x7f" for ch in name):
        raise QueryError("a category name cannot hold control characters")
    return name


def skipped_on_purpose(reason: str) -> bool:
    """Whether a skip reason is a choice (a limit, a missing extra, a link not followed)
    rather than a file that could not be read."""
    return reason.startswith(_SKIPPED_ON_PURPOSE)


def classify(row: ListingRow, ocr_blocker: Callable[[], str]) -> tuple[str, str | None]:
    """The true status of an index row and the reason a person can act on (None when there is
    nothing to say). ``ocr_blocker`` is asked only for a file with pages waiting for OCR."""
    if row.status == "skipped":
        reason = row.error or "not indexed"
        return ("skipped" if skipped_on_purpose(reason) else "failed"), reason
    if row.ocr_pending:
        pages = "1 page waits" if row.ocr_pending == 1 else f"{row.ocr_pending:,} pages wait"
        return "ocr_pending", f"{pages} for OCR: {ocr_blocker()}"
    if row.ocr_over_limit:
        pages = "1 page" if row.ocr_over_limit == 1 else f"{row.ocr_over_limit:,} pages"
        return "indexed", (f"{pages} past the OCR limit ({row.ocr_limit:,} pages a document) not read; "
                           "raise ocr_max_pages_per_document to read them")  # fmt: skip
    if _textless(row.kind, row.chunks):
        return "indexed", NO_TEXT
    return "indexed", None


def _textless(kind: str, chunks: int) -> bool:
    """A document with nothing to search in it; a note or a picture may well hold no text."""
    return chunks == 0 and kind not in ("note", "image")


def build_entries(
    rows: Iterable[ListingRow],
    *,
    categories: Mapping[str, str],
    deletable: Callable[[str], bool],
    ocr_blocker: Callable[[], str],
    shown: Callable[[str], str] = str,
) -> list[Entry]:
    """The index's files as the knowledge base shows them, sorted by path, each path as
    ``shown`` shows it (a credential in a name becomes its marker). A file whose bytes equal
    another's names the one indexed first (then the first by path) in ``duplicate_of``."""
    rows = sorted(rows)
    first: dict[str, tuple[str, str]] = {}  # content hash → (indexed_at, path) of its first file
    for path, _k, status, _s, _c, _t, _e, indexed_at, *_o, digest in rows:
        if digest and status == "indexed":
            held = first.get(digest)
            if held is None or (indexed_at or "") < held[0]:
                first[digest] = (indexed_at or "", path)
    entries: list[Entry] = []
    append = entries.append
    for row in rows:  # unpacked, not read by name: this loop runs once per file of the vault
        path, kind, status, size, chunks, title, _error, indexed_at, ocr_pending, over_limit, _limit, digest = row
        if status == "indexed" and not ocr_pending and not over_limit and not _textless(kind, chunks):
            status, reason = "indexed", None
        else:
            status, reason = classify(row, ocr_blocker)
        duplicate = first[digest][1] if digest and row.status == "indexed" else None
        append(Entry(shown(path), title, kind, size, chunks, status, reason, categories.get(path), indexed_at,
                     deletable(path), None if duplicate is None or duplicate == path else shown(duplicate)))  # fmt: skip
    return entries


def _job_status(job: Mapping[str, Any]) -> tuple[str, str | None]:
    if job["status"] == "failed":
        return "failed", job.get("error") or "indexing failed"
    if job["status"] == "deleting":
        return "deleting", None
    steps = job.get("steps") or []
    last = steps[-1] if steps else {}
    label = " ".join(part for part in (last.get("step", ""), last.get("detail", "")) if part)
    return "indexing", label or job["status"]


def _haystack(entry: Entry) -> str:
    return f"{entry.path}\n{entry.title or ''}".casefold()


class Listing:
    """The files of the knowledge base, sorted by path, with what searching and sorting them
    needs, made once per change of the index or of the categories and kept: each page asked
    of it then costs one pass over the rows at most, and none when nothing is filtered."""

    def __init__(self, entries: list[Entry], haystacks: list[str] | None = None) -> None:
        self.entries = entries
        self.haystacks = haystacks if haystacks is not None else [_haystack(e) for e in entries]
        self.positions = {entry.path: i for i, entry in enumerate(entries)}
        self.orders: dict[tuple[str, bool], list[int]] = {}
        self.shape: dict[str, Any] | None = None

    def with_jobs(self, jobs: Mapping[str, Mapping[str, Any]], category_of: Callable[[str], str | None],
                  deletable: Callable[[str], bool]) -> Listing:  # fmt: skip
        """This listing with the ingestion jobs in flight laid over it (``jobs``: path → the
        job's state): a file being indexed or deleted says so, and an upload the index does
        not hold yet is listed (queued, indexing, or failed and why). Itself when no job is."""
        entries, haystacks = self.entries, self.haystacks
        copied = False
        for path, job in jobs.items():
            at = self.positions.get(path)
            live = job["status"] in ("queued", "indexing", "deleting")
            if at is None and not (live or job["status"] == "failed"):
                continue
            if at is not None and not live:
                continue
            if not copied:
                entries, haystacks, copied = list(entries), list(haystacks), True
            status, reason = _job_status(job)
            if at is not None:
                entries[at] = entries[at]._replace(status=status, reason=reason)
            else:
                entry = Entry(path, None, None, None, 0, status, reason, category_of(path), None, deletable(path))
                entries.append(entry)
                haystacks.append(_haystack(entry))
        if not copied:
            return self
        order = sorted(range(len(entries)), key=lambda i: entries[i].path)
        return Listing([entries[i] for i in order], [haystacks[i] for i in order])

    def refiled(self, path: str, category: str | None) -> Listing | None:
        """This listing with ``path`` filed under ``category``, its orders kept (a category
        sorts nothing); None when the path is not in it."""
        at = self.positions.get(path)
        if at is None:
            return None
        entries = list(self.entries)
        entries[at] = entries[at]._replace(category=category)
        changed = Listing(entries, self.haystacks)
        changed.orders = self.orders
        return changed

    def order(self, sort: str, descending: bool) -> list[int]:
        """Positions sorted by ``sort`` (ties by path, ascending; rows without the value last
        either way), made once per listing and order."""
        key = (sort, descending)
        if key not in self.orders:
            self.orders[key] = self._sorted(sort, descending)
        return self.orders[key]

    def _sorted(self, sort: str, descending: bool) -> list[int]:
        entries = self.entries
        positions = list(range(len(entries)))
        if sort == "path":
            positions.sort(key=lambda i: (entries[i].path.casefold(), entries[i].path), reverse=descending)
            return positions
        value: Callable[[Entry], Any] = {
            "title": lambda e: e.title.casefold() if e.title else None,
            "kind": lambda e: e.kind,
            "size": lambda e: e.size,
            "chunks": lambda e: e.chunks,
            "status": lambda e: STATUSES.index(e.status),
            "indexed_at": lambda e: e.indexed_at,
        }[sort]
        values = [value(e) for e in entries]
        valued = [i for i in positions if values[i] is not None]  # in path order already
        valued.sort(key=values.__getitem__, reverse=descending)  # stable: ties keep path order
        return valued + [i for i in positions if values[i] is None]

    def select(self, query: DocumentQuery) -> tuple[int, list[Entry]]:
        """(how many files match, the page of them ``query`` asks for). Each filter is one
        pass over the positions still in the running, in the order asked for."""
        entries, chosen = self.entries, self.order(query.sort, query.descending)
        if query.folder:
            prefix = query.folder + "/"
            chosen = [i for i in chosen if entries[i].path.startswith(prefix)]
        if query.category:
            chosen = [i for i in chosen if entries[i].category == query.category]
        if query.statuses:
            chosen = [i for i in chosen if entries[i].status in query.statuses]
        if query.kinds:
            chosen = [i for i in chosen if (entries[i].kind or "") in query.kinds]
        haystacks = self.haystacks
        for term in query.q.casefold().split():
            chosen = [i for i in chosen if term in haystacks[i]]
        end = None if query.limit is None else query.offset + query.limit
        return len(chosen), [entries[i] for i in chosen[query.offset : end]]

    def tree(self) -> dict[str, Any]:
        """The list's shape for the side panel: every folder with how many files lie under it
        (at any depth), the categories with their counts, and the counts by status and kind
        (made once per listing)."""
        if self.shape is None:
            self.shape = self._tree()
        return self.shape

    def _tree(self) -> dict[str, Any]:
        folders: dict[str, int] = {}
        categories: dict[str, int] = {}
        statuses: dict[str, int] = {}
        kinds: dict[str, int] = {}
        for entry in self.entries:
            cut = entry.path.rfind("/")
            while cut > 0:
                folder = entry.path[:cut]
                folders[folder] = folders.get(folder, 0) + 1
                cut = folder.rfind("/")
            if entry.category:
                categories[entry.category] = categories.get(entry.category, 0) + 1
            statuses[entry.status] = statuses.get(entry.status, 0) + 1
            kind = entry.kind or "unknown"
            kinds[kind] = kinds.get(kind, 0) + 1
        return {
            "total": len(self.entries),
            "folders": [{"path": path, "files": n} for path, n in sorted(folders.items())],
            "categories": [{"name": name, "documents": n} for name, n in sorted(categories.items())],
            "statuses": {s: statuses[s] for s in STATUSES if s in statuses},
            "kinds": dict(sorted(kinds.items())),
        }
