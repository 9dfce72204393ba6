"""``python -m benchmarks.deeprelevance``: the hook's threshold for the deep model.

The agent hook injects a search hit only when the hit is similar enough to the prompt
(``hooks.MIN_RELEVANCE`` by the static model, ``hooks.MIN_DEEP_RELEVANCE`` by the deep model
for chunks that have a deep vector). For each tldr set given, on its **tune** half:

- **related prompts**: the set's questions; each judged-relevant hit among the hook's 8 is a
  hit the threshold should keep;
- **unrelated prompts**: 20 questions about cooking, history, health and the like in six
  languages, which a vault of command-line pages has nothing for: any hit they inject is noise.

For each threshold it prints the share of relevant hits kept and of unrelated prompts that
still inject something, beside the static model at its own threshold. The indexes are those
of ``python -m benchmarks.golden --workdir DIR`` with their deep vectors complete
(``vaultseek deep --db DIR/<lang>.db --vault …``; ``--deepen`` makes them here, which takes
a while).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.golden import GOLDEN_DIR, vault_of
from vaultseek.agents.hooks import CANDIDATES, MIN_DEEP_RELEVANCE, MIN_RELEVANCE
from vaultseek.engine import open_index

UNRELATED = (
    "what's a good recipe for banana bread", "who won the world cup in 2014",
    "explain the causes of the french revolution", "how many calories are in an avocado",
    "明日の天気はどうですか", "おすすめの京都の観光地", "红烧肉怎么做好吃", "三国演义的主要人物有哪些",
    "Wie backe ich einen Apfelstrudel", "Wann war der Dreißigjährige Krieg", "최고의 김치찌개 레시피",
    "¿cuál es la capital de Australia?", "refactor this function to use async await",
    "why does my react component re-render twice", "write a haiku about autumn",
    "photosynthesis in plants explained", "best exercises for lower back pain", "how do vaccines work",
    "summarize the plot of hamlet", "what is the meaning of life",
)  # fmt: skip
THRESHOLDS = (0.80, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86, 0.88)


def measure(lang: str, data: Path, workdir: Path, *, deepen: bool) -> tuple[int, dict[str, tuple[float, float]]]:
    """(judged-relevant hits among the related prompts' top 8, threshold → (share of them
    kept, share of unrelated prompts injecting))."""
    golden = GOLDEN_DIR / f"tldr-{lang}.jsonl"
    questions = [json.loads(line) for line in golden.read_text("utf-8").splitlines() if line.strip()]
    questions = [q for q in questions if q.get("split") == "tune"]
    with open_index(vault_of(data, lang), db=workdir / f"{lang}.db", create=True, deep_tier=True) as index:
        index.sync(remember=False)
        if deepen:
            index.deepen()
        status = index.deep_status()
        if status is None or status.pending:
            raise SystemExit(f"{lang}: the deep vectors are not complete (run with --deepen, or `vaultseek deep`)")
        related: list[tuple[float, float]] = []
        for question in questions:
            hits = index.search(question["query"], view="chunks", k=CANDIDATES).results
            ids = [hit.chunk_id for hit in hits]
            deep, static = index.deep_similarities(question["query"], ids), index.similarities(question["query"], ids)
            # A question the static model cannot read gets no static cosines: not kept by them.
            related += [(deep[h.chunk_id], static.get(h.chunk_id, -1.0)) for h in hits if question["relevant"].get(h.path, 0) > 0]
        noise: list[tuple[float, float]] = []
        for prompt in UNRELATED:
            ids = [hit.chunk_id for hit in index.search(prompt, view="chunks", k=CANDIDATES).results]
            deep, static = index.deep_similarities(prompt, ids), index.similarities(prompt, ids)
            noise.append((max(deep.values(), default=0.0), max(static.values(), default=0.0)))
    rows = {
        f"deep {t:.2f}": (_share(related, 0, t), _share(noise, 0, t)) for t in THRESHOLDS
    } | {f"static {MIN_RELEVANCE:.2f}": (_share(related, 1, MIN_RELEVANCE), _share(noise, 1, MIN_RELEVANCE))}
    return len(related), rows


def _share(pairs: list[tuple[float, float]], which: int, threshold: float) -> float:
    return sum(pair[which] >= threshold for pair in pairs) / len(pairs) if pairs else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data", help="the shared data folder")
    parser.add_argument("--workdir", required=True, help="bench.golden's index folder")
    parser.add_argument("--sets", default="ja,de", help="tldr sets, comma-separated")
    parser.add_argument("--deepen", action="store_true", help="make missing deep vectors first")
    args = parser.parse_args()
    print(f"hook threshold (the default: deep {MIN_DEEP_RELEVANCE:.2f}, static {MIN_RELEVANCE:.2f}); tune halves")
    print("| set | threshold | relevant hits kept | unrelated prompts injecting |\n|---|---|---:|---:|")
    for lang in args.sets.split(","):
        hits, rows = measure(lang.strip(), Path(args.data), Path(args.workdir), deepen=args.deepen)
        for name, (kept, noisy) in rows.items():
            print(f"| {lang} ({hits} hits) | {name} | {kept:.2f} | {noisy:.2f} |")


if __name__ == "__main__":
    main()
