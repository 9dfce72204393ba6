"""``python -m benchmarks.golden``: the judged question sets, one table.

Each ``benchmarks/golden/<family>-<lang>.jsonl`` of the repository is a golden file (see
:mod:`vaultseek.evaluation.harness`), named by its set (the file name without ``.jsonl``) and
judged against the vault :data:`VAULTS` gives its family:

- ``tldr-<lang>``: the tldr pages of that language, ``<data>/tldr/pages.<lang>`` (English:
  ``<data>/tldr/pages``); indexed into ``<workdir>/<lang>.db``;
- ``psdocs-<lang>``: the PowerShell conceptual docs, in English whatever the language asked in,
  ``<data>/powershell-docs/reference/docs-conceptual``; one index, ``<workdir>/psdocs.db``,
  for every language;
- ``psref-<lang>``: the PowerShell 7.5 cmdlet reference (a page per cmdlet and the ``about_``
  topics), in English whatever the language asked in, ``<data>/powershell-docs/reference/7.5``;
  one index, ``<workdir>/psref.db``, for every language.

Every set's vault is indexed by the real engine — a rerun finds the index there and only syncs
it, which on unchanged pages takes seconds — and evaluated
with :func:`vaultseek.evaluation.harness.evaluate_golden` on one split of the file. The table
has a row per set and mode: Recall@10 over all the set's queries and per query kind,
Answer@10 (the question's best-graded page in the first ten) overall and for paraphrase
questions, nDCG@10, nDCG@5 and Hit@1 (the first result is a page judged relevant); each row
scores the pages once each (the note view), and a ``· chunks`` row under it the raw chunk list
of the same searches.

    python -m benchmarks.golden --data ../shared/data --split tune [--sets psref-en,tldr-de] \\
        [--workdir /tmp/vaultseek-golden] [--syntax] [--json FILE] [--out FILE]

``--sets`` takes set names; a bare language (``de``) names the tldr set, ``tldr-de``.

The split defaults to ``tune``: settings are chosen on it, and the ``test`` split is measured
once, on purpose, by naming it. ``--out`` writes a Markdown section (the command at its top)
for ``docs/quality.md``; ``--json`` writes every report in full, per-query nDCG@10 included.
``--golden-dir`` reads the sets from another folder (the tests use it); ``--modes`` picks the
modes, by default every mode :func:`vaultseek.evaluation.harness.configurations` knows;
``--syntax`` adds the hybrid row with the query syntax read (the others read the questions as
prose: :data:`vaultseek.evaluation.harness.SYNTAX`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from vaultseek import __version__
from vaultseek.cli.terminal import ProgressBar
from vaultseek.engine import open_index
from vaultseek.errors import ConfigError, VaultseekError
from vaultseek.evaluation.harness import (
    DEEP,
    DEPTH,
    MODES,
    NO_DEEP,
    SYNTAX,
    EvalReport,
    configurations,
    evaluate_golden,
)

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
"""Where the judged sets live: ``benchmarks/golden/`` beside this module."""
VAULTS: dict[str, Callable[[str], tuple[str, str]]] = {
    "tldr": lambda lang: ("tldr/pages" if lang == "en" else f"tldr/pages.{lang}", lang),
    "psdocs": lambda lang: ("powershell-docs/reference/docs-conceptual", "psdocs"),
    "psref": lambda lang: ("powershell-docs/reference/7.5", "psref"),
}
"""A set's family (its name before ``-<lang>``) → by the set's language, its vault under
``--data`` and the name of its index in ``--workdir``. The tldr pages are translated, so each
language has its own vault; the PowerShell docs (the conceptual ones and the cmdlet reference)
are English, asked about in every language, so each family's sets share one index."""
KIND_ORDER = ("paraphrase", "topic", "identifier", "keyword", "question", "title")
"""The kinds the sets are written with, in the order the table shows them; any other kind a
set has follows, by name."""


def find_sets(folder: Path, names: list[str] | None = None) -> dict[str, Path]:
    """Set name → golden file: the ones named (in that order; a bare language names the tldr
    set), else every set of a family in :data:`VAULTS`, by family, English first."""
    if not folder.is_dir():
        raise ConfigError(
            f"no golden sets folder {folder}",
            hint="it is benchmarks/golden in a source checkout; pass --golden-dir elsewhere",
        )
    found = {p.stem: p for p in folder.glob("*-*.jsonl") if p.stem.split("-")[0] in VAULTS}
    if not found:
        raise ConfigError(f"no <family>-<lang>.jsonl in {folder}", hint=f"families: {', '.join(VAULTS)}")
    if names is None:
        return {name: found[name] for name in sorted(found, key=_set_order)}
    names = [n if n in found or f"tldr-{n}" not in found else f"tldr-{n}" for n in names]
    unknown = [n for n in names if n not in found]
    if unknown:
        raise ConfigError(f"no golden set for {', '.join(unknown)} in {folder}", hint=f"sets there: {', '.join(sorted(found))}")
    return {name: found[name] for name in names}


def _set_order(name: str) -> tuple[int, bool, str]:
    """Sets by family in :data:`VAULTS` order, then English first, then by language."""
    family, _, lang = name.partition("-")
    return list(VAULTS).index(family), lang != "en", lang


def vault_of(data: Path, name: str) -> tuple[Path, str]:
    """The vault a set (``tldr-de``, ``psdocs-ja``, ``psref-zh``) is judged against, under
    ``data``, and the name its index is kept under in a workdir (``de``, ``psdocs``, ``psref``)."""
    family, _, lang = name.partition("-")
    if family not in VAULTS or not lang:
        raise ConfigError(f"no vault for the set {name!r}", hint=f"a set is named <family>-<lang>, families: {', '.join(VAULTS)}")
    folder, db = VAULTS[family](lang)
    vault = data / folder
    if not vault.is_dir():
        raise ConfigError(f"no vault {vault} for the {name} set", hint=f"pass --data, the folder holding {folder.split('/')[0]}/")
    return vault, db


def measure(
    index_name: str, golden: Path, vault: Path, workdir: Path, *, split: str | None, modes: list[str], bar: ProgressBar,
    syntax: bool = False,
) -> tuple[EvalReport, float, bool]:  # fmt: skip
    """Index (or catch up) the set's vault in ``workdir/<index_name>.db`` and evaluate it;
    returns the report, the sync's seconds and whether an index was already there."""
    db = workdir / f"{index_name}.db"
    reused = db.is_file()
    with open_index(vault, db=db, create=True) as index:
        try:
            seconds = index.sync(progress=bar, remember=False).seconds
            chosen = configurations(modes, ())
            deep = index.deep_status()
            if deep is not None and deep.embedded and "hybrid" in modes:  # what the deep tier adds
                chosen = (*chosen[:-1], DEEP, chosen[-1], NO_DEEP)
            if syntax and "hybrid" in modes:
                chosen = (*chosen, SYNTAX)
            report = evaluate_golden(index, golden, split=split, chosen=chosen, progress=bar)
        finally:
            bar.clear()
    return report, seconds, reused


def kinds_of(reports: dict[str, EvalReport]) -> list[str]:
    present = {kind for report in reports.values() for r in report.results for kind in r.by_kind}
    return [k for k in KIND_ORDER if k in present] + sorted(present - set(KIND_ORDER))


def table_rows(reports: dict[str, EvalReport]) -> list[list[str]]:
    """A header, then a row per set and mode: queries, Recall@10, per-kind Recall@10, Answer@10
    overall and for paraphrase questions (when there are any), nDCG@10, nDCG@5, Hit@1 — the
    notes each once, as the note view shows them — and below it a ``· chunks`` row with the
    same figures over the raw chunk list, where a note's second section takes a place and
    counts nothing."""
    kinds = kinds_of(reports)
    answer_kinds = [k for k in kinds if k == "paraphrase"]
    head = [
        "set", "mode", "pages", "queries", "Recall@10", *(f"R@10 {k}" for k in kinds),
        "Answer@10", *(f"A@10 {k}" for k in answer_kinds), "nDCG@10", "nDCG@5", "Hit@1",
    ]  # fmt: skip
    rows = [head]
    for name, report in reports.items():
        for result in report.results:
            levels = [(result.configuration.label, result.scores, result.by_kind)]
            if result.chunk_scores:  # the raw chunk list: a note's second section counts nothing
                levels.append((f"{result.configuration.label} · chunks", result.chunk_scores, result.chunk_by_kind))
            for label, overall, by_kind in levels:
                per_kind = []
                for kind in kinds:
                    scores = by_kind.get(kind)
                    per_kind.append(f"{scores.scores['Recall@10']:.3f} ({scores.queries})" if scores else "—")
                answers = []
                for kind in answer_kinds:
                    scores = by_kind.get(kind)
                    answers.append(f"{scores.scores['Answer@10']:.3f}" if scores else "—")
                rows.append([
                    name, label, f"{report.documents:,}", str(report.queries),
                    f"{overall['Recall@10']:.3f}", *per_kind, f"{overall['Answer@10']:.3f}", *answers,
                    f"{overall['nDCG@10']:.3f}", f"{overall['nDCG@5']:.3f}", f"{overall['Hit@1']:.3f}",
                ])  # fmt: skip
    return rows


def render_text(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def render_markdown(
    reports: dict[str, EvalReport], rows: list[list[str]], command: str, split: str | None, seconds: float
) -> str:
    """A section for ``docs/quality.md``: the command, what was measured, the table, notices."""
    first = next(iter(reports.values()))
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"Python {platform.python_version()} on a {os.cpu_count() or 1}-core machine"
    which = f"the `{split}` split" if split else "every line"
    parts = [
        f"## Judged sets ({split} split)" if split else "## Judged sets",
        "",
        f"```\n{command}\n```",
        "",
        (
            f"Run {when}: vaultseek {__version__}, model `{first.model}`, default fusion "
            f"`{first.default_fusion}`, {machine}; {seconds:.0f} s in all."
        ),
        "",
        (
            f"Each set is `benchmarks/golden/<set>.jsonl` ({which}): a `tldr-<lang>` set is judged "
            "against the tldr pages of its language (`tldr/pages.<lang>`; English: `tldr/pages`), a "
            "`psdocs-<lang>` set against the English PowerShell docs "
            "(`powershell-docs/reference/docs-conceptual`), a `psref-<lang>` set against the English "
            "PowerShell 7.5 cmdlet reference (`powershell-docs/reference/7.5`), each indexed as a vault. "
            f"k = candidates = {DEPTH}; Recall@10, nDCG@10 and nDCG@5 as in \"How it is measured\"; "
            "the R@10 columns by kind are Recall@10 over that kind's queries (how many in brackets); "
            "Answer@10 is the share of questions whose best-graded page is in the first ten; Hit@1 the "
            "share whose first result is a page judged relevant (of any grade). "
            "A `· chunks` row scores the raw chunk list of the same search, where a page's second "
            "chunk takes a place and counts nothing."
        ),
        "",
        "| " + " | ".join(rows[0]) + " |",
        "|---|---|" + "---:|" * (len(rows[0]) - 2),
        *("| " + " | ".join(row) + " |" for row in rows[1:]),
    ]
    parts += [f"\nNote ({name}): {n}" for name, report in reports.items() for n in report.notices]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.golden", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", default="../shared/data", help="the folder holding tldr/ and powershell-docs/ (default: %(default)s)"
    )
    parser.add_argument("--split", default="tune", help='the golden lines whose "split" is this (default: %(default)s)')
    parser.add_argument("--sets", metavar="LIST", help="set names, e.g. psref-en,psdocs-de; de is tldr-de (default: every set)")
    parser.add_argument("--modes", metavar="LIST", help=f"default: {','.join(MODES)}")
    parser.add_argument("--workdir", metavar="DIR", help="keep the indexes here (<lang>.db, psdocs.db, psref.db), reused by later runs")
    parser.add_argument("--golden-dir", metavar="DIR", default=str(GOLDEN_DIR), help="where the <family>-<lang>.jsonl sets are")
    parser.add_argument("--syntax", action="store_true", help="also the hybrid row with the query syntax read")
    parser.add_argument("--json", metavar="FILE", help="also write every report in full, per query included")
    parser.add_argument("--out", metavar="FILE", help="also write the table as a Markdown section")
    args = parser.parse_args(argv)
    command = shlex.join(["python", "-m", "benchmarks.golden", *(sys.argv[1:] if argv is None else argv)])
    started = time.perf_counter()
    scratch = None if args.workdir else tempfile.TemporaryDirectory(prefix="vaultseek-golden-")
    workdir = Path(scratch.name if scratch else args.workdir).expanduser()
    reports: dict[str, EvalReport] = {}
    bar = ProgressBar()
    try:
        names = [n.strip() for n in args.sets.split(",") if n.strip()] if args.sets else None
        modes = [n.strip() for n in args.modes.split(",") if n.strip()] if args.modes else list(MODES)
        sets = find_sets(Path(args.golden_dir), names)
        workdir.mkdir(parents=True, exist_ok=True)
        for name, golden in sets.items():
            t = time.perf_counter()
            vault, db = vault_of(Path(args.data), name)
            report, synced, reused = measure(db, golden, vault, workdir, split=args.split, modes=modes, bar=bar, syntax=args.syntax)
            reports[name] = report
            built = f"index reused, synced in {synced:.1f} s" if reused else f"indexed in {synced:.1f} s"
            sys.stderr.write(
                f"{name}: {report.documents:,} pages, {report.queries} queries; {built}; "
                f"{time.perf_counter() - t:.0f} s in all\n"
            )
    except VaultseekError as exc:
        sys.stderr.write(f"error: {exc.message}\n" + (f"hint: {exc.hint}\n" if exc.hint else ""))
        return exc.exit_code
    finally:
        if scratch:
            scratch.cleanup()
    rows = table_rows(reports)
    sys.stdout.write(render_text(rows) + "\n")
    for name, report in reports.items():
        sys.stdout.writelines(f"note ({name}): {n}\n" for n in report.notices)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_markdown(reports, rows, command, args.split, time.perf_counter() - started), "utf-8")
        sys.stderr.write(f"wrote {out}\n")
    if args.json:
        raw = {name: report.to_dict(per_query=True) for name, report in reports.items()}
        Path(args.json).write_text(json.dumps(raw, indent=1, ensure_ascii=False), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
