"""The search pipeline: query → ranked lists (BM25, vector) → fusion → results.

Both lists are computed on demand and fused (:mod:`fusion`); the result keeps each
chunk's rank in each list. The fused chunks are answered as notes (:mod:`grouping`: each file
once, with its best sections) or, in the chunk view, as they rank. When the vector side is
unavailable (no model, a model that does not match the index, no vectors) hybrid search
degrades to BM25 and says so in a notice.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..errors import ModelError, QueryError, VaultseekError
from ..index.names import shown_path
from ..records import Expansion, SearchFilter, SearchMode, SearchResponse, SearchResult, SearchView
from ..storage.store import ChunkRow, Store
from ..storage.vectors import Scan, VectorIndex
from ..text.lexical import LexicalQuery, make_snippet, parse_query
from .budget import fit_budget, fit_notes
from .deeplist import DeepList, lacking, named_chunks, opening_scores
from .expansion import merge_expansion
from .filter_hints import filter_misses
from .fusion import ANCHORS, DEFAULT_WEIGHTS, Fused, convex, convex_head, rrf
from .grouping import PAGE, PathCache, assemble_notes, group_notes, notes_depth, share_for
from .intent import LEANS, detect_intent
from .linkgraph import LinkGraph, boost, contenders
from .pointers import follow_pointers
from .relevance import MATCH, MATCH_DEPTH, MIN_LEGIBLE, NO_MATCH, QueryWords, judge_results
from .rerank import DEFAULT_DEPTH, DEFAULT_WEIGHT, RerankerLike, rerank, skipped
from .restriction import Restriction, restrict
from .signals import apply_signals
from .syntax import parse_syntax, plain_query
from .termmatch import RERANK_DEPTH, blend, idf, match_scores
from .vocabulary import prefix_completions, refine_query, vault_languages

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor


class VectorsUnavailable(Exception):
    """The vector side cannot answer; the message says why (shown as a notice)."""


DEEP_VECTORS_HINT = (
    "run `vaultseek deep` to give every chunk its deep vector now (`vaultseek status` shows how "
    "many have one), or search in hybrid mode, which uses the deep vectors there are"
)
NO_DEEP_VECTORS = "no deep vectors yet"  # what engine.Index._deep_side raises before the first vector
DEEP_TIER_OFF_HINT = "turn it on (deep_tier = true, or VAULTSEEK_DEEP_TIER=true), then run `vaultseek deep`"


@dataclass(frozen=True, slots=True)
class SearchParams:
    mode: SearchMode = "hybrid"
    k: int = 10
    """How many results: notes in the note view, chunks in the chunk view."""
    view: SearchView = "notes"
    """``notes``: the fused chunks grouped into notes (``grouping.py``); ``chunks``: as ranked."""
    candidates: int = 100
    fusion: str = "convex"
    rrf_k: int = 60
    bm25_weight: float | None = None
    """None: the fusion method's own default (fusion.DEFAULT_WEIGHTS)."""
    vector_weight: float | None = None
    deep_weight: float | None = None
    """The deep list's weight (None: the fusion method's own default)."""
    max_tokens: int | None = None
    scope: SearchFilter | None = None
    """Only chunks of files inside it are ranked (None: the whole index)."""
    title_match: bool = False
    """A note whose title, alias or file name is the query goes first (``signals.py``)."""
    recency_half_life_days: float | None = None
    """Decay scores by the age of their file with this half-life (None or 0: off)."""
    recency_weight: float = 0.5
    """The share of a score recency can take away (``signals.recency_factor``)."""
    intent: bool = False
    """Shift the list weights for identifier-like queries and long questions (``intent.py``)."""
    now: float | None = None
    """The clock recency reads (epoch seconds); None: the current time."""
    link_boost: float = 0.0
    """Post-fusion link signal weight (0: off); see :mod:`linkgraph`."""
    link_signal: str = "backlinks"
    judge: bool = True
    """Judge each result's relevance (:mod:`relevance`) and say when nothing matches."""
    term_match: float = 0.0
    """Hybrid convex search: the term match's share of the head's lexical score (0: off;
    ``termmatch.DEFAULT_WEIGHT`` is the measured best); see :mod:`termmatch`."""
    syntax: bool = True
    """Read the query's operators (``"phrase"``, ``-word``, ``tag:x``, …; :mod:`syntax`);
    off, every word is text."""
    rerank_depth: int = DEFAULT_DEPTH
    """How many of the fused list's best sections a reranker re-scores (:mod:`rerank`)."""
    rerank_weight: float = DEFAULT_WEIGHT
    """The reranker's share of a re-scored section's score."""


ANY_TERM_POSTINGS = 8_000
"""The any-term fallback may rank at most about this many chunks: the commonest words of a
long question are left out of it until their postings fit. Ranking every chunk that holds
"example" or "file" costs 10–20 ms at 50k chunks and adds little, since BM25's IDF discounts
such words anyway. (Budgeted in postings, not as a share: the cost is absolute.)"""


Scored = list[tuple[int, float]]
"""(chunk id, score) best first; higher scores are better."""
ScanResult = tuple[np.ndarray | None, Scan | None, Scored]
"""A query's vector (None: all zero), its scan (None: nothing to scan, or vectors searched where
they live) and, when no scope needs SQL, its best hits."""


def lexical_hits(
    store: Store, query: LexicalQuery, limit: int, scope: SearchFilter | None = None,
    restriction: Restriction | None = None,
) -> Scored:  # fmt: skip
    """BM25 hits: all terms first (precise), topped up from any-term matches when that
    finds fewer than ``limit`` (a long question rarely has every word in one chunk). Top-up
    scores are capped at the last all-terms score, so the list stays in score order. The
    query's required phrases hold in both; the ``restriction``'s excluded notes are left out."""
    return lexical_list(store, query, limit, scope, restriction)[0]


def lexical_list(
    store: Store, query: LexicalQuery, limit: int, scope: SearchFilter | None = None,
    restriction: Restriction | None = None,
) -> tuple[Scored, int]:  # fmt: skip
    """:func:`lexical_hits`, and how many of them hold every word of the query (they come
    first)."""
    if query.empty:
        return [], 0
    excluding = restriction.excluding if restriction is not None else None
    hits = store.bm25(query.match_all(), limit, scope, excluding=excluding)
    held = len(hits)
    if len(hits) >= limit or len(query.phrases) < 2:
        return hits, held
    phrases = affordable_phrases(store, query.phrases)
    if not phrases:  # no word of the query occurs anywhere
        return hits, held
    seen = {i for i, _s in hits}
    ceiling = hits[-1][1] if hits else float("inf")
    for item, score in store.bm25(replace(query, phrases=phrases).match_any(), limit, scope, excluding=excluding):
        if len(hits) >= limit:
            break
        if item not in seen:
            ceiling = min(score, ceiling)
            hits.append((item, ceiling))
    return hits, held


SCOPE_PROBE = 1_000
"""A scoped vector search first takes this many of the whole index's best rows (at least ten
times the pool) and keeps those whose files are inside the scope: one indexed lookup per
distinct file, whatever the scope's size. Only when fewer than the pool are inside (a narrow
scope) does it list the scope's files and mask every row by them; listing all 17k files of
the benchmark vault costs ~2 ms, more than the probe, while a narrow scope's list is short."""


def vector_hits(
    store: Store, index: VectorIndex, query: np.ndarray, limit: int, scope: SearchFilter | None
) -> Scored:
    """The ``limit`` chunks most similar to ``query`` inside ``scope`` — the exact masked
    ranking either way, since an in-scope row outside the probe scores below all of it."""
    if not np.any(query) or not len(index):
        return []
    return scan_hits(store, index, index.scan(query), limit, scope)


def scan_hits(
    store: Store, index: VectorIndex, scan: Scan, limit: int, scope: SearchFilter | None,
    restriction: Restriction | None = None,
) -> Scored:  # fmt: skip
    """:func:`vector_hits` from a query's scan; with a ``restriction``, the best of the rows
    it allows (inside ``scope``), however few."""
    if restriction is not None:
        return index.top(scan, limit, rows=restriction.rows(store, index, scope))
    if scope is None:
        return index.top(scan, limit)
    if store.backend == "sqlite":  # the scope's chunks, marked once per scope and index version
        return index.top(scan, limit, rows=np.flatnonzero(store.scope_mask(scope).inside(index.ids)))
    if index.files is None:  # once per matrix
        index.files = store.file_ids_of(index.ids)
    probe, floor = index.best_rows(scan, max(SCOPE_PROBE, limit * 10))
    if len(probe) < len(index):
        files = index.files[probe]
        inside = store.files_inside(np.unique(files).tolist(), scope)
        kept = probe[np.isin(files, np.fromiter(inside, dtype=np.int64, count=len(inside)))]
        if len(kept) >= limit:
            hits = index.top(scan, limit, rows=kept)
            if hits[-1][1] >= floor:  # no row outside the probe can beat the last of them
                return hits
    allowed = store.file_ids_in(scope)
    if not len(allowed):
        return []
    lookup = np.zeros(max(int(allowed[-1]), int(index.files.max())) + 1, dtype=bool)
    lookup[allowed] = True
    return index.top(scan, limit, rows=np.flatnonzero(lookup[index.files]))


def affordable_phrases(store: Store, phrases: tuple[str, ...]) -> tuple[str, ...]:
    """The rarest phrases whose postings fit :data:`ANY_TERM_POSTINGS` (the rarest one that
    occurs at all is always kept), in their original order. Prefix phrases and groups of a
    word's forms (``vocabulary.refine_query``) are kept too: their reach is not known cheaply."""
    exact = [p for p in phrases if p.endswith('"')]
    frequencies = dict(zip(exact, store.document_frequencies([p.strip('"') for p in exact])))  # noqa: B905 - per query: a keyword makes zip() ~0.5 µs slower
    kept = {p for p in phrases if p not in frequencies}
    used = 0
    for phrase in sorted((p for p in exact if frequencies[p]), key=lambda p: frequencies[p]):
        if used and used + frequencies[phrase] > ANY_TERM_POSTINGS:
            break
        kept.add(phrase)
        used += frequencies[phrase]
    return tuple(p for p in phrases if p in kept)


class QueryModel(Protocol):
    """What search needs of the embedding model: a query vector, and its name (the relevance
    judgment is calibrated per model)."""

    name: str

    def embed_one(self, text: str) -> np.ndarray: ...


class StaticQueryModel(QueryModel, Protocol):
    """The fast tier's model, which also says how much of a query it can read."""

    def legible_share(self, text: str) -> float: ...


class NearestVectors(Protocol):
    """Vectors searched where they live — PostgreSQL's HNSW index — rather than in memory:
    the ``limit`` chunks nearest a unit query vector inside ``scope``, best first."""

    def __len__(self) -> int: ...

    def nearest(
        self, query: np.ndarray, limit: int, scope: SearchFilter | None, *,
        chunks: np.ndarray | None = None, excluded_chunks: np.ndarray | None = None,
    ) -> Scored: ...  # fmt: skip


VectorSide = Callable[[], tuple["VectorIndex | NearestVectors", StaticQueryModel]]
"""Returns the vectors and the model, or raises :class:`VectorsUnavailable`."""
DeepSide = tuple[VectorIndex, QueryModel, float]
"""The deep vectors, the deep model, and the share of the index's chunks the vectors cover."""
Expand = Callable[[str, tuple[str, ...]], Expansion]
"""Query expansion (``expansion.Expander``): the scrubbed query and the vault's languages →
what to search besides it; raises a :class:`VaultseekError` when the model fails."""


def run_search(
    store: Store,
    text: str,
    params: SearchParams,
    vector_side: VectorSide,
    *,
    link_graph: Callable[[], LinkGraph] | None = None,
    deep_side: Callable[[], DeepSide] | None = None,
    reranker: RerankerLike | None = None,
    expander: Expand | None = None,
) -> SearchResponse:
    """Answer one query.

    In a hybrid search the query's embeddings and the vector scans run on worker threads
    while this one runs BM25 (:func:`_start`): SQLite, the int8 scan and the deep model's
    engine all work without Python's lock, so on two cores the lists take about as long as
    the slowest. ``deep_side`` (None: the deep tier is off) gives the deep tier's list: a
    third list in a hybrid search, whose fusion weight is scaled by the share of chunks that
    have a deep vector (a half-done deep index counts half as much, an empty one not at all)
    and by the query's lexical evidence (:mod:`.deeplist`). After the signals, the note view
    groups the whole fused list into ``k`` notes (:mod:`grouping`); the chunk view takes its
    first ``k`` chunks. The parameters were checked
    where they were asked for (``contract.SearchRequest``, the configuration).

    The query's operators (:mod:`syntax`) are read first: its fields narrow ``params.scope``,
    its required phrases, exclusions and prefixes narrow what every list may rank
    (:mod:`restriction`), and the vector lists embed its free text with each prefix as its
    commonest completions in the index.

    ``expander`` (None: off) adds the lists of a chat model's sub-queries to the fused ranking
    (:mod:`expansion`); ``reranker`` (None: off) re-scores its head (:mod:`rerank`). Both see the
    query's free text after the credential scrubber; a failure of either is a notice."""
    parsed = parse_syntax(text, now=params.now) if params.syntax else plain_query(text)
    query = parsed.lexical
    pool = max(params.candidates, params.k)
    notices: list[str] = []
    sent = _scrubbed(parsed.text) if (reranker is not None or expander is not None) and parsed.text.strip() else ""
    expansion: Expansion | None = None
    if expander is not None and sent:
        try:
            expansion = expander(sent, vault_languages(store))
        except VaultseekError as exc:
            notices.append(skipped("query expansion", exc))
    bm25: Scored = []
    vec: Scored = []
    model: StaticQueryModel | None = None
    legible = 1.0
    scanning: Callable[[], ScanResult] | None = None
    deep: Scored = []
    deep_scanning: Callable[[], ScanResult] | None = None
    coverage = 0.0
    scope = params.scope if params.scope is not None and not params.scope.unrestricted else None
    if parsed.filter is not None:
        scope = parsed.filter.within(scope)
    restriction = restrict(store, parsed) if parsed.operators else None
    completions = {prefix: prefix_completions(store, prefix) for prefix in parsed.prefixes}
    wanted = parsed.embedded(completions)
    if params.mode == "hybrid" and params.deep_weight == 0:
        deep_side = None  # the hybrid without the deep tier: no deep list at all, not one that counts 0
    if params.mode in ("hybrid", "deep") and wanted.strip():
        try:
            if deep_side is None:
                raise VectorsUnavailable("the deep tier is off (deep_tier = false)")
            deep_index, deep_model, coverage = deep_side()
        except VectorsUnavailable as exc:
            if params.mode == "deep":
                hint = DEEP_TIER_OFF_HINT if deep_side is None else DEEP_VECTORS_HINT if str(exc) == NO_DEEP_VECTORS else None
                raise QueryError(f"deep search is unavailable: {exc}", hint=hint) from exc
        except ModelError as exc:  # its embedding server cannot be reached: search goes on without it
            notices.append(_deep_model_failed(exc, params.mode))
        else:  # started first: the deep model's query embedding is the slowest step
            window = deep_window(deep_model, wanted)
            deep_scanning = _start(params.mode == "hybrid", _scan, deep_index, deep_model, window, pool, scope, restriction)
    if params.mode in ("hybrid", "vector") and wanted.strip():
        try:
            index, model = vector_side()
        except VectorsUnavailable as exc:
            if params.mode == "vector":
                raise QueryError(f"vector search is unavailable: {exc}") from exc
            notices.append(f"vector search unavailable ({exc}); showing BM25 results only")
        else:
            # In the background only when BM25 runs meanwhile: alone, the hop costs ~0.4 ms.
            scanning = _start(params.mode == "hybrid", _scan, index, model, wanted, pool, scope, restriction)
            legible = model.legible_share(wanted) if params.mode == "hybrid" else 1.0
    corrected: tuple[str, ...] = ()
    held = 0
    if params.mode in ("hybrid", "bm25"):
        query, corrected = refine_query(store, query)
        notices.extend(corrected)
        bm25, held = lexical_list(store, query, pool, scope, restriction)
    narrowed = scope is not None or restriction is not None
    static_query: np.ndarray | None = None
    deep_query: np.ndarray | None = None
    if scanning is not None:
        static_query, scan, vec = scanning()
        if scan is not None and narrowed and isinstance(index, VectorIndex):  # the scope's rows: SQL
            vec = scan_hits(store, index, scan, pool, scope, restriction)
    if deep_scanning is not None:
        try:
            deep_query, deep_scan, deep = deep_scanning()
        except ModelError as exc:  # its embedding server failed just now: search goes on without it
            notices.append(_deep_model_failed(exc, params.mode))
            deep_scanning, deep_scan, deep = None, None, []
        if deep_scan is not None and narrowed:
            deep = scan_hits(store, deep_index, deep_scan, pool, scope, restriction)
    free = parsed.text  # intent and the title match read the words, not the operators
    intent = detect_intent(free) if params.intent else None
    lean = LEANS.get(intent or "")
    rows: dict[int, ChunkRow] = {}
    if params.term_match > 0 and params.mode == "hybrid" and params.fusion != "convex":
        notices.append(f"term matching re-scores convex fusion only; not applied with {params.fusion}")
    lists = {"bm25": bm25, "vector": vec, "deep": deep}
    deep_state = None
    if deep_scanning is not None:
        named = named_chunks(store, bm25, held)
        unscored = lacking(deep_index, (bm25, vec))
        stand_ins = opening_scores(store, deep_index, deep_query, unscored)
        listed = frozenset(item for item, _s in deep) if named else frozenset()
        deep_state = DeepList(coverage, unscored - stand_ins.keys(), ANCHORS.get(deep_model.name), stand_ins, named, listed)
    words = QueryWords(store, _judged_query(store, query, completions), len(index) if model is not None else None)
    if model is not None and bm25 and vec and params.term_match > 0 and params.mode == "hybrid" and params.fusion == "convex":
        fused, rows = fuse_with_terms(store, lists, words, params, lean, legible, deep_state)
    else:
        fused = fuse(lists, params, lean=lean, legible=legible, deep=deep_state)
    paths_of = PathCache(store.chunk_paths)  # the pointer step, the link boost and the note view share it
    share = share_for(params.mode, params.fusion)  # what a note's further sections add to its rank
    if params.link_boost and link_graph is not None and fused:
        # Only the head that can still reach the top k is re-scored — unless recency follows:
        # it can lower the head's scores, so everything stays a contender. In the note view the
        # head holds the notes the grouping looks at (a file's chunks are boosted alike).
        depth = notes_depth(fused, max(params.k, PAGE), paths_of, share) if params.view == "notes" else params.k
        head = fused if params.recency_half_life_days else contenders(fused, depth, params.link_boost)
        fused = boost(head, paths_of([f.item for f in head]), link_graph(), params.link_boost, params.link_signal)
    if expansion is not None:
        sides = _SubQuerySides(
            store, pool, scope, restriction, params.mode,
            (index, model) if model is not None else None,
            (deep_index, deep_model) if deep_scanning is not None else None,
        )  # fmt: skip
        fused = merge_expansion(fused, sides.lists(expansion))
    reranking = None
    if reranker is not None and sent and fused:
        fused, reranking, problem = rerank(store, fused, sent, reranker, depth=params.rerank_depth, weight=params.rerank_weight)
        notices += [problem] if problem else []
    fused, rows = follow_pointers(store, fused, rows, paths_of, share)  # a section that only points at a candidate goes after it
    # Title match last: a note the query names goes first whatever the other signals did.
    if params.title_match or params.recency_half_life_days:
        fused = apply_signals(
            store, fused, free, scope=scope, title_match=params.title_match,
            half_life_days=params.recency_half_life_days, recency_weight=params.recency_weight,
            now=time.time() if params.now is None else params.now,
        )  # fmt: skip
        if restriction is not None and params.title_match:  # a named note obeys the operators too
            allowed = restriction.admitted([f.item for f in fused])
            fused = [f for f in fused if f.item in allowed]
    if scope is not None:
        notices.extend(filter_misses(store, scope))
    judge: Callable[[list[SearchResult]], list[SearchResult]] = lambda found: found  # noqa: E731 - no judgment
    no_match = False
    if params.judge:
        if corrected and static_query is not None and model is not None:
            # A misspelt word is noise to the static model: the results are judged by what was
            # searched for (a static query vector costs microseconds).
            static_query = model.embed_one(" ".join(query.terms))
        static_side = (index, static_query, model.name) if static_query is not None and model is not None and legible >= MIN_LEGIBLE else None
        deep_side_ = (deep_index, deep_query, deep_model.name) if deep_query is not None else None

        def judge(found: list[SearchResult]) -> list[SearchResult]:
            nonlocal no_match
            if not found:
                return found
            judged, match = judge_results(found, words, static_side, deep_side_)
            head = fused[:MATCH_DEPTH]  # the verdict reads what its judge was fitted on
            if [f.item for f in head] != [r.chunk_id for r in found]:
                shown = {r.chunk_id: r for r in found}
                missing = {r.chunk_id: r for r in _materialise(store, [f for f in head if f.item not in shown], query, rows)}
                read = [shown.get(f.item) or missing.get(f.item) for f in head]
                _, match = judge_results([r for r in read if r is not None], words, static_side, deep_side_)
            no_match = match < MATCH
            return judged

    shown = parsed.shown(completions)
    if params.view == "notes":
        groups = group_notes(fused, params.k, paths_of, share)
        sections = judge(_materialise(store, [f for group in groups for f in group.chunks], query, rows))
        notes = assemble_notes(groups, sections, store.titles([group.path for group in groups]))
        if params.max_tokens is not None:
            notes = fit_notes(notes, params.max_tokens)
        best = tuple(note.best for note in notes)
        notices += [NO_MATCH] if no_match else []
        notices += restriction.empty_notices() if restriction is not None and not notes else []
        return SearchResponse(
            text, params.mode, best, tuple(notices), intent=intent, view="notes", notes=tuple(notes), no_match=no_match,
            parsed=shown, reranking=reranking, expansion=expansion,
        )  # fmt: skip
    results = judge(_materialise(store, fused[: params.k], query, rows))
    notices += [NO_MATCH] if no_match else []
    notices += restriction.empty_notices() if restriction is not None and not results else []
    if params.max_tokens is not None:
        results = fit_budget(results, params.max_tokens)
    return SearchResponse(
        text, params.mode, tuple(results), tuple(notices), intent=intent, view="chunks", no_match=no_match, parsed=shown,
        reranking=reranking, expansion=expansion,
    )  # fmt: skip


def _judged_query(store: Store, query: LexicalQuery, completions: Mapping[str, list[str]]) -> LexicalQuery:
    """``query`` as the relevance judgment reads its words: a prefix that is no word of the
    index (``kündig*``) as its commonest completion (*kündigungsfrist*, the first word the
    vector lists embed for it). Read as typed, it is a word no chunk holds — a made-up word —
    and every result of the prefix was judged no match, the note that holds the word too."""
    stems = {parse_query(prefix).terms[-1]: found[0] for prefix, found in completions.items() if found and parse_query(prefix).terms}
    unheld = {stem: word for (stem, word), chunks in zip(stems.items(), store.word_frequencies(list(stems)), strict=True) if not chunks}
    if not unheld:
        return query
    return replace(query, terms=tuple(dict.fromkeys(unheld.get(term, term) for term in query.terms)))


def _deep_model_failed(exc: ModelError, mode: SearchMode) -> str:
    """The notice for a deep model (its embedding server) that failed: a deep-mode search has
    no other list, so there it is the search's error."""
    if mode == "deep":
        raise QueryError(f"deep search is unavailable: {exc}", hint=exc.hint) from exc
    return f"deep list unavailable ({exc})"


def _scrubbed(text: str) -> str:
    """The query as a model server may see it: through the credential scrubber (imported
    here: a search that sends nothing never loads it)."""
    from ..index.credentials import scrub

    return scrub(text).text


@dataclass(frozen=True, slots=True)
class _SubQuerySides:
    """Where an expansion's sub-queries are searched: BM25 for the keyword ones (in the modes
    that have a lexical list), the fast and the deep vectors for the rephrasings and the
    passage (where the search had them), within the query's scope and operators."""

    store: Store
    pool: int
    scope: SearchFilter | None
    restriction: Restriction | None
    mode: SearchMode
    static: tuple[VectorIndex | NearestVectors, QueryModel] | None
    deep: tuple[VectorIndex, QueryModel] | None

    def lists(self, expansion: Expansion) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        if self.mode in ("hybrid", "bm25"):
            for n, words in enumerate(expansion.lexical, start=1):
                lexical, _corrected = refine_query(self.store, parse_query(words))
                out[f"lexical:{n}"] = [i for i, _s in lexical_hits(self.store, lexical, self.pool, self.scope, self.restriction)]
        meanings = [*expansion.semantic, *([expansion.passage] if expansion.passage else [])]
        for name, side in (("vector", self.static), ("deep", self.deep)):
            if side is None:
                continue
            vectors, model = side
            for n, meaning in enumerate(meanings, start=1):
                _query, scan, hits = _scan(vectors, model, meaning, self.pool, self.scope, self.restriction)
                if scan is not None and (self.scope is not None or self.restriction is not None) and isinstance(vectors, VectorIndex):
                    hits = scan_hits(self.store, vectors, scan, self.pool, self.scope, self.restriction)
                out[f"{name}:{n}"] = [i for i, _s in hits]
        return out


DEEP_QUERY_CHARS = 4_096
"""What a deep model without its own :meth:`~vaultseek.embeddings.deep.DeepModel.query_window`
is sent of a query."""


def deep_window(model: QueryModel, text: str) -> str:
    """What the deep list embeds of a query: the part its model reads in one window (a model
    reading more would average windows, ~1 s of CPU each for the bundled one). The static list
    takes the query whole: its model cuts it at its own 512 tokens, in about a millisecond."""
    window = getattr(model, "query_window", None)
    return str(window(text)) if callable(window) else text[:DEEP_QUERY_CHARS]


def _scan(
    index: VectorIndex | NearestVectors, model: QueryModel, text: str, pool: int, scope: SearchFilter | None,
    restriction: Restriction | None = None,
) -> ScanResult:  # fmt: skip
    """The query's embedding and scan (None for an all-zero query or an empty index), and,
    when there is no scope or restriction (so no SQL is needed), its ``pool`` best chunks.
    Vectors searched where they live take the scope and the restriction along and need no
    scan."""
    query = model.embed_one(text)
    if not np.any(query) or not len(index):
        return None, None, []
    if not isinstance(index, VectorIndex):
        if restriction is None:
            return query, None, index.nearest(query, pool, scope)
        return query, None, index.nearest(query, pool, scope, chunks=restriction.chunks, excluded_chunks=restriction.excluded_chunks)
    scan = index.scan(query)
    return query, scan, (index.top(scan, pool) if scope is None and restriction is None else [])


@functools.cache
def _cores() -> int:
    """The cores this process may use (asked once: the answer costs ~70 µs here)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


_workers: ThreadPoolExecutor | None = None
_workers_lock = threading.Lock()
_started = 0
"""Background scans this process has started: the first ``_OWN_THREADS`` (one search's static
and deep lists) each have a thread of their own, later ones the pool's."""
_OWN_THREADS = 2


def _start(background: bool, fn: Callable[..., ScanResult], *args: object) -> Callable[[], ScanResult]:
    """Start ``fn(*args)`` on the vector workers — a few threads shared by every search of
    the process — and return what waits for its result; run it right here instead when not
    ``background`` or on a single core, where there is nothing to overlap with. A process's
    first search starts plain threads instead: the pool's module (``concurrent.futures``, which
    loads ``logging``) costs a fresh ``vaultseek search`` ~8 ms, more than it saves."""
    global _workers, _started
    cores = _cores()
    if not background or cores < 2:
        result = fn(*args)
        return lambda: result
    with _workers_lock:
        first, _started = _started < _OWN_THREADS, _started + 1
        if not first and _workers is None:
            from concurrent.futures import ThreadPoolExecutor

            _workers = ThreadPoolExecutor(max_workers=min(4, cores), thread_name_prefix="vaultseek-vectors")
    if first:
        return _in_thread(fn, *args)
    assert _workers is not None
    return _workers.submit(fn, *args).result


def _in_thread(fn: Callable[..., ScanResult], *args: object) -> Callable[[], ScanResult]:
    """``fn(*args)`` on a thread of its own; what waits for its result (or raises its error)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, fn(*args)))
        except BaseException as exc:  # noqa: BLE001 - raised again in the waiting thread
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name="vaultseek-vectors", daemon=True)
    thread.start()

    def wait() -> ScanResult:
        thread.join()
        done, value = outcome[0]
        if not done:
            raise value
        return value

    return wait


def fuse(
    lists: dict[str, Scored],
    params: SearchParams,
    *,
    lean: Mapping[str, float] | None = None,
    legible: float = 1.0,
    deep: DeepList | None = None,
) -> list[Fused]:
    """Combine the lists with the configured method. A single-mode search is a one-list
    fusion, so every mode's results carry the same score and rank data. ``lean`` multiplies
    the list weights (query intent), ``legible`` the vector list's (:func:`list_weights`).

    Convex fusion gives the deep list its share for this search (:class:`~.deeplist.DeepList`:
    its coverage times what the lexical evidence leaves it), ranks a chunk that has no deep
    vector yet by its note's opening or, without one, on its other lists alone, and holds a
    weak deep list below its full weight (``fusion.convex``'s ``stand_ins``, ``unscored`` and
    ``anchors``; :mod:`.deeplist`). RRF, which has no scores to do that with, scales the deep
    list's weight by its coverage alone."""
    weights = list_weights(params, lean, legible)
    if params.fusion == "convex":
        if deep is not None and params.mode == "hybrid":  # alone, the deep list keeps its scores
            weights["deep"] *= deep.share
        return convex(lists, weights=weights, **_deep_terms(deep, lists))
    if deep is not None:
        weights["deep"] *= deep.coverage
    return rrf({name: [i for i, _s in hits] for name, hits in lists.items()}, k=params.rrf_k, weights=weights)


def fuse_with_terms(
    store: Store,
    lists: dict[str, Scored],
    words: QueryWords,
    params: SearchParams,
    lean: Mapping[str, float] | None,
    legible: float = 1.0,
    deep: DeepList | None = None,
) -> tuple[list[Fused], dict[int, ChunkRow]]:
    """Convex fusion with the head's lexical scores re-scored by term matching
    (:mod:`termmatch`): the plain fusion's :data:`~termmatch.RERANK_DEPTH` best chunks are
    matched against the query's words, and the lists fused once with those scores blended
    in. Results keep their ranks in the original BM25 and vector lists: the ranks explain
    the lists, the score includes the match. Returns the head's rows too: the results are
    mostly among them, so they are not read twice."""
    weights = list_weights(params, lean, legible)
    if deep is not None:
        weights["deep"] *= deep.share
    terms = _deep_terms(deep, lists)
    if not words.words:
        return convex(lists, weights=weights, **terms), {}
    rows = store.chunks_by_id(convex_head(lists, RERANK_DEPTH, weights=weights, **terms))
    frequencies = [idf(df, words.chunks) for df in words.frequencies]
    texts = [f"{r.heading_context}\n{r.text}" for r in rows.values()]
    matches = dict(zip(rows, match_scores(words.words, frequencies, texts).tolist(), strict=True))
    blended = blend(lists["bm25"], matches, params.term_match)
    terms["overrides"] = {**terms.get("overrides", {}), "bm25": blended}
    return convex(lists, weights=weights, **terms), rows


def _deep_terms(deep: DeepList | None, lists: Mapping[str, Scored]) -> dict[str, Any]:
    """:func:`fusion.convex`'s ``anchors``, ``unscored`` and ``stand_ins`` for the deep list, and
    its ``overrides`` when the query's words name one note's chunks (:meth:`DeepList.lifted`)."""
    if deep is None:
        return {}
    terms: dict[str, Any] = {
        "anchors": None if deep.anchor is None else {"deep": deep.anchor},
        "unscored": {"deep": deep.unscored},
        "stand_ins": {"deep": deep.stand_ins},
    }
    lifted = deep.lifted(lists.get("deep", []))
    if lifted is not None:  # a lifted chunk is scored: no longer a gap or a stand-in
        terms["overrides"] = {"deep": lifted}
        terms["unscored"] = {"deep": deep.unscored - deep.named}
        terms["stand_ins"] = {"deep": {item: s for item, s in deep.stand_ins.items() if item not in deep.named}}
    return terms


def list_weights(params: SearchParams, lean: Mapping[str, float] | None = None, legible: float = 1.0) -> dict[str, float]:
    """The fusion's list weights: the method's defaults, then the configured ones, times the
    intent's lean (the deep list leans as the vector list does: both are meaning); the vector
    list's times ``legible``, the share of the query the fast tier's model can read (a Korean
    question has next to none with the bundled English model: its vector is noise)."""
    weights = dict(DEFAULT_WEIGHTS[params.fusion])
    if params.bm25_weight is not None:
        weights["bm25"] = params.bm25_weight
    if params.vector_weight is not None:
        weights["vector"] = params.vector_weight
    if params.deep_weight is not None:
        weights["deep"] = params.deep_weight
    for name, factor in (lean or {}).items():
        weights[name] *= factor
        if name == "vector":
            weights["deep"] *= factor
    weights["vector"] *= legible
    return weights


def _materialise(
    store: Store, fused: list[Fused], query: LexicalQuery, known: Mapping[int, ChunkRow] | None = None
) -> list[SearchResult]:
    missing = [f.item for f in fused if not known or f.item not in known]
    rows = {**(known or {}), **(store.chunks_by_id(missing) if missing else {})}
    out = []
    for f in fused:
        row = rows.get(f.item)
        if row is None:  # deleted between ranking and reading; skip rather than fail
            continue
        out.append(
            SearchResult(
                path=shown_path(row.path),  # a credential in a file or folder name is never shown
                section=row.section,
                heading_context=row.heading_context,
                snippet=make_snippet(row.text, query.terms),
                score=f.score,
                bm25_rank=f.ranks.get("bm25"),
                vec_rank=f.ranks.get("vector"),
                deep_rank=f.ranks.get("deep"),
                chunk_id=row.id,
                text=row.text,
                location=row.location,
                signals=f.signals,
            )
        )
    return out
