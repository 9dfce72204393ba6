"""``python -m benchmarks.chatrelevance --workdir DIR``: the chat's source threshold.

The study app's chat shows (and gives the model) only the retrieved passages whose cosine
similarity to the question reaches ``study.sources.MIN_RELEVANCE``. To choose it, each judged
collection in ``../shared/data/ir`` is indexed and asked its **tune** half only (SciFact's train
queries; every other query, alternating, for the rest), retrieving as the chat does (hybrid,
the top 6):

- **relevant passages**: each judged-relevant hit among the 6 is a source the threshold
  should keep;
- **unjudged passages**: the other hits (judgments are incomplete, so some are relevant);
- **unrelated questions**: the other collections' tune queries, and 20 everyday chat
  questions a vault of papers has nothing for ("tell me slowly", "write a haiku about
  autumn"): any source they show is noise.

For each candidate threshold it prints the share of relevant passages kept, of unjudged
passages shown, and of unrelated questions that still show a source.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from benchmarks.vaultgen import get_shared_data
from vaultseek.evaluation.harness import BeirSet, load_beir, scratch_index

COLLECTIONS = ("scifact", "cranfield", "medline", "cisi", "cacm")
THRESHOLDS = (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60)
K = 6
"""The chat's sources per question (``ChatRequest.k``'s default)."""
PER_SET = 100
CHAT_QUESTIONS = (
    "tell me slowly", "can you explain that again in simpler words", "thanks, that helps",
    "write a haiku about autumn", "what's a good recipe for banana bread",
    "who won the world cup in 2014", "summarize the plot of hamlet", "what is the meaning of life",
    "how do I center a div with flexbox", "plan a three day trip to rome",
    "what should I cook tonight", "translate good morning into french",
    "tell me a joke about cats", "how many days until christmas", "what time is it in tokyo",
    "recommend a good science fiction novel", "how do I tie a bowline knot",
    "best exercises for lower back pain", "what is the capital of australia",
    "give me three tips for a job interview",
)  # fmt: skip
"""Everyday questions a study vault of research papers has no passage for."""


def tune_half(collection: BeirSet) -> list[str]:
    """The questions thresholds are chosen on: SciFact's train split is loaded whole (its test
    split is the report half); elsewhere every other judged query, in file order."""
    queries = collection.queries if collection.name == "scifact" else collection.queries[0::2]
    return [q.text for q in queries[:PER_SET]]


def measure(workdir: Path) -> dict[str, dict[str, list[float]]]:
    """collection → {"relevant": cosines of judged-relevant hits in the top K, "unjudged":
    cosines of the other hits, "unrelated_top": best cosine per foreign or chat question}."""
    ir = get_shared_data() / "ir"
    sets = {name: load_beir(ir / name, "train" if name == "scifact" else None) for name in COLLECTIONS}
    out: dict[str, dict[str, list[float]]] = {}
    for name, collection in sets.items():
        index, doc_of_path, _seconds = scratch_index(collection, workdir)
        tuned = {q.text: q for q in collection.queries}
        with index:
            relevant: list[float] = []
            unjudged: list[float] = []
            for text in tune_half(collection):
                hits = index.search(text, view="chunks", k=K).results
                cos = index.similarities(text, [h.chunk_id for h in hits])
                for hit in hits:
                    judged = tuned[text].judgments.get(doc_of_path.get(hit.path, ""), 0) > 0
                    (relevant if judged else unjudged).append(cos.get(hit.chunk_id, -1.0))
            foreign = [t for f, s in sets.items() if f != name for t in tune_half(s)[: PER_SET // 2]]
            unrelated: list[float] = []
            for text in (*foreign, *CHAT_QUESTIONS):
                hits = index.search(text, view="chunks", k=K).results
                cos = index.similarities(text, [h.chunk_id for h in hits])
                unrelated.append(max(cos.values(), default=-1.0))
        out[name] = {"relevant": relevant, "unjudged": unjudged, "unrelated_top": unrelated[: len(foreign)],
                     "chat_top": unrelated[len(foreign):]}  # fmt: skip
    return out


def share(values: list[float], threshold: float) -> float:
    return sum(1 for v in values if v >= threshold) / len(values) if values else 0.0


def table(data: dict[str, dict[str, list[float]]]) -> str:
    lines = ["| cosine ≥ | relevant passages kept | unjudged passages shown | other collections' questions showing a source | everyday questions showing a source |",
             "|---:|---:|---:|---:|---:|"]  # fmt: skip
    for t in THRESHOLDS:
        rel = [c for d in data.values() for c in d["relevant"]]
        unj = [c for d in data.values() for c in d["unjudged"]]
        unrel = [c for d in data.values() for c in d["unrelated_top"]]
        chat = [c for d in data.values() for c in d["chat_top"]]
        lines.append(f"| {t:.2f} | {share(rel, t):.1%} | {share(unj, t):.1%} | {share(unrel, t):.1%} | {share(chat, t):.1%} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=None, help="where the scratch indexes live (reused)")
    parser.add_argument("--json", type=Path, default=None, help="also write the raw cosines here")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="vaultseek-chatrelevance-"))
    data = measure(workdir)
    if args.json:
        args.json.write_text(json.dumps(data), "utf-8")
    print(table(data))


if __name__ == "__main__":
    main()
