"""How well intake routes: hold out real notes from real vaults and ask where they belong.

    python -m benchmarks.intake [--workdir DIR] [--holdout 0.1] [--offtopic 300] [--out FILE]

For each vault built from ``../shared/data`` — tldr-pages (English pages in their platform
folders: common, linux, osx, windows, …) and the PowerShell 7.5 reference (one folder per
module) — every folder's notes are split deterministically: ``--holdout`` of them (at least one)
are left out of the vault copy before it is indexed. Intake then assesses each held-out note
in dry-run mode, as if it had arrived in the inbox, and the folder it chose is compared with
the folder it really lives in. SciFact abstracts (biomedical research, nothing to do with
either vault) are assessed the same way, to show where off-topic items fall. Prints markdown
tables: accuracy (with the majority-folder baseline and the three affinity variants), the
confusion between folders, the decisions at the configured thresholds, and the threshold
sweep used to calibrate them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from vaultseek.engine import open_index
from vaultseek.intake import Intake, item_from_text

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _held_out(name: str, fraction: float) -> bool:
    digest = int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16)
    return digest / 0xFFFFFFFF < fraction


def build_vault(source_folders: dict[str, Path], vault: Path, fraction: float) -> list[tuple[str, str, str]]:
    """Copy every folder's notes except the held-out ones; returns (folder, name, text) held out."""
    if vault.exists():
        shutil.rmtree(vault)
    held: list[tuple[str, str, str]] = []
    for folder, source in sorted(source_folders.items()):
        files = sorted(p for p in source.glob("*.md") if p.is_file())
        chosen = [p for p in files if _held_out(f"{folder}/{p.name}", fraction)]
        if not chosen and len(files) > 1:
            chosen = [files[0]]
        (vault / folder).mkdir(parents=True, exist_ok=True)
        for path in files:
            text = path.read_text("utf-8")
            if path in chosen:
                held.append((folder, path.stem, text))
            else:
                (vault / folder / path.name).write_text(text, "utf-8")
    return held


def run_vault(label: str, vault: Path, db: Path, held: list[tuple[str, str, str]], offtopic: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    with open_index(vault, db=db, create=True) as index:
        index.sync(remember=False)
        indexed = time.perf_counter() - started
        intake = Intake(index)
        rows = []
        for folder, name, text in held:
            assessment = intake.assess(item_from_text(text, name=name, source=f"{folder}/{name}.md"))
            by_centroid = max(assessment.route.affinities, key=lambda a: (a.centroid, a.domain)).domain
            by_nearest = max(assessment.route.affinities, key=lambda a: (a.nearest, a.domain)).domain
            rows.append({"folder": folder, "domain": assessment.domain, "total": assessment.total,
                         "decision": assessment.decision, "centroid": by_centroid, "nearest": by_nearest,
                         "margin": assessment.route.margin,
                         "scores": {d.name: d.score for d in assessment.dimensions}})  # fmt: skip
        off = []
        for text in offtopic:
            assessment = intake.assess(item_from_text(text))
            off.append({"total": assessment.total, "decision": assessment.decision,
                        "scores": {d.name: d.score for d in assessment.dimensions}})  # fmt: skip
        domains = intake.model().usable
        file_at, review_at = index.config.intake_file_at, index.config.intake_review_at
    return {"label": label, "rows": rows, "off": off, "domains": domains, "indexed_seconds": indexed,
            "notes": sum(1 for _ in vault.rglob("*.md")), "file_at": file_at, "review_at": review_at}  # fmt: skip


def render(result: dict[str, Any]) -> str:
    rows, off, domains = result["rows"], result["off"], result["domains"]
    n = len(rows)
    acc = sum(r["domain"] == r["folder"] for r in rows) / n
    acc_c = sum(r["centroid"] == r["folder"] for r in rows) / n
    acc_n = sum(r["nearest"] == r["folder"] for r in rows) / n
    majority, majority_n = Counter(r["folder"] for r in rows).most_common(1)[0]
    per_folder = {d: [r for r in rows if r["folder"] == d] for d in domains}
    macro = sum(sum(r["domain"] == d for r in rs) / len(rs) for d, rs in per_folder.items() if rs) / max(
        1, sum(1 for rs in per_folder.values() if rs))
    out = [f"### {result['label']}", "",
           (f"{result['notes']:,} notes indexed in {len(domains)} folders; "
            f"{n} held-out notes; {len(off)} SciFact abstracts as off-topic items."), "",
           "| routing | accuracy |", "|---|---:|",
           f"| **intake (mean of centroid and nearest-passages cosine, the default)** | **{acc:.1%}** |",
           f"| centroid cosine only | {acc_c:.1%} |",
           f"| nearest passages only (mean of the top 5) | {acc_n:.1%} |",
           f"| per-folder recall, averaged over folders (default) | {macro:.1%} |",
           f"| baseline: always the largest folder ({majority}) | {majority_n / n:.1%} |", ""]  # fmt: skip
    shown = [d for d in domains if per_folder.get(d)]
    out += ["Confusion (rows: the folder a note lives in; columns: where intake routed it):", "",
            "| folder | n | " + " | ".join(shown) + " | recall |",
            "|---|---:|" + "---:|" * len(shown) + "---:|"]  # fmt: skip
    for d in shown:
        rs = per_folder[d]
        counts = Counter(r["domain"] for r in rs)
        cells = [f"**{counts[c]}**" if c == d else (str(counts[c]) if counts[c] else "·") for c in shown]
        out.append(f"| {d} | {len(rs)} | " + " | ".join(cells) + f" | {counts[d] / len(rs):.0%} |")
    out.append("")

    def decisions(items: list[dict[str, Any]]) -> str:
        c = Counter(i["decision"] for i in items)
        return " / ".join(f"{c[k] / len(items):.0%}" for k in ("file", "review", "discard"))

    def mean(items: list[dict[str, Any]], key: str) -> str:
        return f"{sum(i['scores'][key] for i in items) / len(items):.2f}"

    out += [(f"Decisions at intake_file_at {result['file_at']:g} / intake_review_at {result['review_at']:g}, "
             "and mean scores:"), "",
            "| items | file / review / discard | total (median) | relevance | actionability | depth | authority |",
            "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for label, items in (("held-out notes", rows), ("off-topic (SciFact)", off)):
        totals = sorted(i["total"] for i in items)
        out.append(f"| {label} | {decisions(items)} | {totals[len(totals) // 2]:.3f} | "
                   + " | ".join(mean(items, k) for k in ("relevance", "actionability", "depth", "authority")) + " |")
    out += ["", "Threshold sweep (share of items whose total reaches the bar):", "",
            "| bar | held-out notes | off-topic |", "|---:|---:|---:|"]
    for bar in (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65):
        on = sum(r["total"] >= bar for r in rows) / n
        of = sum(o["total"] >= bar for o in off) / max(1, len(off))
        out.append(f"| {bar:.2f} | {on:.1%} | {of:.1%} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.intake", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default="/tmp/vaultseek-intake-bench")
    parser.add_argument("--holdout", type=float, default=0.1, help="the share of each folder's notes held out (0–1)")
    parser.add_argument("--offtopic", type=int, default=300)
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--out", help="also write the tables to this file")
    parser.add_argument("--json", help="write the raw rows to this file")
    args = parser.parse_args(argv)
    if not 0 < args.holdout < 1:
        parser.error("--holdout is the share of each folder's notes held out, between 0 and 1 (e.g. 0.1)")
    data, work = Path(args.data), Path(args.workdir)
    if not (data / "tldr" / "pages").is_dir():
        print(f"no data at {data}", file=sys.stderr)
        return 2
    with (data / "ir" / "scifact" / "corpus.jsonl").open(encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle]
    offtopic = [f"# {d['title']}\n\n{d['text']}" for d in sorted(docs, key=lambda d: d["_id"])[: args.offtopic]]
    vaults = {
        "tldr-pages (English, by platform folder)": {
            p.name: p for p in sorted((data / "tldr" / "pages").iterdir()) if p.is_dir()},
        "PowerShell 7.5 reference (by module folder)": {
            p.name: p for p in sorted((data / "powershell-docs" / "reference" / "7.5").iterdir()) if p.is_dir()},
    }  # fmt: skip
    report = []
    raw = {}
    for number, (label, folders) in enumerate(vaults.items()):
        vault = work / f"vault{number}"
        held = build_vault(folders, vault, args.holdout)
        result = run_vault(label, vault, work / f"vault{number}.db", held, offtopic)
        raw[label] = result
        report.append(render(result))
        print(report[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(report), "utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(raw, default=list), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
