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
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, QueryError, VaultseekError
from ..index.names import shown_path
from ..records import Expansion, SearchFilter, SearchMode, SearchResponse, SearchResult
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
from .relevance import MATCH, MIN_LEGIBLE, NO_MATCH, QueryWords, judge_results
from .rerank import RerankerLike, rerank, skipped
from .restriction import Restriction, restrict
from .signals import apply_signals
from .syntax import parse_syntax, plain_query
from .vocabulary import prefix_completions, refine_query, vault_languages
from .workers import start


class VectorsUnavailable(Exception):
    """The vector side cannot answer; the message says why (shown as a notice)."""


DEEP_VECTORS_HINT = (
    "run `vaultseek deep` to give every chunk its deep vector now (`vaultseek status` shows how "
    "many have one), or search in hybrid mode, which uses the deep vectors there are"
)
NO_DEEP_VECTORS = "no deep vectors yet"  # what engine.Index._deep_side raises before the first vector
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
            deep_scanning = start(params.mode == "hybrid", scan_query, deep_index, deep_model, window, pool, scope, restriction)
    if params.mode in ("hybrid", "vector") and wanted.strip():
        try:
            index, model = vector_side()
        except VectorsUnavailable as exc:
            if params.mode == "vector":
                raise QueryError(f"vector search is unavailable: {exc}") from exc
            notices.append(f"vector search unavailable ({exc}); showing BM25 results only")
        else:
            # In the background only when BM25 runs meanwhile: alone, the hop costs ~0.4 ms.
            scanning = start(params.mode == "hybrid", scan_query, index, model, wanted, pool, scope, restriction)
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
    words = QueryWords(store, query, len(index) if model is not None else None)
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
                _query, scan, hits = scan_query(vectors, model, meaning, self.pool, self.scope, self.restriction)
                if scan is not None and (self.scope is not None or self.restriction is not None) and isinstance(vectors, VectorIndex):
                    hits = scan_hits(self.store, vectors, scan, self.pool, self.scope, self.restriction)
                out[f"{name}:{n}"] = [i for i, _s in hits]
        return out




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
