"""How the agent hook's relevance threshold was chosen (``python -m benchmarks.relevance``).

The hook injects a result only if the cosine similarity of its chunk to the prompt reaches
``hook_min_relevance``. To choose it, each judged collection in ``../shared/data/ir`` is
indexed and searched twice:

- **related prompts**: its own judged queries; every judged-relevant result in the hook's
  top 8 is a result the threshold should keep;
- **unrelated prompts**: the queries of the *other* collections (aeronautics asked of
  medicine, library science asked of computing, …); any result they inject is noise.

For each candidate threshold it prints the share of relevant results kept and the share of
unrelated prompts that would still inject something, per collection and overall.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from benchmarks.vaultgen import get_shared_data
from vaultseek.agents.hooks import CANDIDATES
from vaultseek.evaluation.harness import load_beir, scratch_index

COLLECTIONS = ("scifact", "cranfield", "medline", "cisi", "cacm")
THRESHOLDS = (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60)
AGENT_PROMPTS = (
    "refactor this function to use async await", "why does the build fail with a linker error",
    "add a unit test for the login form", "rename the variable across the whole project",
    "set up a github actions workflow for python", "fix the off by one error in the loop",
    "how do I center a div with flexbox", "write a dockerfile for a node app",
    "the api returns 500 when the payload is empty", "migrate the database schema to add a column",
    "explain what this regex does", "speed up this pandas groupby", "commit and push the changes",
    "add type hints to this module", "why is the react component rendering twice",
    "configure eslint and prettier", "parse the csv and sum the third column",
    "deploy to kubernetes with helm", "what does this stack trace mean", "bump the version to 2.0",
)
"""Typical coding-agent prompts: unrelated to every collection here."""
PER_SET = 150


def measure(workdir: Path) -> dict[str, dict[str, list[float]]]:
    """collection → {"relevant": cosines of judged-relevant hits, "other": cosines of
    non-relevant hits to its own queries, "unrelated_top": best cosine per foreign query}."""
    ir = get_shared_data() / "ir"
    sets = {name: load_beir(ir / name, "train" if name == "scifact" else None) for name in COLLECTIONS}
    out: dict[str, dict[str, list[float]]] = {}
    for name, collection in sets.items():
        index, doc_of_path, _seconds = scratch_index(collection, workdir)
        with index:
            relevant: list[float] = []
            other: list[float] = []
            for query in collection.queries[:PER_SET]:
                hits = index.search(query.text, view="chunks", k=CANDIDATES).results
                cos = index.similarities(query.text, [h.chunk_id for h in hits])
                for hit in hits:
                    judged = query.judgments.get(doc_of_path.get(hit.path, ""), 0) > 0
                    (relevant if judged else other).append(cos.get(hit.chunk_id, -1.0))
            unrelated: list[float] = []
            foreign = [q.text for f, s in sets.items() if f != name for q in s.queries[: PER_SET // 2]]
            for text in foreign:
                hits = index.search(text, view="chunks", k=CANDIDATES).results
                cos = index.similarities(text, [h.chunk_id for h in hits])
                unrelated.append(max(cos.values(), default=-1.0))
            agent: list[float] = []
            for text in AGENT_PROMPTS:
                hits = index.search(text, view="chunks", k=CANDIDATES).results
                cos = index.similarities(text, [h.chunk_id for h in hits])
                agent.append(max(cos.values(), default=-1.0))
        out[name] = {"relevant": relevant, "other": other, "unrelated_top": unrelated, "agent_top": agent}
    return out


def table(data: dict[str, dict[str, list[float]]]) -> str:
    lines = ["| cosine threshold | relevant results kept | other collections' queries that inject | coding prompts that inject | per collection (kept / injected) |",
             "|---:|---:|---:|---:|---|"]  # fmt: skip
    for t in THRESHOLDS:
        rel = [c for d in data.values() for c in d["relevant"]]
        unrel = [c for d in data.values() for c in d["unrelated_top"]]
        agent = [c for d in data.values() for c in d["agent_top"]]
        per = ", ".join(
            f"{name} {share(d['relevant'], t):.0%} / {share(d['unrelated_top'], t):.0%}" for name, d in data.items()
        )
        lines.append(f"| {t:.2f} | {share(rel, t):.1%} | {share(unrel, t):.1%} | {share(agent, t):.1%} | {per} |")
    return "\n".join(lines)


def share(values: list[float], threshold: float) -> float:
    return sum(1 for v in values if v >= threshold) / len(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the raw cosines here")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="vaultseek-relevance-"))
    data = measure(workdir)
    if args.json:
        args.json.write_text(json.dumps(data), "utf-8")
    print(table(data))


if __name__ == "__main__":
    main()
