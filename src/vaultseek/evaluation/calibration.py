"""Fitting the relevance judgment (``search/relevance.py``) to judged examples.

An example is one result of one query: the :class:`~vaultseek.search.relevance.Evidence` the
judgment reads, and whether the result is relevant (its page judged relevant to a judged
question; any result of a prompt nothing in the vault answers is not). :func:`fit_judge` fits
a logistic model by Newton's method on standardised features with a small L2 penalty (the
examples number in the thousands, the features a handful: exact, no dependency), and
:func:`judge_scores` measures one — precision and recall of the results it calls relevant,
and per query whether the right thing happens (a related question gets something, an
unrelated prompt nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..search.relevance import (
    MATCH,
    RELEVANT,
    Evidence,
    Features,
    Judge,
    Judges,
    QueryEvidence,
    judge_one,
    match_chance,
    query_evidence,
)

Example = tuple[Evidence, bool]
"""One result's evidence and whether it is relevant."""
Labelled = tuple[Features, bool]
"""Anything a judge reads (a result's :class:`Evidence`, a query's :class:`QueryEvidence`)
and the label to predict."""


def fit_judge(
    name: str, examples: Sequence[Labelled], features: Sequence[str], *, weights: Sequence[float] | None = None, l2: float = 1.0
) -> Judge:
    """The logistic model over ``features`` that best predicts the examples' labels (maximum
    likelihood with an L2 penalty of ``l2`` on the standardised weights); ``weights`` counts
    each example that many times (e.g. so related and unrelated prompts weigh alike)."""
    if not examples:
        raise ValueError("no examples to fit")
    x = np.array([[e.value(f) for f in features] for e, _label in examples], dtype=np.float64)
    y = np.array([1.0 if label else 0.0 for _e, label in examples])
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64) * len(y) / float(np.sum(weights))
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    coefficients = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0  # the bias is not shrunk
    for _step in range(100):
        p = 1.0 / (1.0 + np.exp(-(z @ coefficients)))
        gradient = z.T @ (w * (p - y)) + penalty * coefficients
        hessian = (z * (w * p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        coefficients -= step
        if np.abs(step).max() < 1e-8:
            break
    raw = coefficients[1:] / scale
    bias = float(coefficients[0] - (raw * mean).sum())
    return Judge(name, round(bias, 4), {f: round(float(w), 4) for f, w in zip(features, raw, strict=True)})


@dataclass(frozen=True, slots=True)
class Query:
    """One query's examples, and whether it is a prompt nothing in the vault answers."""

    examples: Sequence[Example]
    unrelated: bool
    anchors: bool = True
    """Whether a match judge's no-match line is set on it (:func:`judge_scores`' ``answered``
    over the judged questions): a known item (a title, a word one note holds) is not — the
    words decide it, and it would move the line the judged questions keep."""


@dataclass(frozen=True, slots=True)
class JudgeScores:
    """How a search's judges did on a set of queries."""

    precision: float
    """Of the results called relevant, the share that are."""
    recall: float
    """Of the relevant results among those judged, the share called relevant."""
    answered: float
    """Of the related questions, the share the match judge calls matched: they get no "no
    match" notice (a question whose answer was not found among the results counts too)."""
    silent: float
    """Of the unrelated prompts, the share called unmatched: the "no match" notice, the hook's
    and the chat's silence."""
    examples: int


def judge_scores(
    judges: Judges, queries: Sequence[Query], *, relevant: float = RELEVANT, match: float = MATCH
) -> JudgeScores:
    """:class:`JudgeScores` of ``judges`` over the queries, results called relevant from
    ``relevant`` and queries called matched from ``match``."""
    called = right = labelled = 0
    related = answered = unrelated = silent = 0
    for query in queries:
        chances = [judge_one(judges, e) for e, _label in query.examples]
        for chance, (_e, label) in zip(chances, query.examples, strict=True):
            called += chance >= relevant
            right += chance >= relevant and label
            labelled += label
        evidence = [e for e, _l in query.examples]
        matched = bool(evidence) and match_chance(judges, evidence, chances) >= match
        if query.unrelated:
            unrelated += 1
            silent += not matched
        else:
            related += 1
            answered += matched
    return JudgeScores(
        precision=right / called if called else 1.0,
        recall=right / labelled if labelled else 1.0,
        answered=answered / related if related else 1.0,
        silent=silent / unrelated if unrelated else 1.0,
        examples=sum(len(q.examples) for q in queries),
    )


def match_examples(judges: Judges, queries: Sequence[Query]) -> list[tuple[QueryEvidence, bool]]:
    """Each query's :class:`QueryEvidence` under ``judges`` and whether it is related (the
    examples a match judge is fitted to)."""
    out = []
    for query in queries:
        evidence = [e for e, _label in query.examples]
        chances = [judge_one(judges, e) for e in evidence]
        out.append((query_evidence(evidence, chances), not query.unrelated))
    return out
