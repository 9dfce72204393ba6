"""Search scopes (``SearchFilter``): applied before ranking, in both lists, request-local."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from vaultseek import QueryError, open_index
from vaultseek.filters import parse_filter
from vaultseek.records import SearchFilter
from vaultseek.vectors import VectorIndex


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
        home = index.search("rotate refresh tokens", mode=mode, k=3, scope=SearchFilter(folders=("home",)))
        assert [r.path for r in home.results] == ["home/tokens.md"]
        # "work" is a folder, not a prefix: work_other/ stays out.
        work = index.search("rotate refresh tokens", mode=mode, k=20, scope=SearchFilter(folders=("work",)))
        assert len(work.results) == 12 and all(r.path.startswith("work/") for r in work.results)


def test_scope_fields_paths_tags_kinds_and_empty(scoped_vault: Path) -> None:
    with open_index(scoped_vault, create=True) as index:
        index.sync()

        def paths(scope: SearchFilter) -> set[str]:
            return {r.path for r in index.search("token rotation", k=50, scope=scope).results}

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
        hits = index.search("wildcard underscore", k=10, scope=SearchFilter(folders=("a_b",)))
        assert [r.path for r in hits.results] == ["a_b/x.md"]


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
    index = VectorIndex(np.arange(1, 51), matrix)
    scores = index.similarities(matrix[0])
    even = np.flatnonzero(index.ids % 2 == 0)
    hits = index.top(scores, 10, rows=even)
    assert len(hits) == 10 and all(i % 2 == 0 for i, _s in hits)
    full = [h for h in index.search(matrix[0], 50) if h[0] % 2 == 0][:10]
    assert hits == full
    assert index.top(scores, 5, rows=np.array([], dtype=np.int64)) == []
    # The probe a filtered search starts from holds every row at least as good as the k-th.
    best = index.best_rows(scores, 7)
    assert set(index.ids[best]) == {i for i, _s in index.search(matrix[0], 7)}


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


def found(index: object, scope: object, mode: str = "hybrid") -> set[str]:
    return {r.path for r in index.search(QUERY, k=50, mode=mode, scope=scope).results}  # type: ignore[attr-defined]


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
def test_frontmatter_conditions(meta_vault: Path, where: list[str], expected: set[str]) -> None:
    with open_index(meta_vault, create=True) as index:
        index.sync()
        assert found(index, {"where": where}) == expected


def test_frontmatter_object_form_and_every_mode(meta_vault: Path) -> None:
    with open_index(meta_vault, create=True) as index:
        index.sync()
        assert found(index, {"where": {"priority": 2, "draft": True}}) == {A}
        assert found(index, {"where": {"status": ["done", "open"]}}) == {A, B, C}
        for mode in ("bm25", "vector", "hybrid"):
            assert found(index, {"where": ["status:done"]}, mode) == {A, C}
        assert index.search(QUERY, scope={"where": ["status:archived"]}).results == ()


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
def test_nested_tags(meta_vault: Path, tags: list[str], expected: set[str]) -> None:
    with open_index(meta_vault, create=True) as index:
        index.sync()
        assert found(index, {"tags": tags}) == expected


def test_kinds_folders_and_combinations(meta_vault: Path) -> None:
    with open_index(meta_vault, create=True) as index:
        index.sync()
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
        utc = midnight.astimezone(timezone.utc).isoformat()
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
            index.search("tokens", scope=scope)  # type: ignore[arg-type]
        assert raised.value.exit_code == 2


def test_hostile_values_are_data_not_sql(meta_vault: Path) -> None:
    with open_index(meta_vault, create=True) as index:
        index.sync()
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
         "modified_after": "2026-01-31", "modified_before": "2026-02-01T12:00+01:00"}
    )  # fmt: skip
    assert scope.tags == ("a/b",) and scope.kinds == ("pdf",) and scope.where == (("status", "done"), ("draft", None))
    assert parse_filter(scope.to_dict()) == scope
    assert not scope.unrestricted and parse_filter({"where": []}).where == ()


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
    assert body["results"][0]["path"] == C and set(body["results"][0]["signals"]) == {"title", "recency"}
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
    ],
)
def test_cli_bad_filters_are_one_line_and_exit_2(meta_vault: Path, flags: list[str], message: str) -> None:
    with open_index(meta_vault, create=True) as index:
        index.sync()
    result = run_cli("search", QUERY, "--vault", str(meta_vault), "--no-daemon", *flags)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "hint:" in result.stderr and "Traceback" not in result.stderr
