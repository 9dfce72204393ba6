"""Judged query sets read from disk: a BEIR folder's queries and qrels, a golden file's lines."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from . import metrics


@dataclass(frozen=True, slots=True)
class EvalQuery:
    id: str
    text: str
    judgments: dict[str, float]
    """Document id (BEIR) or vault-relative path (golden file) → grade; > 0 is relevant."""
    kind: str | None = None
    """The golden line's ``"kind"`` label, if it has one; BEIR queries have none."""


def _read_lines(path: Path, what: str) -> Iterator[tuple[int, str]]:
    """Numbered non-blank lines of a UTF-8 text file; an unreadable file is a ConfigError."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} {path} is not UTF-8 text") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, line


def _json_objects(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in _read_lines(path, what):
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{path}, line {number}: not valid JSON ({exc})") from None
        if not isinstance(item, dict):
            raise ConfigError(f"{path}, line {number}: expected a JSON object")
        yield number, item


def _grade(value: Any, where: str) -> float:
    if not isinstance(value, bool) and isinstance(value, (int, float, str)):
        try:
            return float(value)
        except ValueError:
            pass
    raise ConfigError(f"{where}: the grade {value!r} is not a number")


def read_qrels(path: Path) -> dict[str, dict[str, float]]:
    """``query-id<TAB>corpus-id<TAB>score`` lines after a header → query → document → grade.

    The header is required: a file without one would lose its first judgment to any reader
    that skips line one, so its absence is reported rather than guessed around."""
    qrels: dict[str, dict[str, float]] = {}
    for position, (number, line) in enumerate(_read_lines(path, "qrels file")):
        cells = [cell.strip() for cell in line.split("\t")]
        if len(cells) != 3:
            raise ConfigError(f"{path}, line {number}: expected 3 tab-separated fields, found {len(cells)}")
        if position == 0:
            try:
                float(cells[2])
            except ValueError:
                continue  # the header
            raise ConfigError(f"{path} has no header line", hint="BEIR qrels start with: query-id<TAB>corpus-id<TAB>score")
        qrels.setdefault(cells[0], {})[cells[1]] = _grade(cells[2], f"{path}, line {number}")
    return qrels


def _split_file(folder: Path, stem: str, suffix: str, split: str | None) -> Path | None:
    """``<stem>_<split><suffix>``, BEIR's own ``<stem>/<split><suffix>``, then the plain file:
    for the default or test split, and for queries of any split (BEIR shares one queries file
    between splits; the qrels decide which queries belong to a split)."""
    candidates = [folder / f"{stem}_{split}{suffix}", folder / stem / f"{split}{suffix}"] if split else []
    if not split or split == "test" or stem == "queries":
        candidates.append(folder / f"{stem}{suffix}")
    return next((p for p in candidates if p.is_file()), None)


@dataclass(frozen=True, slots=True)
class BeirSet:
    """The judged queries of one split of a BEIR folder (its corpus is read when indexed)."""

    name: str
    folder: Path
    split: str | None
    queries: tuple[EvalQuery, ...]
    skipped_queries: int
    notices: tuple[str, ...]


def load_beir(folder: Path | str, split: str | None = None) -> BeirSet:
    root = Path(folder).expanduser().resolve()
    if not root.is_dir():
        raise ConfigError(f"BEIR folder {root} does not exist")
    if not (root / "corpus.jsonl").is_file():
        raise ConfigError(f"{root} has no corpus.jsonl", hint="expected the BEIR layout")
    qrels_path = _split_file(root, "qrels", ".tsv", split)
    queries_path = _split_file(root, "queries", ".jsonl", split)
    if qrels_path is None:
        found = ", ".join(sorted(p.name for p in root.glob("qrels*.tsv"))) or "none"
        raise ConfigError(f"{root} has no qrels for the {split or 'default'} split", hint=f"qrels files there: {found}")
    if queries_path is None:
        raise ConfigError(f"{root} has no queries.jsonl")
    qrels = read_qrels(qrels_path)
    texts: dict[str, str] = {}
    for number, item in _json_objects(queries_path, "queries file"):
        if "_id" not in item or not isinstance(item.get("text"), str):
            raise ConfigError(f'{queries_path}, line {number}: needs "_id" and a "text" string')
        texts[str(item["_id"])] = item["text"]
    queries = tuple(
        EvalQuery(qid, texts[qid], judged)
        for qid, judged in qrels.items()
        if qid in texts and metrics.has_relevant(judged)
    )
    missing = [qid for qid in qrels if qid not in texts]
    notices = [f"{len(missing)} judged query id(s) are not in {queries_path.name}, e.g. {missing[0]}"] if missing else []
    if not queries:
        raise ConfigError(f"{qrels_path.name} judges no query of {queries_path.name} to have a relevant document")
    return BeirSet(root.name, root, split, queries, len(qrels) - len(queries), tuple(notices))


def load_golden(path: Path | str, split: str | None = None) -> tuple[list[EvalQuery], int]:
    """A golden file's queries — only the lines whose ``"split"`` is ``split`` when one is named
    — and how many of those were left out for having no relevant path. Every line is checked
    whatever the split, so a malformed line is reported before it is ever selected."""
    source = Path(path).expanduser()
    queries: list[EvalQuery] = []
    skipped, seen, splits = 0, set(), set()
    for number, item in _json_objects(source, "golden file"):
        where = f"{source}, line {number}"
        query, relevant = item.get("query"), item.get("relevant")
        kind, line_split = item.get("kind"), item.get("split")
        if not isinstance(query, str):
            raise ConfigError(f'{where}: needs a "query" string')
        if not isinstance(relevant, dict):
            raise ConfigError(f'{where}: needs "relevant": {{"<path>": grade, ...}}')
        for key, value in (("kind", kind), ("split", line_split)):
            if value is not None and not (isinstance(value, str) and value.strip()):
                raise ConfigError(f'{where}: "{key}" must be a non-empty string, not {value!r}')
        query_id = str(item.get("id", number))
        if query_id in seen:
            raise ConfigError(f"{where}: the id {query_id!r} is used twice")
        seen.add(query_id)
        judged = {_vault_path(p): _grade(g, where) for p, g in relevant.items()}
        splits.add(line_split)
        if split is not None and line_split != split:
            continue
        if metrics.has_relevant(judged):
            queries.append(EvalQuery(query_id, query, judged, kind))
        else:
            skipped += 1
    if split is not None and split not in splits:
        named = sorted(s for s in splits if s is not None)
        present = ", ".join(named) if named else 'none (no line has a "split")'
        raise ConfigError(f"golden file {source} has no line in the split {split!r}", hint=f"splits there: {present}")
    if not queries:
        within = f" in the split {split!r}" if split is not None else ""
        raise ConfigError(f"golden file {source} has no query with a relevant path{within}")
    return queries, skipped


def _vault_path(path: str) -> str:
    """How results name a note: vault-relative, forward slashes, no leading ``./``."""
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path

