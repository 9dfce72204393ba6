"""Judged query sets in, retrieval-quality figures out: what ``vaultseek eval`` runs.

Two kinds of input (read by :mod:`.judged_sets`):

- a **BEIR-layout folder** (``corpus.jsonl``, ``queries.jsonl``, ``qrels.tsv`` with a header
  line; ``queries_<split>.jsonl`` / ``qrels_<split>.tsv`` for other splits). Its corpus becomes a
  scratch vault (:mod:`.scratch_index`), one note per document, indexed by the real engine, so
  the figures measure what a user's vault gets: chunking, heading context, BM25, vectors, fusion;
- a **golden file** for an indexed vault: JSON Lines
  ``{"id", "query", "relevant": {"<vault-relative path>": grade}}``, each line optionally with a
  ``"kind"`` (a free label such as ``paraphrase`` or ``identifier``: the report then breaks every
  configuration's scores down by kind) and a ``"split"`` (``tune``, ``test``, …: an evaluation
  can keep to one split, so settings chosen on one are measured on another).

Each configuration (a mode, or hybrid with a named fusion) answers every query with
k = candidates = :data:`DEPTH` chunks (the chunk view), so Recall@100 sees a genuinely 100-deep
list. Every metric is computed twice from that one list: at the **note level**, the chunks
collapsed to documents in the note view's order (``search.grouping.note_order``: each note
once, ranked by its best sections; definitions in :mod:`metrics`), and at the **chunk level**, the
raw list, where a second chunk of a document already listed takes a place and counts nothing
(:func:`chunk_list`) — what a list of chunks costs a reader. Queries without a relevant document
are left out, as BEIR does.

The library never prints: progress goes through a callback and a report renders as a table
(:mod:`.tables`) or JSON. Bad input raises :class:`ConfigError` naming the file and line, so the
CLI shows one line instead of a traceback.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..config import FUSION_METHODS
from ..engine import Index
from ..errors import ConfigError, LLMError, QueryError
from ..records import Progress, SearchMode, SearchResponse
from ..search.grouping import note_order, share_for
from ..search.termmatch import DEFAULT_WEIGHT
from . import metrics
from .judged_sets import EvalQuery, load_beir, load_golden
from .regions import MapRegions, RegionScores, map_regions, region_scores
from .scratch_index import scratch_index

ProgressCallback = Callable[[Progress], None]
DEPTH = 100
"""Results asked for per query (``k``) and hits each list contributes (``candidates``)."""
Scorer = Callable[[Sequence[str], metrics.Judgments], float]
METRICS: dict[str, Scorer] = {
    "nDCG@10": lambda ranking, judged: metrics.ndcg_at_k(ranking, judged, 10),
    "Recall@10": lambda ranking, judged: metrics.recall_at_k(ranking, judged, 10),
    "Recall@100": lambda ranking, judged: metrics.recall_at_k(ranking, judged, 100),
    "Answer@10": lambda ranking, judged: metrics.answer_at_k(ranking, judged, 10),
    "MRR@10": lambda ranking, judged: metrics.reciprocal_rank_at_k(ranking, judged, 10),
    "nDCG@5": lambda ranking, judged: metrics.ndcg_at_k(ranking, judged, 5),
    "Hit@1": lambda ranking, judged: metrics.hit_at_k(ranking, judged, 1),
}
"""What every configuration is scored on, by name (the table's columns, in order). nDCG@5 and
Hit@1 (the first result is a relevant page, of any grade) are what a help search box is judged
on: the first screen, and the first hit alone."""
KIND_METRICS = ("nDCG@10", "Recall@10", "Answer@10", "MRR@10", "nDCG@5", "Hit@1")
"""The metrics broken down by query kind (names in :data:`METRICS`): the top-10 figures a reader
compares kinds on, and the top-5 and first-hit ones; Recall@100 stays in the overall row only."""
NO_KIND = "(none)"
"""The kind reported for golden lines without one, in a file where other lines have one."""
MODES: tuple[SearchMode, ...] = ("bm25", "vector", "hybrid")
"""Single modes first, then the fused one: the order a reader compares them in."""


@dataclass(frozen=True, slots=True)
class Configuration:
    """One way of searching: ``bm25``, ``vector``, ``hybrid`` (with the configured fusion) or
    ``hybrid:<fusion>``."""

    label: str
    mode: SearchMode
    fusion: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    """Further ``Index.search`` keyword arguments, e.g. a ranking signal switched on."""


def configurations(
    modes: Sequence[str] = MODES, fusions: Sequence[str] = FUSION_METHODS
) -> tuple[Configuration, ...]:
    """The configurations to compare. Each fusion adds a ``hybrid:<fusion>`` row when hybrid
    is among the modes; the plain ``hybrid`` row is whatever the config makes the default, so
    a table shows both the default and every alternative to it."""
    for what, names, known in (("mode", modes, (*MODES, "deep")), ("fusion", fusions, FUSION_METHODS)):
        for name in names:
            if name not in known:
                raise ConfigError(f"unknown {what} {name!r}", hint=f"use some of {', '.join(known)}")
    chosen = [Configuration(m, m) for m in (*MODES[:2], "deep", *MODES[2:]) if m in modes]
    if "hybrid" in modes:
        chosen += [Configuration(f"hybrid:{f}", "hybrid", f) for f in FUSION_METHODS if f in fusions]
    if not chosen:
        raise ConfigError("no configuration to evaluate", hint="name at least one mode")
    return tuple(chosen)


TERM_MATCH = Configuration("hybrid+terms", "hybrid", None, (("term_match", DEFAULT_WEIGHT),))
"""The default hybrid with term matching on at its measured strength (``termmatch.py``)."""
NO_TERM_MATCH = Configuration("hybrid-terms", "hybrid", None, (("term_match", 0.0),))
"""The default hybrid with term matching off: what term matching adds. ``vaultseek eval
--term-match`` adds both rows, whatever the configuration says; the committed quality table
adds this one (its default hybrid has term matching on)."""


SYNTAX = Configuration("hybrid+syntax", "hybrid", None, (("syntax", True),))
"""The default hybrid with the query syntax read. Judged queries are measured as prose, with
the syntax off; this row shows what reading them as typed queries changes (a command's flag
such as ``netstat -tulpn`` reads as an exclusion)."""
RERANK = Configuration("hybrid+rerank", "hybrid", None, (("rerank", True), ("expand", False)))
"""The default hybrid re-scored by the configured reranker (``search/rerank.py``): ``vaultseek
eval --rerank`` measures it beside the plain ``hybrid`` row, on the user's own judged set."""
EXPAND = Configuration("hybrid+expand", "hybrid", None, (("expand", True), ("rerank", False)))
"""The default hybrid with query expansion (``search/expansion.py``): ``vaultseek eval
--expand``."""
DEEP = Configuration("deep", "deep")
"""The deep tier's list alone (only for an index with deep vectors: ``deepening.py``)."""
NO_DEEP = Configuration("hybrid-deep", "hybrid", None, (("deep_weight", 0.0),))
"""The default hybrid without the deep list: what the deep tier adds."""


@dataclass(frozen=True, slots=True)
class KindScores:
    """One configuration's scores over the queries of one kind."""

    queries: int
    scores: dict[str, float]
    """Metric name (one of :data:`KIND_METRICS`) → mean over this kind's queries."""

    def to_dict(self) -> dict[str, Any]:
        return {"queries": self.queries} | {name.lower(): round(v, 6) for name, v in self.scores.items()}


@dataclass(frozen=True, slots=True)
class ConfigResult:
    configuration: Configuration
    scores: dict[str, float]
    """Metric name (a key of :data:`METRICS`) → mean over the queries."""
    latency_p50_ms: float
    latency_p99_ms: float
    per_query_ndcg: dict[str, float]
    """nDCG@10 per query id, for paired comparisons between configurations."""
    by_kind: dict[str, KindScores] = field(default_factory=dict)
    """Query kind → scores over that kind's queries, sorted by kind; empty when no query has a
    kind (a BEIR folder, a golden file without ``"kind"``)."""
    chunk_scores: dict[str, float] = field(default_factory=dict)
    """The same metrics over the raw chunk list (:func:`chunk_list`), means over the queries."""
    chunk_by_kind: dict[str, KindScores] = field(default_factory=dict)
    """:attr:`by_kind` over the raw chunk list."""
    by_region: RegionScores | None = None
    """Recall@10 by region of the map (``--by-region``: :mod:`.regions`)."""

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        c = self.configuration
        out: dict[str, Any] = {"configuration": c.label, "mode": c.mode, "fusion": c.fusion}
        if c.options:
            out["options"] = dict(c.options)
        out.update({name.lower(): round(value, 6) for name, value in self.scores.items()})
        out["latency_ms"] = {"p50": round(self.latency_p50_ms, 3), "p99": round(self.latency_p99_ms, 3)}
        if self.by_kind:
            out["by_kind"] = {kind: scores.to_dict() for kind, scores in self.by_kind.items()}
        if self.chunk_scores:
            out["chunk_list"] = {name.lower(): round(value, 6) for name, value in self.chunk_scores.items()}
            if self.chunk_by_kind:
                out["chunk_list"]["by_kind"] = {kind: scores.to_dict() for kind, scores in self.chunk_by_kind.items()}
        if self.by_region is not None:
            out["by_region"] = self.by_region.to_dict()
        if per_query:
            out["per_query_ndcg@10"] = {q: round(v, 6) for q, v in self.per_query_ndcg.items()}
        return out


@dataclass(frozen=True, slots=True)
class EvalReport:
    name: str
    source: str
    split: str | None
    documents: int
    queries: int
    skipped_queries: int
    """Judged queries left out: no relevant document, or no text in the queries file."""
    default_fusion: str
    model: str | None
    """The embedding model the index was built with."""
    results: tuple[ConfigResult, ...]
    index_seconds: float
    notices: tuple[str, ...] = ()
    regions: MapRegions | None = None
    """The map the results' ``by_region`` scores were read from (``--by-region``)."""

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "regions"}
        out |= {"k": DEPTH, "candidates": DEPTH, "results": [r.to_dict(per_query=per_query) for r in self.results]}
        if self.regions is not None:
            out["map"] = self.regions.to_dict()
        return out | {"index_seconds": round(self.index_seconds, 2), "notices": list(self.notices)}


# -- running ---------------------------------------------------------------------------------
def run_configurations(
    index: Index,
    queries: Sequence[EvalQuery],
    document_of: Callable[[str], str],
    chosen: Sequence[Configuration],
    *,
    progress: ProgressCallback | None = None,
    regions: MapRegions | None = None,
) -> tuple[ConfigResult, ...]:
    """Every configuration over every query; ``document_of`` maps a result path to the id the
    judgments use. Latency is the wall time of ``index.search`` alone. Each configuration
    first answers one query untimed, so loading the model and the vectors is not counted.
    Each search is scored at the note level and at the chunk level (the module docstring),
    and with ``regions`` by region of the map (:mod:`.regions`)."""
    report = progress or (lambda _p: None)
    total, done = len(chosen) * len(queries), 0
    results = []
    for config in chosen:
        # Judged queries are questions and descriptions in prose ("-dash", "… (e.g. …)"):
        # the ranking is measured on their words, not on operators read into them.
        options: dict[str, Any] = {
            "mode": config.mode, "view": "chunks", "fusion": config.fusion, "k": DEPTH, "candidates": DEPTH, "syntax": False,
            "rerank": False, "expand": False,  # the model rows (RERANK, EXPAND) say so themselves
        }  # fmt: skip
        options.update(config.options)
        _model_steps_ran(index.search(queries[0].text, **options), options, config.label)
        share = share_for(config.mode, config.fusion or index.config.fusion)  # as the note view ranks notes
        scores: dict[str, list[float]] = {name: [] for name in METRICS}
        chunk_scores: dict[str, list[float]] = {name: [] for name in METRICS}
        latencies, per_query, rankings = [], {}, []
        for query in queries:
            started = time.perf_counter()
            response = index.search(query.text, **options)
            latencies.append((time.perf_counter() - started) * 1000)
            _model_steps_ran(response, options, config.label)
            documents = [document_of(hit.path) for hit in response.results]
            hits = zip(documents, response.results, strict=True)
            ranking = note_order(((document, hit.score, hit.signals.get("title", 0.0) > 0) for document, hit in hits), share)
            chunks = chunk_list(documents)
            rankings.append(ranking)
            for name, scorer in METRICS.items():
                scores[name].append(scorer(ranking, query.judgments))
                chunk_scores[name].append(scorer(chunks, query.judgments))
            per_query[query.id] = scores["nDCG@10"][-1]
            done += 1
            report(Progress("index", done, total, f"searching: {config.label}"))
        results.append(
            ConfigResult(
                config,
                {name: metrics.mean(values) for name, values in scores.items()},
                metrics.percentile(latencies, 50),
                metrics.percentile(latencies, 99),
                per_query,
                scores_by_kind(queries, scores),
                {name: metrics.mean(values) for name, values in chunk_scores.items()},
                scores_by_kind(queries, chunk_scores),
                None if regions is None else region_scores(regions, [q.judgments for q in queries], rankings),
            )
        )
    report(Progress("done", 1, 1))
    return tuple(results)


def _model_steps_ran(response: SearchResponse, options: dict[str, Any], label: str) -> None:
    """Raise when a row that measures the reranker or query expansion got an answer without
    it (the server failed): the row would measure the plain hybrid under another name."""
    for step, done in (("rerank", response.reranking), ("expand", response.expansion)):
        if options.get(step) and done is None:
            why = next((n for n in response.notices if "skipped" in n or "asked for" in n), "it did not run")
            raise LLMError(f"{label}: {why}", hint="fix the model server, then run the evaluation again")


def chunk_list(documents: Sequence[str]) -> list[str]:
    """A chunk list's documents as its reader meets them: a document's first chunk names it,
    and each later chunk of it keeps its place but counts nothing — it becomes a placeholder no
    judgment names. Scored by :mod:`metrics`, which count a document once at its first place,
    this is the chunk-level ranking: a second section of a note pushes the next note down."""
    seen: set[str] = set()
    out = []
    for position, document in enumerate(documents):
        if document in seen:
            out.append(f"\0repeat {position}")
        else:
            seen.add(document)
            out.append(document)
    return out


def scores_by_kind(queries: Sequence[EvalQuery], scores: dict[str, list[float]]) -> dict[str, KindScores]:
    """Each kind's means of :data:`KIND_METRICS`, from per-query scores listed in the order of
    ``queries``; queries without a kind form :data:`NO_KIND`. Empty when no query has a kind,
    so a set without kinds reports exactly what it always did."""
    if all(q.kind is None for q in queries):
        return {}
    positions: dict[str, list[int]] = {}
    for position, query in enumerate(queries):
        positions.setdefault(query.kind or NO_KIND, []).append(position)
    return {
        kind: KindScores(len(at), {name: metrics.mean([scores[name][i] for i in at]) for name in KIND_METRICS})
        for kind, at in sorted(positions.items())
    }


def evaluate_beir(
    folder: Path | str,
    *,
    split: str | None = None,
    workdir: Path | str | None = None,
    chosen: Sequence[Configuration] | None = None,
    progress: ProgressCallback | None = None,
    db: str | None = None,
    by_region: bool = False,
    **settings: Any,
) -> EvalReport:
    """Index a BEIR folder's corpus under ``workdir`` (a temporary folder, removed afterwards,
    when None) and evaluate one split. ``settings`` go to :func:`open_index` (e.g.
    ``config_file``), so a user's model or fusion settings are what gets measured.
    ``by_region``: also score each configuration by region of the scratch index's map."""
    collection = load_beir(folder, split)
    scratch = None if workdir else tempfile.TemporaryDirectory(prefix="vaultseek-eval-")
    root = Path(scratch.name) if scratch else Path(str(workdir)).expanduser()
    try:
        index, doc_of_path, seconds = scratch_index(collection, root, progress=progress, db=db, **settings)
        with index:
            regions = map_regions(index, doc_of_path.get) if by_region else None
            results = run_configurations(
                index, collection.queries, doc_of_path.__getitem__, chosen or configurations(), progress=progress,
                regions=regions,
            )  # fmt: skip
            fusion, model = index.config.fusion, index.status().model
    finally:
        if scratch:
            scratch.cleanup()
    return EvalReport(
        collection.name, str(collection.folder), split, len(doc_of_path), len(collection.queries),
        collection.skipped_queries, fusion, model, results, seconds, collection.notices, regions,
    )  # fmt: skip


def evaluate_golden(
    index: Index,
    golden: Path | str,
    *,
    split: str | None = None,
    chosen: Sequence[Configuration] | None = None,
    progress: ProgressCallback | None = None,
    by_region: bool = False,
) -> EvalReport:
    """Evaluate an index as it is (it is not synced first) against a golden file, or against
    its lines of one ``split``. Relevant paths the index does not hold are named in a notice:
    a typo there would otherwise just read as poor recall. ``by_region``: also score each
    configuration by region of the index's map (made, or brought up to date, and kept)."""
    queries, skipped = load_golden(golden, split)
    judged = sorted({p for q in queries for p, g in q.judgments.items() if g > 0})
    missing = [p for p in judged if not _indexed(index, p)]
    notices = []
    if missing:
        more = " …" if len(missing) > 5 else ""
        notices.append(f"{len(missing)} relevant path(s) are not in the index: {', '.join(missing[:5])}{more}")
    regions = map_regions(index, lambda path: path) if by_region else None
    results = run_configurations(index, queries, lambda path: path, chosen or configurations(), progress=progress,
                                 regions=regions)  # fmt: skip
    status = index.status()
    return EvalReport(
        Path(golden).name, str(index.vault), split, status.files, len(queries), skipped,
        index.config.fusion, status.model, results, 0.0, tuple(notices), regions,
    )  # fmt: skip


def _indexed(index: Index, path: str) -> bool:
    try:
        index.get_note(path)
    except QueryError:
        return False
    return True

