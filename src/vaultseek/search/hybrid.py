"""The search pipeline: query → ranked lists (BM25, vector, deep) → fusion → signals → results.

The lists are computed on demand (:mod:`.candidates`, the vector scans on :mod:`.workers`'
threads) and fused (:mod:`.combine`); the result keeps each chunk's rank in each list. The
fused chunks are answered as notes (:mod:`.grouping`: each file once, with its best sections)
or, in the chunk view, as they rank. When the vector side is unavailable (no model, a model
that does not match the index, no vectors) hybrid search degrades to BM25 and says so in a
notice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import ModelError, QueryError, VaultseekError
from ..index.names import shown_path
from ..records import (
    Expansion,
    NoteResult,
    QueryParse,
    Reranking,
    SearchFilter,
    SearchMode,
    SearchResponse,
    SearchResult,
)
from ..storage.store import ChunkRow, Store
from ..storage.vectors import VectorIndex
from ..text.lexical import LexicalQuery, make_snippet, parse_query
from .budget import fit_budget, fit_notes
from .candidates import (
    NearestVectors,
    QueryModel,
    ScanResult,
    Scored,
    StaticQueryModel,
    deep_window,
    lexical_hits,
    lexical_list,
    scan_hits,
    scan_query,
)
from .combine import fuse, fuse_with_terms
from .deeplist import DeepList, lacking, named_chunks, opening_scores
from .expansion import merge_expansion
from .filter_hints import filter_misses
from .fusion import ANCHORS, Fused
from .grouping import PAGE, PathCache, assemble_notes, group_notes, notes_depth, share_for
from .intent import LEANS, detect_intent
from .linkgraph import LinkGraph, boost, contenders
from .params import SearchParams
from .pointers import follow_pointers
from .relevance import MATCH, MATCH_DEPTH, MIN_LEGIBLE, NO_MATCH, QueryWords, Side, judge_results
from .rerank import RerankerLike, rerank, skipped
from .restriction import Restriction, restrict, written_as_flags
from .signals import apply_signals
from .syntax import ParsedQuery, parse_syntax, plain_query
from .vocabulary import Refined, prefix_completions, refine_query, vault_languages
from .workers import start


class VectorsUnavailable(Exception):
    """The vector side cannot answer; the message says why (shown as a notice)."""


DEEP_VECTORS_HINT = (
    "run `vaultseek deep` to give every chunk its deep vector now (`vaultseek status` shows how "
    "many have one), or search in hybrid mode, which uses the deep vectors there are"
)
NO_DEEP_VECTORS = "no deep vectors yet"  # what sides.Sides.deep_side raises before the first vector
DEEP_TIER_OFF_HINT = "turn it on (deep_tier = true, or VAULTSEEK_DEEP_TIER=true), then run `vaultseek deep`"

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
    while this one runs BM25 (:func:`.workers.start`): SQLite, the int8 scan and the deep model's
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
    if parsed.capitalised:
        parsed = _capitalised_read(store, text, parsed, params.now)
    pool = max(params.candidates, params.k)
    notices: list[str] = []
    sent = _scrubbed(parsed.text) if (reranker is not None or expander is not None) and parsed.text.strip() else ""
    expansion: Expansion | None = None
    if expander is not None and sent:
        try:
            expansion = expander(sent, vault_languages(store))
        except VaultseekError as exc:
            notices.append(skipped("query expansion", exc))
    scope = params.scope if params.scope is not None and not params.scope.unrestricted else None
    if parsed.filter is not None:
        scope = parsed.filter.within(scope)
    restriction = restrict(store, parsed) if parsed.operators else None
    completions = {prefix: prefix_completions(store, prefix) for prefix in parsed.prefixes}
    if params.mode == "hybrid" and params.deep_weight == 0:
        deep_side = None  # the hybrid without the deep tier: no deep list at all, not one that counts 0
    found = _gather(
        store, parsed.lexical, parsed.embedded(completions), params, pool, scope, restriction, vector_side, deep_side, notices
    )  # fmt: skip
    query = found.query
    notices.extend(found.refined.notices)
    marked = (*query.terms, *found.refined.marked)  # what snippets are cut around
    free = parsed.text  # intent and the title match read the words, not the operators
    intent = detect_intent(free) if params.intent else None
    lean = LEANS.get(intent or "")
    rows: dict[int, ChunkRow] = {}
    if params.term_match > 0 and params.mode == "hybrid" and params.fusion != "convex":
        notices.append(f"term matching re-scores convex fusion only; not applied with {params.fusion}")
    lists = {"bm25": found.bm25, "vector": found.vec, "deep": found.deep}
    deep_state = _deep_state(store, found) if found.deep_vectors is not None else None
    words = QueryWords(store, _judged_query(store, query, completions), len(found.static[0]) if found.static is not None else None)
    if found.static is not None and found.bm25 and found.vec and params.term_match > 0 and params.mode == "hybrid" and params.fusion == "convex":
        fused, rows = fuse_with_terms(store, lists, words, params, lean, found.legible, deep_state)
    else:
        fused = fuse(lists, params, lean=lean, legible=found.legible, deep=deep_state)
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
        sides = _SubQuerySides(store, pool, scope, restriction, params.mode, found.static, found.deep_vectors)
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
    verdict_head = _Head(fused[:MATCH_DEPTH], lambda missing: _materialise(store, missing, marked, rows))
    judge = _Judge(words, *_judged_sides(found), verdict_head) if params.judge else None
    answer = _Answer(
        text, params, notices, intent, parsed.shown(completions), reranking, expansion, restriction, found.refined.alternatives
    )  # fmt: skip
    if params.view == "notes":
        groups = group_notes(fused, params.k, paths_of, share)
        sections = _judged(judge, _materialise(store, [f for group in groups for f in group.chunks], marked, rows))
        notes = assemble_notes(groups, sections, store.titles([group.path for group in groups]))
        if params.max_tokens is not None:
            notes = fit_notes(notes, params.max_tokens)
        return answer.notes(notes, no_match=judge is not None and judge.no_match)
    results = _judged(judge, _materialise(store, fused[: params.k], marked, rows))
    empty = not results
    if params.max_tokens is not None:
        results = fit_budget(results, params.max_tokens)
    return answer.chunks(results, no_match=judge is not None and judge.no_match, empty=empty)


@dataclass(slots=True)
class _Found:
    """One query's candidate lists, and what made them (for fusion, expansion and judgment)."""

    refined: Refined
    """The lexical query as it was searched (its typos corrected, other forms and kin added)
    and what that changed."""
    bm25: Scored = field(default_factory=list)
    held: int = 0
    """How many of :attr:`bm25` hold every word of the query (they come first)."""
    vec: Scored = field(default_factory=list)
    static: tuple[VectorIndex | NearestVectors, StaticQueryModel] | None = None
    """The fast tier's vectors and model (None: the list was not made)."""
    static_query: np.ndarray | None = None
    legible: float = 1.0
    """The share of the query the fast tier's model can read (``combine.list_weights``)."""
    deep: Scored = field(default_factory=list)
    deep_vectors: tuple[VectorIndex, QueryModel] | None = None
    """The deep tier's vectors and model (None: no deep list, or its model failed)."""
    deep_query: np.ndarray | None = None
    coverage: float = 0.0
    """The share of the index's chunks that have a deep vector."""

    @property
    def query(self) -> LexicalQuery:
        """The lexical query as it was searched."""
        return self.refined.query


def _gather(
    store: Store, query: LexicalQuery, wanted: str, params: SearchParams, pool: int, scope: SearchFilter | None,
    restriction: Restriction | None, vector_side: VectorSide, deep_side: Callable[[], DeepSide] | None,
    notices: list[str],
) -> _Found:  # fmt: skip
    """The lists the mode asks for: the vector scans started on :mod:`.workers`' threads (the
    deep one first: its query embedding is the slowest step), BM25 run here meanwhile. A list
    that cannot be made is a notice in a hybrid search (``notices``) and the search's error
    when it is the mode's only list. ``wanted`` is what the vector lists embed, each typo the
    lexical query corrected (:func:`.vocabulary.refine_query`, read first: a fraction of a
    millisecond) replaced by its correction — to an embedding model a slip is another word."""
    static: tuple[VectorIndex | NearestVectors, StaticQueryModel] | None = None
    if params.mode in ("hybrid", "vector") and wanted.strip():
        try:
            static = vector_side()
        except VectorsUnavailable as exc:
            if params.mode == "vector":
                raise QueryError(f"vector search is unavailable: {exc}") from exc
            notices.append(f"vector search unavailable ({exc}); showing BM25 results only")
    refined = Refined(query)
    if params.mode in ("hybrid", "bm25"):
        refined = refine_query(store, query, static[1] if static is not None else None)
        wanted = refined.respelled(wanted)
    deep_scanning: Callable[[], ScanResult] | None = None
    deep_vectors: tuple[VectorIndex, QueryModel] | None = None
    coverage = 0.0
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
        else:
            window = deep_window(deep_model, wanted)
            deep_scanning = start(params.mode == "hybrid", scan_query, deep_index, deep_model, window, pool, scope, restriction)
            deep_vectors = (deep_index, deep_model)
    scanning: Callable[[], ScanResult] | None = None
    legible = 1.0
    if static is not None:
        # In the background only when BM25 runs meanwhile: alone, the hop costs ~0.4 ms.
        scanning = start(params.mode == "hybrid", scan_query, *static, wanted, pool, scope, restriction)
        legible = static[1].legible_share(wanted) if params.mode == "hybrid" else 1.0
    found = _Found(refined, static=static, legible=legible, coverage=coverage)
    if params.mode in ("hybrid", "bm25"):
        found.bm25, found.held = lexical_list(store, found.query, pool, scope, restriction)
    narrowed = scope is not None or restriction is not None
    if scanning is not None and static is not None:
        found.static_query, scan, found.vec = scanning()
        if scan is not None and narrowed and isinstance(static[0], VectorIndex):  # the scope's rows: SQL
            found.vec = scan_hits(store, static[0], scan, pool, scope, restriction)
    if deep_scanning is not None and deep_vectors is not None:
        try:
            found.deep_query, deep_scan, found.deep = deep_scanning()
        except ModelError as exc:  # its embedding server failed just now: search goes on without it
            notices.append(_deep_model_failed(exc, params.mode))
        else:
            found.deep_vectors = deep_vectors
            if deep_scan is not None and narrowed:
                found.deep = scan_hits(store, deep_vectors[0], deep_scan, pool, scope, restriction)
    return found


def _deep_state(store: Store, found: _Found) -> DeepList:
    """What fusion needs to know of the deep list beyond its hits (:mod:`.deeplist`)."""
    assert found.deep_vectors is not None
    deep_index, deep_model = found.deep_vectors
    named = named_chunks(store, found.bm25, found.held, found.query.pieces)
    unscored = lacking(deep_index, (found.bm25, found.vec))
    stand_ins = opening_scores(store, deep_index, found.deep_query, unscored)
    listed = frozenset(item for item, _s in found.deep) if named else frozenset()
    paged = frozenset(store.located(list(stand_ins))) if stand_ins else frozenset()
    return DeepList(found.coverage, unscored - stand_ins.keys(), ANCHORS.get(deep_model.name), stand_ins, paged=paged, named=named, listed=listed)


def _capitalised_read(store: Store, text: str, parsed: ParsedQuery, now: float | None) -> ParsedQuery:
    """``parsed`` with each capitalised ``-Word`` the vault does not write as a flag read as an
    exclusion (``Termin -Zahnarzt``); as it was when none is left, or when excluding them
    would leave nothing to look for (a lone ``-Zahnarzt`` is searched for)."""
    flags = written_as_flags(store, parsed.capitalised)
    excluding = [word for word in parsed.capitalised if word not in flags]
    if not excluding:
        return parsed
    try:
        return parse_syntax(text, now=now, excluding=excluding)
    except QueryError:
        return parsed


def _judged_sides(found: _Found) -> tuple[Side | None, Side | None]:
    """The static and the deep side the relevance judgment reads (None: it cannot read that
    model's cosines: no vector, or a query the static model cannot read)."""
    static_query = found.static_query
    if found.static is None or static_query is None:
        static_side = None
    else:
        index, model = found.static
        static_side = (index, static_query, model.name) if found.legible >= MIN_LEGIBLE else None
    deep_side = None
    if found.deep_vectors is not None and found.deep_query is not None:
        deep_side = (found.deep_vectors[0], found.deep_query, found.deep_vectors[1].name)
    return static_side, deep_side


@dataclass(frozen=True, slots=True)
class _Head:
    """The first :data:`~.relevance.MATCH_DEPTH` sections of the fused list, which the "nothing
    matches" verdict reads whatever a search shows (its judges were fitted on them), and how to
    read the ones a search did not show."""

    fused: list[Fused]
    read: Callable[[list[Fused]], list[SearchResult]]

    def results(self, shown: list[SearchResult]) -> list[SearchResult] | None:
        """The head's results, the shown ones reused; None when the head is what was shown."""
        if [f.item for f in self.fused] == [r.chunk_id for r in shown]:
            return None
        known = {r.chunk_id: r for r in shown}
        known.update((r.chunk_id, r) for r in self.read([f for f in self.fused if f.item not in known]))
        return [known[f.item] for f in self.fused if f.item in known]


@dataclass(slots=True)
class _Judge:
    """The relevance judgment of one search's results (:mod:`.relevance`), and whether it found
    that nothing matches: a verdict read over the fused list's head (:class:`_Head`), so that it
    does not change with ``k`` or the view."""

    words: QueryWords
    static: Side | None
    deep: Side | None
    head: _Head
    no_match: bool = False

    def __call__(self, found: list[SearchResult]) -> list[SearchResult]:
        if not found:
            return found
        judged, match = judge_results(found, self.words, self.static, self.deep, verdict_over=self.head.results(found))
        self.no_match = match < MATCH
        return judged


def _judged(judge: _Judge | None, results: list[SearchResult]) -> list[SearchResult]:
    return results if judge is None else judge(results)


@dataclass(frozen=True, slots=True)
class _Answer:
    """What a search's response holds besides its results."""

    text: str
    params: SearchParams
    notices: list[str]
    intent: str | None
    parsed: QueryParse | None
    reranking: Reranking | None
    expansion: Expansion | None
    restriction: Restriction | None
    alternatives: dict[str, tuple[str, ...]]

    def _notices(self, no_match: bool, empty: bool) -> tuple[str, ...]:
        extra = [NO_MATCH] if no_match else []
        extra += self.restriction.empty_notices() if self.restriction is not None and empty else []
        return (*self.notices, *extra)

    def notes(self, notes: list[NoteResult], *, no_match: bool) -> SearchResponse:
        return SearchResponse(
            self.text, self.params.mode, tuple(note.best for note in notes), self._notices(no_match, not notes),
            intent=self.intent, view="notes", notes=tuple(notes), no_match=no_match, parsed=self.parsed,
            reranking=self.reranking, expansion=self.expansion, alternatives=self.alternatives,
        )  # fmt: skip

    def chunks(self, results: list[SearchResult], *, no_match: bool, empty: bool) -> SearchResponse:
        return SearchResponse(
            self.text, self.params.mode, tuple(results), self._notices(no_match, empty), intent=self.intent,
            view="chunks", no_match=no_match, parsed=self.parsed, reranking=self.reranking, expansion=self.expansion,
            alternatives=self.alternatives,
        )  # fmt: skip


def _judged_query(store: Store, query: LexicalQuery, completions: Mapping[str, list[str]]) -> LexicalQuery:
    """``query`` as the relevance judgment reads its words: a prefix that is no word of the
    index (``kündig*``) as its commonest completion (*kündigungsfrist*, the first word the
    vector lists embed for it). Read as typed, it is a word no chunk holds — a made-up word —
    and every result of the prefix was judged no match, the note that holds the word too."""
    stems = {terms[-1]: found[0] for prefix, found in completions.items() if found and (terms := parse_query(prefix).terms)}
    if not stems:  # no prefix, or none that completes: the words as typed
        return query
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
                lexical = refine_query(self.store, parse_query(words)).query
                out[f"lexical:{n}"] = [i for i, _s in lexical_hits(self.store, lexical, self.pool, self.scope, self.restriction)]
        meanings = [*expansion.semantic, *([expansion.passage] if expansion.passage else [])]
        for name, side in (("vector", self.static), ("deep", self.deep)):
            if side is None:
                continue
            vectors, model = side
            for n, meaning in enumerate(meanings, start=1):
                _query, scan, hits = scan_query(vectors, model, meaning, self.pool, self.scope, self.restriction)
                if scan is not None and (self.scope is not None or self.restriction is not None) and isinstance(vectors, VectorIndex):
                    hits = scan_hits(self.store, vectors, scan, self.pool, self.scope, self.restriction)
                out[f"{name}:{n}"] = [i for i, _s in hits]
        return out




def _materialise(
    store: Store, fused: list[Fused], marked: tuple[str, ...], known: Mapping[int, ChunkRow] | None = None
) -> list[SearchResult]:
    """The results of ``fused``, each with its snippet cut around the words of ``marked``."""
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
                snippet=make_snippet(row.text, marked),
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
