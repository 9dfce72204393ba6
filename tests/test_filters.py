"""Search scopes (``SearchFilter``): applied before ranking, in both lists, request-local."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli
from vaultseek import Index, QueryError, open_index
from vaultseek.records import FieldComparison, SearchFilter
from vaultseek.search.filters import parse_filter, parse_time, parse_where
from vaultseek.storage.scope import _AS_NUMBER, _AS_TIME
from vaultseek.storage.vectors import VectorIndex
from vaultseek.text.keys import field_value


@pytest.fixture
def scoped_vault(vault: Path, write: Callable[..., Path]) -> Path:
    # The same topic in many places, so an unscoped top-k is dominated by one folder.
    for i in range(12):
        write(f"work/projects/tokens{i}.md", f"---\ntags: [security/oauth]\n---\n# Tokens {i}\n\nRotate refresh tokens every day, token rotation plan {i}.\n")
    filler = " ".join(f"garden{i} tomato{i} watering{i}" for i in range(60))
    write("home/tokens.md", f"---\ntags: [home]\n---\n# Home\n\n{filler} rotate the refresh tokens. {filler}\n")
    write("work_other/tokens.md", "# Other\n\nRotate refresh tokens in the other folder, token rotation.\n")
    write("notes/plain.txt", "Rotate refresh tokens: a plain text document about token rotation.\n")
    return vault


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_scope_applies_before_ranking(scoped_vault: Path, mode: str) -> None:
    with open_index(scoped_vault, create=True) as index:
        index.sync()
        unscoped = index.search("rotate refresh tokens", mode=mode, k=3)
        assert "home/tokens.md" not in {r.path for r in unscoped.results}
        home = index.search("rotate refresh tokens", mode=mode, k=3, filters=SearchFilter(folders=("home",)))
        assert [r.path for r in home.results] == ["home/tokens.md"]
        # "work" is a folder, not a prefix: work_other/ stays out.
        work = index.search("rotate refresh tokens", mode=mode, k=20, filters=SearchFilter(folders=("work",)))
        assert len(work.results) == 12 and all(r.path.startswith("work/") for r in work.results)


def test_a_single_core_answers_as_the_vector_workers_do(scoped_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On two or more cores the vector side runs on a worker thread beside BM25; on one it runs
    inline. Both give the same responses, scoped or not, and a worker's error still surfaces."""
    from vaultseek.search import hybrid, workers

    queries = [("rotate refresh tokens", None), ("rotate refresh tokens", SearchFilter(folders=("work",))), ("tomato", None)]
    with open_index(scoped_vault, create=True) as index:
        index.sync()
        threaded = [index.search(q, k=5, filters=s) for q, s in queries]
        monkeypatch.setattr(workers, "cores", lambda: 1)
        inline = [index.search(q, k=5, filters=s) for q, s in queries]
        assert threaded == inline and all(r.results for r in inline)
        monkeypatch.undo()

        def broken(*_args: object) -> None:
            raise RuntimeError("scan failed")

        monkeypatch.setattr(hybrid, "scan_query", broken)
        with pytest.raises(RuntimeError, match="scan failed"):
            index.search("rotate refresh tokens")


@contextmanager
def _statements(index: Index) -> Iterator[list[str]]:
    """The SQL statements the index's connection runs meanwhile."""
    seen: list[str] = []

    def trace(_cursor: Any, sql: str, _bindings: Any) -> bool:
        seen.append(sql)
        return True

    index.conn.exec_trace = trace
    try:
        yield seen
    finally:
        index.conn.exec_trace = None


def test_a_scope_is_read_once_while_the_index_is_unchanged(scoped_vault: Path, write: Callable[..., Path]) -> None:
    """A filter's files are listed by one query the first time it is used; later searches under
    it (a session, a daemon, an agent narrowing by folder or tag) read no file, tag or
    frontmatter row for it — no join to the files per full-text match, no file list for the
    vectors — and answer alike. After the index changes, the scope is read again and sees it."""
    scope = SearchFilter(tags=("security",), folders=("work",))
    with open_index(scoped_vault, create=True) as index:
        index.sync()
        first = index.search("rotate refresh tokens", k=20, filters=scope)
        with _statements(index) as seen:
            again = index.search("rotate refresh tokens", k=20, filters=scope)
            bm25 = index.search("rotate refresh tokens", mode="bm25", k=20, filters=scope)
            vector = index.search("rotate refresh tokens", mode="vector", k=20, filters=scope)
        assert [r.path for r in again.results] == [r.path for r in first.results]
        assert len(first.results) == 12 and {r.path for r in bm25.results} == {r.path for r in vector.results} == {r.path for r in first.results}
        assert [sql for sql in seen if "m.file_id = f.id" in sql or "f.path >= ?" in sql] == []
        write("work/late.md", "---\ntags: [security]\n---\n# Late\n\nRotate refresh tokens on Fridays.\n")
        index.sync()
        with _statements(index) as seen:
            later = index.search("rotate refresh tokens", k=20, filters=scope)
        assert "work/late.md" in {r.path for r in later.results}
        assert len([sql for sql in seen if "m.file_id = f.id" in sql or "f.path >= ?" in sql]) == 1


def test_scope_fields_paths_tags_kinds_and_empty(scoped_vault: Path) -> None:
    with open_index(scoped_vault, create=True) as index:
        index.sync()

        def paths(scope: SearchFilter) -> set[str]:
            return {r.path for r in index.search("token rotation", k=50, filters=scope).results}

        assert paths(SearchFilter(paths=("home/tokens.md", "notes/plain.txt"))) == {"home/tokens.md", "notes/plain.txt"}
        assert len(paths(SearchFilter(tags=("security",)))) == 12  # nested tag security/oauth
        # A hand-built filter is normalised as a parsed one is: "#" and case do not count.
        assert len(paths(SearchFilter(tags=("#Security/OAuth",)))) == 12
        assert len(paths(parse_filter({"tags": ["#Security/OAuth"]}))) == 12
        assert paths(SearchFilter(tags=("secur",))) == set()  # a prefix of a word is not a parent tag
        assert paths(SearchFilter(kinds=("txt",))) == {"notes/plain.txt"}
        assert paths(SearchFilter(kinds=("txt",), folders=("home",))) == set()  # fields AND
        assert paths(SearchFilter(paths=())) == set()  # an empty category matches nothing
        assert len(paths(SearchFilter(folders=("",)))) == 15  # the vault root is everything
        assert len(paths(SearchFilter())) == 15


def test_scope_with_sql_wildcards_in_names(vault: Path, write: Callable[..., Path]) -> None:
    write("a_b/x.md", "# X\n\nwildcard underscore folder text here.\n")
    write("axb/y.md", "# Y\n\nwildcard underscore folder text here.\n")
    with open_index(vault, create=True) as index:
        index.sync()
        hits = index.search("wildcard underscore", k=10, filters=SearchFilter(folders=("a_b",)))
        assert [r.path for r in hits.results] == ["a_b/x.md"]


def test_a_filter_value_no_utf8_can_hold_matches_nothing_instead_of_failing(scoped_vault: Path) -> None:
    """A lone surrogate (a non-UTF-8 byte in a command-line argument, ``\\ud800`` in JSON) in a
    filter's text reached the database and failed the search with an internal error; the
    query's own text was already made encodable."""
    with open_index(scoped_vault, create=True) as index:
        index.sync()
        for filters in ({"folders": ["\ud800"]}, {"tags": ["a\udfff"]}, {"paths": ["\ud800.md"]},
                        {"where": ["\ud800:x"]}, {"where": ["status:\ud800"]}, {"where": {"\ud800": "x"}},
                        {"path_contains": ["\ud800"]}, {"name_contains": ["\ud800"]}):  # fmt: skip
            assert not index.search("rotate refresh tokens", filters=filters).results, filters
    cli = run_cli("search", "--vault", str(scoped_vault), "rotate refresh tokens", "--folder", "\udcff")  # the byte 0xff
    assert cli.returncode == 0 and "unexpected" not in cli.stderr and "no folder '?'" in cli.stdout + cli.stderr


def test_parse_filter_validates() -> None:
    assert parse_filter(None).unrestricted
    assert parse_filter({"folders": "/work/"}).folders == ("work",)
    assert parse_filter({"kinds": ["pdf"]}).to_dict() == {"kinds": ["pdf"]}
    with pytest.raises(QueryError, match="unknown") as unknown:
        parse_filter({"color": ["red"]})
    assert unknown.value.hint is not None and "where" in unknown.value.hint
    with pytest.raises(QueryError, match="list of strings"):
        parse_filter({"tags": [1]})


def test_vector_rows_keep_k_full_and_ordered() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(50, 8)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    index = VectorIndex.from_floats(np.arange(1, 51), matrix)
    scan = index.scan(matrix[0])
    even = np.flatnonzero(index.ids % 2 == 0)
    hits = index.top(scan, 10, rows=even)
    assert len(hits) == 10 and all(i % 2 == 0 for i, _s in hits)
    full = [h for h in index.search(matrix[0], 50) if h[0] % 2 == 0][:10]
    assert hits == full
    assert index.top(scan, 5, rows=np.array([], dtype=np.int64)) == []
    # The probe a filtered search starts from holds every row that can be among the k best,
    # and every row it leaves out scores below its floor.
    best, floor = index.best_rows(scan, 7)
    assert set(index.ids[best]) >= {i for i, _s in index.search(matrix[0], 7)}
    assert index.search(matrix[0], 7)[-1][1] >= floor


def test_files_and_forget(scoped_vault: Path) -> None:
    with open_index(scoped_vault, create=True) as index:
        index.sync()
        rows = {r["path"]: r for r in index.files()}
        assert rows["notes/plain.txt"]["kind"] == "txt" and rows["notes/plain.txt"]["chunks"] == 1
        assert rows["home/tokens.md"]["tags"] == ["home"]
        index.forget("home/tokens.md")
        assert "home/tokens.md" not in {r["path"] for r in index.files()}
        assert index.store.integrity_problems() == []


# -- frontmatter, tags, kinds, dates: the rules of filters.py, end to end -------------------

QUERY = "quarterly report deadline"
LONG = "a long description " * 20


@pytest.fixture
def meta_vault(vault: Path, write: Callable[..., Path]) -> Path:
    """Four notes with the same text and different metadata, so a filter alone decides."""
    body = f"# Report\n\nThe {QUERY} is near; file the {QUERY} on time.\n"
    write("tasks/a.md", f"""---
Status: Done
priority: 2
draft: true
projects: [Alpha, beta]
due: 2026-01-31
author: {{name: Ada Lovelace}}
tags: [work/urgent]
description: {LONG}
---
{body}""")
    write("tasks/b.md", f"---\nstatus: open\npriority: 2.0\ndraft: false\nprojects: gamma\n---\n{body}#Ärger\n")
    write("tasks/c.md", f"---\nstatus: \"DONE \"\npriority: \"10\"\nÄrger: Groß\n---\n{body}#Work/Later/Someday\n")
    write("archive/d.md", f"{body}#work\n")
    write("archive/e.txt", f"{QUERY}: a plain text document.\n")
    return vault


@pytest.fixture
def index(meta_vault: Path) -> Iterator[Index]:
    """``meta_vault``, indexed."""
    with open_index(meta_vault, create=True) as opened:
        opened.sync()
        yield opened


def found(index: object, scope: object, mode: str = "hybrid") -> set[str]:
    return {r.path for r in index.search(QUERY, k=50, mode=mode, filters=scope).results}  # type: ignore[attr-defined]


A, B, C, D, E = "tasks/a.md", "tasks/b.md", "tasks/c.md", "archive/d.md", "archive/e.txt"


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (["status:done"], {A, C}),  # keys and values case-insensitive, whitespace trimmed
        (["STATUS = Done"], {A, C}),  # "=" as well as ":"
        (["priority:2"], {A, B}),  # 2 and 2.0 are one number
        (["priority=2.0"], {A, B}),
        (["priority:10"], {C}),  # a quoted "10" is the number 10
        (["draft:true"], {A}),
        (["draft:false"], {B}),
        (["draft"], {A, B}),  # a bare key: set, whatever its value (false is a value)
        (["projects:beta"], {A}),  # list membership
        (["projects:ALPHA"], {A}),
        (["projects:gamma"], {B}),  # a scalar where others have lists
        (["tags:work/urgent"], {A}),  # frontmatter tags as written
        (["due:2026-01-31"], {A}),  # a YAML date compares as written
        (["author.name:ada lovelace"], {A}),  # nested keys joined with dots
        (["description"], {A}),  # too long to compare, but present
        ([f"description:{LONG}"], set()),
        (["ärger:GROSS"], {C}),  # Unicode keys and values, case-folded (ß = ss)
        (["status:done", "status:open"], {A, B, C}),  # one key: alternatives
        (["status:done", "priority:2"], {A}),  # different keys: all must hold
        (["status:archived"], set()),
        (["nosuchkey"], set()),
    ],
)
def test_frontmatter_conditions(index: Index, where: list[str], expected: set[str]) -> None:
    assert found(index, {"where": where}) == expected


def test_frontmatter_object_form_and_every_mode(index: Index) -> None:
    assert found(index, {"where": {"priority": 2, "draft": True}}) == {A}
    assert found(index, {"where": {"status": ["done", "open"]}}) == {A, B, C}
    for mode in ("bm25", "vector", "hybrid"):
        assert found(index, {"where": ["status:done"]}, mode) == {A, C}
    assert index.search(QUERY, filters={"where": ["status:archived"]}).results == ()


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["work"], {A, C, D}),  # #work, #work/urgent, #Work/Later/Someday
        (["#WORK"], {A, C, D}),
        (["work/urgent"], {A}),
        (["Work/Later"], {C}),  # a middle level is a parent too
        (["work/later/someday/"], {C}),
        (["wor"], set()),  # a prefix of a name is not a parent
        (["work/urgent/x"], set()),  # a child does not match its parent
        (["ärger"], {B}),  # Unicode, case-folded
        (["work/urgent", "ärger"], {A, B}),  # alternatives
    ],
)
def test_nested_tags(index: Index, tags: list[str], expected: set[str]) -> None:
    assert found(index, {"tags": tags}) == expected


def test_kinds_folders_and_combinations(index: Index) -> None:
    assert found(index, {"kinds": ["md"]}) == {A, B, C, D}  # md, markdown: notes
    assert found(index, {"kinds": [".TXT"]}) == {E}
    assert found(index, {"kinds": ["note", "txt"]}) == {A, B, C, D, E}
    assert found(index, {"kinds": ["pdf"]}) == set()
    assert found(index, {"folders": ["/archive/"]}) == {D, E}
    assert found(index, {"folders": ["tasks"], "tags": ["work"]}) == {A, C}
    assert found(index, {"folders": ["tasks"], "tags": ["work"], "where": ["status:done"], "kinds": ["note"]}) == {A, C}
    assert found(index, {"folders": ["archive"], "where": ["status:done"]}) == set()
    assert found(index, {"paths": [B], "where": ["status:open"]}) == {B}


def _stamp(path: Path, moment: datetime) -> None:
    os.utime(path, ns=(int(moment.timestamp() * 1e9),) * 2)


def test_modified_after_and_before_at_the_boundaries(meta_vault: Path) -> None:
    midnight = datetime(2026, 1, 31).astimezone()  # local midnight, as a bare date means
    _stamp(meta_vault / A, midnight)
    _stamp(meta_vault / B, midnight - timedelta(seconds=1))
    _stamp(meta_vault / C, midnight + timedelta(days=1))
    _stamp(meta_vault / D, datetime(2025, 6, 1).astimezone())
    _stamp(meta_vault / E, datetime(2025, 6, 1).astimezone())
    with open_index(meta_vault, create=True) as index:
        index.sync()
        index.clock = lambda: (midnight + timedelta(days=2)).timestamp()  # a fake "now"
        assert found(index, {"modified_after": "2026-01-31"}) == {A, C}  # inclusive
        assert found(index, {"modified_before": "2026-01-31"}) == {B, D, E}  # exclusive
        assert found(index, {"modified_after": "2026-01-31", "modified_before": "2026-02-01"}) == {A}
        assert found(index, {"modified_after": "2026-01"}) == {A, B, C}
        assert found(index, {"modified_before": "2026"}) == {D, E}
        assert found(index, {"modified_after": "2026-01-31T00:00:01"}) == {C}
        utc = midnight.astimezone(UTC).isoformat()
        assert found(index, {"modified_after": utc}) == {A, C}  # an explicit offset
        # Ages count back from the clock: now is 2026-02-02 00:00 local.
        assert found(index, {"modified_after": "2d"}) == {A, C}
        assert found(index, {"modified_after": "47h"}) == {C}
        assert found(index, {"modified_after": "1w"}) == {A, B, C}
        assert found(index, {"modified_after": "2 weeks", "modified_before": "1d"}) == {A, B}
        assert found(index, {"modified_after": "1y"}) == {A, B, C, D, E}
        assert found(index, {"modified_after": "yesterday"}) == {C}
        assert found(index, {"modified_after": "today"}) == set()
        assert found(index, {"modified_after": "1mo", "where": ["status:done"]}) == {A, C}


@pytest.mark.parametrize(
    ("scope", "message"),
    [
        ({"modified_after": "next tuesday"}, "cannot read"),
        ({"modified_after": "2026-13-45"}, "cannot read"),
        ({"modified_after": "3m"}, "cannot read"),  # minutes or months? neither
        ({"modified_before": 20260131}, "must be text"),
        ({"modified_after": "99999999d"}, "too far"),
        ({"modified_after": "2026-02-01", "modified_before": "2026-01-01"}, "no time is both"),
        ({"where": ["status:"]}, "has no value"),
        ({"where": [":done"]}, "needs a key"),
        ({"where": {"status": {"nested": 1}}}, "must be text"),
        ({"where": {"status": None}}, "must be text"),
        ({"where": 5}, "list of strings"),
        ({"tags": ["ok", 3]}, "list of strings"),
        ({"folders": ["a\x00b"]}, "NUL"),
        ({"tags": [f"t{i}" for i in range(201)]}, "at most 200"),
        ({"colour": ["red"]}, "unknown filter field"),
        ("folders=work", "must be an object"),
    ],
)
def test_bad_filters_are_query_errors_with_hints(sample_vault: Path, scope: object, message: str) -> None:
    with open_index(sample_vault, create=True) as index:
        index.sync()
        with pytest.raises(QueryError, match=message) as raised:
            index.search("tokens", filters=scope)  # type: ignore[arg-type]
        assert raised.value.exit_code == 2


def test_hostile_values_are_data_not_sql(index: Index) -> None:
    for scope in (
        {"folders": ["'; DROP TABLE files; --"]},
        {"tags": ["%"], "folders": ["_"]},
        {"where": ["status:%", "key' OR '1'='1:x"]},
        {"where": [f"status:{'x' * 10_000}"]},
        {"paths": ["../../etc/passwd"]},
        {"modified_after": "9999-12-31"},  # past what a 64-bit nanosecond count holds
        {"modified_before": "0001-01-02"},
    ):
        assert found(index, scope) == set()
    assert found(index, {"modified_before": "9999-12-31T23:59:59+00:00"}) == {A, B, C, D, E}
    assert index.store.integrity_problems() == [] and len(index.files()) == 5


def test_filter_round_trips_through_its_json_shape() -> None:
    scope = parse_filter(
        {"folders": ["work"], "tags": ["#A/B"], "kinds": ["PDF"], "where": ["Status:Done", "draft"],
         "modified_after": "2026-01-31", "modified_before": "2026-02-01T12:00+01:00",
         "path_contains": [" Daily\\Notes "], "name_contains": ["2026-"]}
    )  # fmt: skip
    assert scope.tags == ("a/b",) and scope.kinds == ("pdf",) and scope.where == (("status", "done"), ("draft", None))
    assert scope.path_contains == ("Daily/Notes",) and scope.name_contains == ("2026-",)
    assert parse_filter(scope.to_dict()) == scope
    assert not scope.unrestricted and parse_filter({"where": []}).where == ()


def test_a_filter_within_another_keeps_both(index: Index) -> None:
    """How a query's ``tag:x`` meets the request's filters: every file is inside both, even
    where the two name the same field (one tag, then another)."""
    tagged, folder = parse_filter({"tags": ["work"]}), parse_filter({"folders": ["tasks"]})
    both = tagged.within(folder)
    assert both.inside == folder and tagged.within(None) is tagged and SearchFilter().within(folder) is folder
    assert found(index, both) == {A, C} and found(index, tagged) == {A, C, D}
    assert found(index, tagged.within(parse_filter({"tags": ["work/urgent"]}))) == {A}  # both tags, not either
    chained = both.within(parse_filter({"kinds": ["txt"]}))
    assert chained.inside is not None and chained.inside.inside == parse_filter({"kinds": ["txt"]})
    assert found(index, chained) == set() and found(index, chained, mode="vector") == set()


def test_an_index_from_before_filters_gets_its_metadata_on_the_next_run(meta_vault: Path) -> None:
    with open_index(meta_vault, create=True) as index:
        index.sync()
        with index.conn:  # what an index built by the previous pipeline holds
            for table in ("frontmatter_fields", "file_tags", "file_names"):
                index.conn.execute(f"DELETE FROM {table}")
        index.store.set_meta({"pipeline_version": "2"})
        assert found(index, {"where": ["status:done"]}) == set()
        report = index.sync()
        assert report.updated == 5 and report.vectors_reused == report.chunks_written
        assert found(index, {"where": ["status:done"]}) == {A, C}
        assert found(index, {"tags": ["work"]}) == {A, C, D}


# -- the surfaces: CLI (and its daemon path in test_daemon.py), MCP in test_mcp.py, HTTP in
# -- test_study_library.py -----------------------------------------------------------------


def test_cli_filter_and_signal_flags(meta_vault: Path) -> None:
    assert run_cli("index", str(meta_vault), "--quiet").returncode == 0
    vault = ["--vault", str(meta_vault), "--json", "-k", "20"]
    narrowed = run_cli("search", QUERY, *vault, "--where", "status:done", "--tag", "work", "--folder", "tasks", "--kind", "md")
    assert narrowed.returncode == 0, narrowed.stderr
    assert {r["path"] for r in json.loads(narrowed.stdout)["results"]} == {A, C}
    either = run_cli("search", QUERY, *vault, "--where", "status:done", "--where", "status:open", "--after", "1d", "--before", "2999")
    assert {r["path"] for r in json.loads(either.stdout)["results"]} == {A, B, C}
    signals = run_cli("search", "c", *vault, "--title-match", "--recent", "--intent")
    body = json.loads(signals.stdout)
    assert body["results"][0]["path"] == C and set(body["results"][0]["sections"][0]["signals"]) == {"title", "recency"}
    text = run_cli("search", "c", "--vault", str(meta_vault), "--title-match", "--recent", "7", "-k", "1")
    assert "title match" in text.stdout and "recency ×" in text.stdout
    batch = "\n".join(json.dumps(line) for line in (
        {"id": "open", "query": QUERY, "filters": {"where": ["status:open"]}},
        {"id": "bad", "query": QUERY, "filters": {"where": ["status:"]}},
    ))  # fmt: skip
    lines = [json.loads(line) for line in run_cli("search", "--batch", "-", "--vault", str(meta_vault), stdin=batch).stdout.splitlines()]
    assert [r["path"] for r in lines[0]["results"]] == [B] and "has no value" in lines[1]["error"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--after", "2026-13-45"], "cannot read '2026-13-45' as a date"),
        (["--before", "soon"], "cannot read 'soon'"),
        (["--where", "status:"], "has no value"),
        (["--after", "2026-02-01", "--before", "2026-01-01"], "no time is both"),
        (["--recent", "often"], "--recent takes a half-life"),
        (["--where", "priority>high"], "not a number or a date"),
        (["--where", "a>>b"], "two operators"),
        (["--where", "rating>1e999"], "too large a number"),
    ],
)
def test_cli_bad_filters_are_one_line_and_exit_2(meta_vault: Path, flags: list[str], message: str) -> None:
    with open_index(meta_vault, create=True) as index:
        index.sync()
    result = run_cli("search", QUERY, "--vault", str(meta_vault), "--no-daemon", *flags)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "hint:" in result.stderr and "Traceback" not in result.stderr


# -- comparisons: key>value, key>=value, key<value, key<=value, key!=value -----------------


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time with an offset and daylight saving, so "local" is never confused with UTC
    (this process's SQLite and Python both read TZ)."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def cmp_vault(vault: Path, write: Callable[..., Path], new_york: None) -> Path:
    """One note per way a value can be written; the same text, so only the filter decides."""
    body = f"# Report\n\nThe {QUERY} is near; file the {QUERY} on time.\n"
    notes = {
        # a YAML date; a number; a YAML float; a time as text (YAML wants seconds for a timestamp)
        DATE: "created: 2024-03-05\npriority: 3\nrating: 4.5\ndue: 2025-01-31T10:00",
        # a partial date as text; UTC
        MONTH: 'created: "2024-03"\npriority: 1\nrating: 5\ndue: 2025-01-31T10:00:00Z',
        # a YAML datetime without an offset (local); a quoted number; a time with an offset
        TIME: 'created: 2024-03-05T10:00:00\npriority: "2"\nrating: 4.50\ndue: 2025-01-31 11:00:00+02:00',
        LIST: "created: [2024-03-05, 2024-06-01]\npriority: [1, 5]",  # lists never compare
        TEXT: "created: soon\npriority: high\nrating: 1e400",  # text (1e400 is text to YAML 1.1)
        YEAR: "created: 2024\npriority: -2\nrating: .inf",  # a number; YAML's infinity is text here
        ONE: "created: 2023-12-31T23:59:59\npriority: [4]",  # a list of one item is that item
        NONE: "status: open",
    }
    for path, meta in notes.items():
        write(path, f"---\n{meta}\n---\n{body}")
    write("c/plain.txt", f"{QUERY}: a plain text document.\n")
    return vault


DATE, MONTH, TIME, LIST, TEXT, YEAR, ONE, NONE = (
    f"c/{name}.md" for name in ("date", "month", "time", "list", "text", "year", "one", "none")
)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        # numbers as numbers: 3, 1, "2", -2, [4]; lists and text never
        (["priority<3"], {MONTH, TIME, YEAR}),
        (["priority<=3"], {MONTH, TIME, YEAR, DATE}),  # boundary: 3 <= 3
        (["priority>3"], {ONE}),  # boundary: 3 > 3 fails
        (["priority>=-2"], {DATE, MONTH, TIME, YEAR, ONE}),
        (["Priority > 2.5"], {DATE, ONE}),  # keys case-insensitive, spaces around the operator
        (["priority<1e308"], {DATE, MONTH, TIME, YEAR, ONE}),
        (["priority>99999999999999999999999"], set()),
        (["rating>=4.5"], {DATE, MONTH, TIME}),  # 4.5 and 4.50; 1e400 and .inf are text
        (["rating>4.5"], {MONTH}),
        # dates as points in time, local unless they say otherwise: 2024-03-05 (YAML date),
        # "2024-03" (the 1st), 2024-03-05T10:00 (YAML datetime), 2023-12-31T23:59:59
        (["created>=2024-03-05"], {DATE, TIME}),  # boundary: midnight >= midnight
        (["created>2024-03-05"], {TIME}),  # boundary: midnight > midnight fails
        (["created<2024-03-05"], {MONTH, ONE}),
        (["created<=2024-03-05"], {MONTH, ONE, DATE}),
        (["created>=2024-03"], {DATE, MONTH, TIME}),  # YYYY-MM is the 1st on both sides
        (["created>2024-03"], {DATE, TIME}),
        (["created>=2024-03", "created<2024-04"], {DATE, MONTH, TIME}),  # one key, both hold
        (["created>=2024-03-02", "created<2024-03-05T10:00"], {DATE}),
        (["created>=2024-03-05T10:00"], {TIME}),
        (["created>=2024-03-05T15:00Z"], {TIME}),  # 10:00 in New York (EST) is 15:00 UTC
        (["created>2024-03-05T15:00Z"], set()),
        (["created>=2023-12-31T23:59:59-05:00"], {DATE, MONTH, TIME, ONE}),
        (["created>=2024"], {DATE, MONTH, TIME, YEAR}),  # a year: dates from 1 January, numbers from 2024
        (["created<2024"], {ONE}),
        # a time as text, a UTC time, a time at +02:00: 15:00Z, 10:00Z, 09:00Z
        (["due>2025-01-31T09:00:00Z"], {DATE, MONTH}),
        (["due>=2025-01-31T09:00:00Z"], {DATE, MONTH, TIME}),
        (["due<2025-01-31T10:00"], {MONTH, TIME}),  # local: 15:00Z
        # != is key:value turned round, for notes with the key
        (["priority!=3"], {MONTH, TIME, LIST, TEXT, YEAR, ONE}),
        (["priority!=1"], {DATE, TIME, TEXT, YEAR, ONE}),  # a list holding 1 is out
        (["status!=open"], set()),
        (["status!=done"], {NONE}),
        (["priority!=high", "priority!=-2", "priority>0"], {DATE, MONTH, TIME, ONE}),
        # missing keys never match
        (["nosuchkey>1"], set()),
        (["nosuchkey!=1"], set()),
        # with equalities: alternatives on one key, then every comparison
        (["priority:1", "priority:2", "priority>1"], {TIME}),
        (["rating:4.5", "created>2024-03-01"], {DATE, TIME}),
    ],
)
def test_frontmatter_comparisons(cmp_vault: Path, where: list[str], expected: set[str]) -> None:
    with open_index(cmp_vault, create=True) as index:
        index.sync()
        assert found(index, {"where": where}) == expected
        # The listing side (vector search over the files in scope) agrees with the per-hit side.
        assert found(index, {"where": where}, "vector") == expected == found(index, {"where": where}, "bm25")


def test_comparisons_with_ages_and_other_filters(cmp_vault: Path) -> None:
    with open_index(cmp_vault, create=True) as index:
        index.sync()
        index.clock = lambda: datetime(2024, 3, 10).astimezone().timestamp()  # a fake "now"
        assert found(index, {"where": ["created>=7d"]}) == {DATE, TIME}  # since 2024-03-03
        assert found(index, {"where": ["created<7d"]}) == {MONTH, ONE}
        assert found(index, {"where": ["created>=5d"]}) == {DATE, TIME}  # since 2024-03-05 00:00, inclusive
        assert found(index, {"where": ["created>5d"]}) == {TIME}
        assert found(index, {"where": ["created<today"]}) == {DATE, MONTH, TIME, ONE}
        assert found(index, {"where": ["created>=yesterday"]}) == set()
        assert found(index, {"where": ["created>=2024-03"], "folders": ["c"], "kinds": ["note"]}) == {DATE, MONTH, TIME}
        assert found(index, {"where": ["priority<3"], "modified_after": "2000", "paths": [MONTH, DATE]}) == {MONTH}
        assert found(index, {"where": ["priority<3"], "folders": ["elsewhere"]}) == set()
        assert found(index, {"where": ["priority<3"], "tags": ["nosuchtag"]}) == set()
        # k results are k matches: the comparison is applied before ranking.
        hits = index.search(QUERY, k=2, filters={"where": ["priority>=-2", "priority<2"]}).results
        assert {r.path for r in hits} == {MONTH, YEAR}


@contextmanager
def local_zone(zone: str) -> Iterator[None]:
    """Run with ``zone`` as local time (TZ, read by this process's Python and SQLite alike)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


def _stored_as(conn: Any, expression: str, text: str) -> Any:
    """What the SQL ``expression`` makes of ``text`` stored as a frontmatter value."""
    return conn.execute(f"SELECT {expression} FROM (SELECT ? AS value) AS m", (field_value(text),)).fetchall()[0][0]


_MOMENTS = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 12, 31)).map(
    lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)  # SQLite keeps milliseconds
)
_FORMS = st.sampled_from(["%Y-%m", "%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f"])
_OFFSETS = st.sampled_from(["", "", "Z", "+00:00", "+02:00", "-05:00", "+05:45", "-11:30"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moment=_MOMENTS, form=_FORMS, offset=_OFFSETS)
def test_a_stored_date_is_the_moment_the_filter_grammar_reads(vault: Path, moment: datetime, form: str, offset: str) -> None:
    """The SQL that reads stored values as times agrees with ``parse_time`` (the grammar of
    --after/--before and of a comparison's value) on every form a date is stored in. A fixed
    zone east of UTC without daylight saving: a local time that does not exist (a DST gap) is
    the one place the two may differ."""
    text = moment.strftime(form) + (offset if "%H" in form else "")  # a date alone has no offset
    with local_zone("<+0530>-05:30"), open_index(vault, create=True) as index:
        stored = _stored_as(index.conn, _AS_TIME, text)
        assert stored == pytest.approx(parse_time(text, now=0).timestamp(), abs=1e-3), text


def test_what_sql_reads_as_a_number_or_a_time(vault: Path) -> None:
    with open_index(vault, create=True) as index:
        for text, number in [("3", 3.0), ("-2", -2.0), ("4.50", 4.5), ('"10"', None), ("10", 10.0), ("1e16", 1e16),
                             ("1.5e-7", 1.5e-7), ("12345678901234567890", 1.2345678901234567e19), ("+7", 7.0),
                             ("1e400", None), ("-1e400", None), ("inf", None), ("nan", None), ("2024-03-05", None),
                             ("3 apples", None), ("-", None), ("true", None), ("[1, 2]", None), ("0x10", None)]:  # fmt: skip
            assert _stored_as(index.conn, _AS_NUMBER, text) == number, text
        with local_zone("America/New_York"):  # summer and winter offsets
            for text in ("2024-07-05", "2024-01-05T10:00", "2024-11-03T01:30:00", "2024-07"):
                assert _stored_as(index.conn, _AS_TIME, text) == parse_time(text, now=0).timestamp(), text
        for text in ("2024", "3", "20240305", "2024-03-05x", "2024-13", "2024-03-05t25:00", "soon", "+2024-03-05", "1e400"):
            assert _stored_as(index.conn, _AS_TIME, text) is None, text


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (">", "needs a key"),
        (">=3", "needs a key"),
        ("a>", "has no value"),
        ("a<= ", "has no value"),
        ("a>>b", "two operators"),
        ("a<>b", "two operators"),
        ("a=>3", "two operators"),
        ("status:>2", "two operators"),
        ("a!==b", "two operators"),
        ("a==b", "two operators"),
        ("a>1e400", "too large a number"),
        ("a<-1e999", "too large a number"),
        (f"a>{'9' * 400}", "too large a number"),
        ("a>nan", "cannot compare with 'nan'"),
        ("a>inf", "cannot compare with 'inf'"),
        ("a>-infinity", "cannot compare"),
        ("priority>high", "not a number or a date"),  # text is refused, not ordered
        ("created>=2024-13-01", "not a number or a date"),  # a misspelt date is not text either
        ("created>=last week", "not a number or a date"),
        ("created>=3m", "not a number or a date"),
        ("created>=99999999d", "reaches back too far"),
    ],
)
def test_bad_comparisons_are_query_errors_with_hints(sample_vault: Path, where: str, message: str) -> None:
    with open_index(sample_vault, create=True) as index:
        index.sync()
        with pytest.raises(QueryError, match=message) as raised:
            index.search("tokens", filters={"where": ["status:done", where]})
        assert raised.value.exit_code == 2 and raised.value.hint


def test_hostile_comparisons_are_data_not_sql(cmp_vault: Path) -> None:
    with open_index(cmp_vault, create=True) as index:
        index.sync()
        for where in ("x' OR '1'='1>3", "priority); DROP TABLE files; -->3", "%>1", "_<2024", f"{'k' * 10_000}>1",
                      "created>0001-01-01", "created<9999-12-31T23:59:59+00:00", "priority!=' OR 1=1 --"):  # fmt: skip
            try:
                found(index, {"where": [where]})  # whatever it finds, it runs as data …
            except QueryError:
                pass  # … or is refused (year 1 is out of range west of UTC)
        assert found(index, {"where": ["created>1900-01-01"]}) == {DATE, MONTH, TIME, ONE}
        assert found(index, {"where": ["priority!=' OR 1=1 --"]}) == {DATE, MONTH, TIME, LIST, TEXT, YEAR, ONE}
        assert index.store.integrity_problems() == [] and len(index.files()) == 9
        # A hand-built comparison is held to the same rules.
        with pytest.raises(QueryError, match="neither a number nor a time"):
            index.search(QUERY, filters=SearchFilter(comparisons=(FieldComparison("priority", "<", "3"),)))
        with pytest.raises(QueryError, match="unknown comparison"):
            index.search(QUERY, filters=SearchFilter(comparisons=(FieldComparison("priority", "<>", "3", number=3.0),)))  # type: ignore[arg-type]
        nan = SearchFilter(comparisons=(FieldComparison("priority", "<", "nan", number=float("nan")),))
        assert found(index, nan) == set()
        by_hand = SearchFilter(comparisons=(FieldComparison("PRIORITY", "<", "3", number=3.0),))
        assert found(index, by_hand) == {MONTH, TIME, YEAR}


def test_comparisons_round_trip_through_the_json_shape() -> None:
    now = datetime(2026, 2, 1, 12, 0).astimezone().timestamp()
    scope = parse_filter({"where": ["status:done", "Priority < 3", "created>=30d", "due<2026-03", "year>=2024", "status!=open"]}, now=now)
    assert scope.where == (("status", "done"),)
    assert [(c.key, c.op, c.number) for c in scope.comparisons or ()] == [
        ("priority", "<", 3.0), ("created", ">=", None), ("due", "<", None), ("year", ">=", 2024.0), ("status", "!=", None),
    ]  # fmt: skip
    ages = (scope.comparisons or ())[1]
    assert ages.moment is not None and ages.moment.timestamp() == pytest.approx(now - 30 * 86400)
    # An age is written back as the moment it meant, so reading it later finds the same notes.
    assert parse_filter(scope.to_dict(), now=now + 86400) == scope
    # ":" and "!" alone start values, not operators; "<" and ">" in a value are kept after ":".
    assert parse_where("icon::rocket:") == ("icon", ":rocket:") and parse_where("status:!urgent") == ("status", "!urgent")
    assert parse_where("title:a<b") == ("title", "a<b") and parse_where("wow! :yes") == ("wow!", "yes")
    only = parse_filter({"where": ["priority<3"]})
    assert only.where is None and only.to_dict() == {"where": ["priority<3"]} and not only.unrestricted


def test_cli_comparisons(cmp_vault: Path) -> None:
    assert run_cli("index", str(cmp_vault), "--quiet").returncode == 0
    vault = ["--vault", str(cmp_vault), "--json", "-k", "20", "--no-daemon"]
    ranged = run_cli("search", QUERY, *vault, "--where", "created>=2024-03", "--where", "created<2024-04", "--where", "priority<3")
    assert ranged.returncode == 0, ranged.stderr
    assert {r["path"] for r in json.loads(ranged.stdout)["results"]} == {MONTH, TIME}
    older = run_cli("search", QUERY, *vault, "--where", "created<30d", "--where", "priority!=3")  # before 30 days ago
    assert older.returncode == 0, older.stderr
    assert {r["path"] for r in json.loads(older.stdout)["results"]} == {MONTH, TIME, ONE}


_OPS = {"<": float.__lt__, "<=": float.__le__, ">": float.__gt__, ">=": float.__ge__}
_MONTH_EDGES = st.builds(  # within two days of a new month, where a month's text bounds cut
    lambda year, month, minutes: datetime(year, month, 1) + timedelta(minutes=minutes),
    st.integers(1999, 2001), st.integers(1, 12), st.integers(-2 * 1440, 2 * 1440),
)
_STORED = st.builds(
    lambda moment, form, offset: moment.strftime(form) + (offset if "%H" in form else ""),
    st.one_of(_MOMENTS, _MONTH_EDGES), _FORMS, st.sampled_from(["", "Z", "+14:00", "-12:00", "+05:45"]),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stored=st.lists(_STORED, min_size=1, max_size=25), data=st.data())
def test_both_sides_of_a_scope_agree_with_the_grammar_on_dates(vault: Path, stored: list[str], data: st.DataObject) -> None:
    """Listing a scope's files (which first narrows the stored rows by their text) and testing
    given files (which does not) find exactly the notes the grammar says, at any offset,
    at the edges of months and years, with bounds equal to stored values."""
    bounds = data.draw(st.lists(st.tuples(st.sampled_from(list(_OPS)), st.one_of(st.sampled_from(stored), _STORED)), min_size=1, max_size=2))
    with local_zone("<-1130>+11:30"), open_index(vault, create=True) as index:
        with index.conn:
            index.conn.execute("DELETE FROM files")
            for number, text in enumerate(stored, start=1):
                index.conn.execute(
                    "INSERT INTO files(id, path, size, mtime_ns, status, indexed_at) VALUES (?, ?, 0, 0, 'indexed', '')",
                    (number, f"n{number}.md"),
                )
                index.conn.execute("INSERT INTO frontmatter_fields(file_id, key, value) VALUES (?, 'when', ?)", (number, field_value(text)))
        scope = parse_filter({"where": [f"when{op}{bound}" for op, bound in bounds]}, now=0)
        expected = {
            number
            for number, text in enumerate(stored, start=1)
            if all(_OPS[op](parse_time(text, now=0).timestamp(), parse_time(bound, now=0).timestamp()) for op, bound in bounds)
        }
        assert set(index.store.file_ids_in(scope).tolist()) == expected
        assert index.store.files_inside(range(1, len(stored) + 1), scope) == expected


# -- filters that match nothing say why ----------------------------------------------------------


def test_a_filter_naming_nothing_gets_a_hint_with_the_nearest_names(meta_vault: Path) -> None:
    assert run_cli("index", str(meta_vault), "--quiet").returncode == 0
    vault = ["--vault", str(meta_vault)]
    folder = run_cli("search", QUERY, *vault, "--folder", "Tasks")
    assert folder.returncode == 0
    assert "No results" in folder.stdout
    assert "note: no folder 'Tasks' in the index; did you mean 'tasks'?" in folder.stdout
    tag = run_cli("search", QUERY, *vault, "--tag", "wrok", "--json")
    assert json.loads(tag.stdout)["notices"] == ["no note has the tag 'wrok'; did you mean 'work'?"]
    kind = run_cli("search", QUERY, *vault, "--kind", "pptx", "--json")
    assert json.loads(kind.stdout)["notices"] == ["no pptx files in the index"]
    # A filter that does match says nothing.
    quiet = run_cli("search", QUERY, *vault, "--folder", "tasks", "--tag", "work", "--json")
    assert json.loads(quiet.stdout)["notices"] == []


@pytest.mark.parametrize("kind", ["foo", "exe"])
def test_an_unknown_kind_is_an_error_that_lists_the_kinds(meta_vault: Path, kind: str) -> None:
    assert run_cli("index", str(meta_vault), "--quiet").returncode == 0
    result = run_cli("search", QUERY, "--vault", str(meta_vault), "--kind", kind)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: unknown kind '{kind}'")
    assert "hint: use some of note, pdf, docx" in result.stderr


def test_more_filters_than_the_index_keeps_each_answer_alike(vault: Path, write: Callable[..., Path]) -> None:
    """Twice as many folders as the scopes an index keeps, searched in turn, twice: each
    search finds its folder's note only, whether its scope was kept or read again."""
    from vaultseek.storage.store import SCOPES_KEPT

    folders = [f"f{i}" for i in range(2 * SCOPES_KEPT + 2)]
    for folder in folders:
        write(f"{folder}/note.md", f"# Note {folder}\n\nRotate the refresh tokens of {folder}.\n")
    with open_index(vault, create=True) as index:
        index.sync()
        for _round in range(2):
            for folder in folders:
                for mode in ("bm25", "hybrid"):
                    found = index.search("rotate refresh tokens", mode=mode, filters=SearchFilter(folders=(folder,)))
                    assert [r.path for r in found.results] == [f"{folder}/note.md"], (folder, mode)
