"""One search's fusion: the list weights for this query (the configured ones, the intent's
lean, how much of the query the fast model reads, the deep list's share) and the method
(:mod:`.fusion`), with term matching re-scoring the head's lexical scores (:mod:`.termmatch`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..storage.store import ChunkRow, Store
from .candidates import Scored
from .deeplist import DeepList
from .fusion import DEFAULT_WEIGHTS, Fused, convex, convex_head, rrf
from .params import SearchParams
from .relevance import QueryWords
from .termmatch import RERANK_DEPTH, blend, idf, match_scores


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
        "floored": {"deep": deep.floored(lists.get("bm25", []), lists.get("vector", []))},
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
