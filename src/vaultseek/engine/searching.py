"""A search request set up against the index's settings: the parameters the pipeline runs with
(:func:`search_params`), and the model steps it asks for (:class:`ModelSteps`: the reranker and
query expansion, each built once per index).

What a request leaves out takes the configuration; what it names wins, for that search only.
"""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from ..contract import SearchRequest
from ..errors import VaultseekError
from ..records import SearchFilter
from ..search.expansion import Expander
from ..search.params import SearchParams
from ..search.rerank import RerankerLike, skipped


def search_params(request: SearchRequest, config: Config, *, now: float, scope: SearchFilter | None) -> SearchParams:
    """What the pipeline is asked to do for ``request``: its options, else ``config``'s; ``now``
    is the moment recency counts from, ``scope`` the request's filters with real paths."""
    half_life = config.recency_half_life_days if request.recency_half_life_days is None else request.recency_half_life_days
    fusion = request.fusion if request.fusion is not None else config.fusion
    term_match = request.term_match
    if term_match is None:  # the configured strength, where it applies (convex fusion);
        term_match = config.term_match if fusion == "convex" else 0.0  # asked for, a notice
    return SearchParams(
        mode=request.mode,
        view=request.view,
        k=request.k if request.k is not None else config.top_k,
        candidates=request.candidates if request.candidates is not None else config.candidates,
        fusion=fusion,
        rrf_k=config.rrf_k,
        bm25_weight=config.bm25_weight,
        vector_weight=config.vector_weight,
        deep_weight=config.deep_weight if request.deep_weight is None else request.deep_weight,
        max_tokens=request.max_tokens,
        scope=scope,
        title_match=config.title_match if request.title_match is None else request.title_match,
        recency_half_life_days=float(half_life) if half_life else None,
        recency_weight=config.recency_weight,
        term_match=term_match,
        intent=config.intent if request.intent is None else request.intent,
        now=now,
        link_boost=request.link_boost if request.link_boost is not None else config.link_boost,
        link_signal=request.link_signal if request.link_signal is not None else config.link_signal,
        syntax=request.syntax is not False,
        rerank_depth=config.rerank_depth,
        rerank_weight=config.rerank_weight,
    )


class ModelSteps:
    """The reranker and the query expander of one index's searches, each built on the first
    search that asks for it (from the configuration then) and kept."""

    def __init__(self) -> None:
        self._reranker: RerankerLike | None = None
        self._expander: Expander | None = None

    def asked_by(
        self, request: SearchRequest, config: Config
    ) -> tuple[RerankerLike | None, Expander | None, list[str]]:
        """The reranker and query expansion ``request`` asks for (its ``rerank`` and
        ``expand``, else ``config``'s); and the notices for those asked for that cannot run
        (none configured, the HTTP library not installed)."""
        notices: list[str] = []
        reranker: RerankerLike | None = None
        expander: Expander | None = None
        if request.rerank if request.rerank is not None else config.rerank != "off":
            if config.rerank == "off":
                notices.append('reranking asked for, but no reranker is set up (rerank = "off"): see docs/models.md')
            else:
                from ..search.servers import open_reranker  # a search that asks no model skips it

                try:
                    reranker = self._reranker = self._reranker or open_reranker(config)
                except VaultseekError as exc:
                    notices.append(skipped("reranking", exc))
        if request.expand if request.expand is not None else config.expand:
            from ..search.servers import open_expander

            try:
                index_path = None if config.db is None else Path(config.db)
                expander = self._expander = self._expander or open_expander(config, index_path)
            except VaultseekError as exc:
                notices.append(skipped("query expansion", exc))
        return reranker, expander, notices
