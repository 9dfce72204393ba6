"""The MCP server through the SDK's own client, over stdio, against a spawned process."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import mcp_server
from vaultseek import open_index
from vaultseek.contract import REQUEST_FIELDS


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def indexed(sample_vault: Path) -> Path:
    rows = "\n".join(f"{n},widget-{n},{n * 3}" for n in range(1, 41))
    (sample_vault / "inventory.csv").write_text(f"id,part,stock\n{rows}\n", "utf-8")
    with open_index(sample_vault, create=True) as index:
        index.sync()
    return sample_vault


async def session_calls(vault: Path) -> dict[str, Any]:
    from mcp import Client

    params = mcp_server(vault)
    out: dict[str, Any] = {}
    async with Client(params) as client:
        tools = await client.list_tools()
        out["tools"] = {t.name: t for t in tools.tools}
        found = await client.call_tool("search", {"query": "rotate refresh tokens", "k": 3})
        out["search"] = found
        out["chunks"] = await client.call_tool("search", {"query": "rotate refresh tokens", "k": 3, "view": "chunks"})
        first = found.structured_content["results"][0]["sections"][0]
        out["chunk"] = await client.call_tool("get_chunk", {"chunk_id": first["chunk_id"]})
        out["note"] = await client.call_tool("get_note", {"path": "security/oauth.md", "section": "reuse"})
        out["status"] = await client.call_tool("status", {})
        out["missing"] = await client.call_tool("get_note", {"path": "nope.md"})
        out["bm25"] = await client.call_tool("search", {"query": "_rrf_fuse", "mode": "bm25", "max_tokens": 60})
        out["document"] = await client.call_tool("search", {"query": "widget-33", "mode": "bm25"})
        out["kind"] = await client.call_tool("search", {"query": "widget", "filters": {"kind": "csv"}})
        out["kinds"] = await client.call_tool("search", {"query": "widget", "filters": {"kinds": ["csv"]}})
        out["bad"] = await client.call_tool("search", {"query": "x", "mode": "psychic"})
        out["filtered"] = await client.call_tool("search", {
            "query": "rotate refresh tokens", "k": 10,
            "filters": {"tags": ["#Security"], "where": ["type:howto"], "kinds": ["note"], "modified_after": "1w"},
        })  # fmt: skip
        out["elsewhere"] = await client.call_tool("search", {"query": "rotate refresh tokens", "filters": {"folders": ["cooking"]}})
        out["signals"] = await client.call_tool(
            "search", {"query": "fusion", "k": 3, "title_match": True, "recency_half_life_days": 30, "intent": True}
        )
        out["terms"] = await client.call_tool("search", {"query": "rotate refresh tokens", "term_match": 0.5})
        out["bad_terms"] = await client.call_tool("search", {"query": "x", "term_match": 2})
        out["bad_filter"] = await client.call_tool("search", {"query": "x", "filters": {"modified_after": "soon"}})
        out["bad_field"] = await client.call_tool("search", {"query": "x", "filters": {"colour": ["red"]}})
    return out


def test_mcp_tools_over_stdio(indexed: Path) -> None:
    out = run(session_calls(indexed))
    assert set(out["tools"]) == {
        "search", "get_note", "get_chunk", "links", "related", "status", "map_clusters", "map_note", "missing_links",
    }  # fmt: skip
    schema = out["tools"]["search"].input_schema
    assert tuple(schema["properties"]) == REQUEST_FIELDS and schema["additionalProperties"] is False
    assert out["kind"].structured_content["results"][0]["path"] == "inventory.csv"  # the CLI's --kind
    assert out["kind"].structured_content == out["kinds"].structured_content
    assert not out["terms"].is_error and out["terms"].structured_content["results"][0]["path"] == "security/oauth.md"
    assert out["bad_terms"].is_error and "term_match" in out["bad_terms"].content[0].text
    assert "where" in json.dumps(schema) and "modified_after" in json.dumps(schema)
    assert "path" in out["tools"]["search"].description

    search = out["search"].structured_content
    assert not out["search"].is_error
    note = search["results"][0]  # the note view: a note, its best sections inside
    assert search["view"] == "notes"
    assert note["path"] == "security/oauth.md" and len({r["path"] for r in search["results"]}) == len(search["results"])
    assert set(note) == {"path", "title", "relevance", "sections"}
    top = note["sections"][0]  # lean: what an agent reads, not the ranking's bookkeeping
    assert set(top) == {"chunk_id", "section", "snippet", "relevance"}
    chunks = out["chunks"].structured_content  # the chunk view: sections as ranked, one note's twice
    assert chunks["view"] == "chunks" and chunks["results"][0] == {"path": note["path"], **top}
    assert [r["path"] for r in chunks["results"]].count("security/oauth.md") >= 2
    for answer in (out["search"], out["chunks"], out["chunk"], out["status"]):  # the data once more, compact
        assert [c.text for c in answer.content] == [json.dumps(answer.structured_content, ensure_ascii=False, separators=(",", ":"))]

    chunk = out["chunk"].structured_content
    assert chunk["path"] == note["path"] and chunk["section"] == top["section"] and chunk["text"]
    assert chunk["chunk_id"] == top["chunk_id"]
    whole = out["note"].structured_content
    assert [c["section"] for c in whole["chunks"]] == ["Detecting reuse"]
    assert out["status"].structured_content["files"] == 5
    document = out["document"].structured_content["results"][0]["sections"][0]
    assert out["document"].structured_content["results"][0]["path"] == "inventory.csv"
    assert document["location"] == {"row_start": 22, "row_end": 41}  # the header is row 1

    assert out["missing"].is_error
    assert "not in the index" in json.dumps([c.model_dump() for c in out["missing"].content])
    assert out["bm25"].structured_content["results"][0]["path"] == "code/fusion.md"
    assert len(out["bm25"].structured_content["results"]) >= 1
    assert out["bad"].is_error

    filtered = out["filtered"].structured_content["results"]
    assert {r["path"] for r in filtered} == {"security/oauth.md"} and not out["filtered"].is_error
    assert {r["path"] for r in out["elsewhere"].structured_content["results"]} == {"cooking/bread.md"}
    named = out["signals"].structured_content
    assert named["results"][0]["path"] == "code/fusion.md" and not out["signals"].is_error
    assert out["bad_filter"].is_error and "cannot read 'soon'" in json.dumps([c.model_dump() for c in out["bad_filter"].content])
    assert out["bad_field"].is_error


def test_mcp_without_an_index_is_one_line_not_a_traceback(vault: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "vaultseek.cli", "mcp", "--vault", str(vault)],
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    assert result.returncode == 3 or result.returncode == 2
    assert result.stderr.startswith("error: no index") and "Traceback" not in result.stderr


def test_importing_the_mcp_module_registers_nothing() -> None:
    code = "import sys, vaultseek.agents.mcp_server as m; print('build_mcp_server' in dir(m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


HOSTILE = (2**80, -(2**80), -1, 0, "abc", None, 1.5, True, [], {})
"""Argument values an agent (or a prompt-injected one) may send for any argument."""


async def hostile_calls(vault: Path, stderr: Path) -> list[tuple[str, dict[str, Any], Any]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    server = f"exec {sys.executable} -m vaultseek.cli mcp --vault '{vault}' 2>>'{stderr}'"
    params = StdioServerParameters(
        command="/bin/sh", args=["-c", server],
        env={k: v for k, v in os.environ.items() if k.startswith(("XDG_", "VAULTSEEK_")) or k == "PYTHONPATH"},
    )  # fmt: skip
    calls: list[tuple[str, dict[str, Any]]] = []
    for value in HOSTILE:
        calls += [("get_chunk", {"chunk_id": value}), ("get_note", {"path": value}),
                  ("get_note", {"path": "security/oauth.md", "section": value}), ("links", {"note": value}),
                  ("related", {"note": value}), ("related", {"note": "security/oauth.md", "k": value}),
                  ("search", {"query": value}), ("search", {"query": "tokens", "k": value}),
                  ("map_note", {"note": value}), ("map_note", {"note": "security/oauth.md", "k": value}),
                  ("missing_links", {"note": value}), ("missing_links", {"limit": value})]  # fmt: skip
    calls += [("status", {"verbose": True}), ("get_chunk", {"chunk_id": 1, "extra": 1}),
              ("map_clusters", {"verbose": True})]  # fmt: skip
    answers = []
    async with Client(params) as client:
        for tool, arguments in calls:
            answers.append((tool, arguments, await client.call_tool(tool, arguments)))
    return answers


def test_hostile_arguments_get_one_clear_error_and_no_traceback(indexed: Path, tmp_path: Path) -> None:
    stderr = tmp_path / "server-stderr.txt"
    answers = run(hostile_calls(indexed, stderr))
    allowed_none = {("get_note", "section"), ("related", "k"), ("search", "k"), ("map_note", "k"),
                    ("missing_links", "note"), ("missing_links", "limit")}  # optional: null is the default  # fmt: skip
    for tool, arguments, result in answers:
        text = " ".join(c.text for c in result.content)
        name = [k for k in arguments if arguments[k] in HOSTILE or k in ("verbose", "extra")][-1]
        if (tool, name) in allowed_none and arguments[name] is None:
            continue
        if isinstance(arguments[name], str) and name in ("path", "section", "note", "query"):
            continue  # text where text belongs: a search, or a note that is not there
        assert result.is_error, (tool, arguments, text)
        message = text.removeprefix(f"Error executing tool {tool}: ")
        assert "\n" not in message and "validation error" not in message, (tool, arguments, text)
        assert name in message or "not in the index" in message or "query" in message, (tool, arguments, text)
    huge = next(r for t, a, r in answers if t == "get_chunk" and a == {"chunk_id": 2**80}).content[0].text
    assert huge.endswith(f"chunk_id must be a whole number from 1 to {2**63 - 1} (got {2**80})"), huge
    assert "Traceback" not in stderr.read_text("utf-8")


async def list_tools_through(command: str) -> set[str]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    kept = {k: v for k, v in os.environ.items() if k.startswith(("XDG_", "VAULTSEEK_")) or k in ("HOME", "PYTHONPATH")}
    params = StdioServerParameters(command="/bin/sh", args=["-c", command], env={**kept, "PATH": "/usr/bin:/bin"})
    async with Client(params) as client:
        return {t.name for t in (await client.list_tools()).tools}


def test_print_command_gives_a_claude_mcp_add_line_that_works_without_the_venv_on_path(indexed: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "vaultseek.cli", "mcp", "--vault", str(indexed), "--print-command"],
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    assert line.startswith("claude mcp add vaultseek -- /") and "\n" not in line
    server = line.removeprefix("claude mcp add vaultseek -- ")
    assert f"--vault={indexed}" in server and " mcp " in server
    # Claude Code starts the server with its own PATH, without the virtual environment.
    assert "get_chunk" in run(list_tools_through(server))


# -- the vault map's tools -----------------------------------------------------------------------
BREAD = (
    "Feeding the sourdough starter with flour and water twice a day keeps the yeast active.",
    "Bake sourdough bread hot with steam for a crisp crust; the starter must be bubbly.",
    "Rye flour ferments faster than wheat flour in a sourdough starter. See [[bread-0]].",
    "Shaping a sourdough loaf: pre-shape, bench rest, final shape, then proof in a banneton.",
    "Autolyse: mix flour and water before adding the starter so gluten forms in the bread dough.",
    "Scoring the bread dough before baking lets the loaf rise evenly in the oven.",
)
AUTH = (
    "Rotate OAuth refresh tokens on every use and revoke the old refresh token.",
    "Access tokens expire after one hour; clients use the refresh token to get a new access token.",
    "Detecting refresh token reuse: revoke the whole token family and force a new login.",
    "PKCE protects the OAuth authorization code flow for public clients without a secret.",
    "Store OAuth tokens in secure, httpOnly cookies, never in browser local storage.",
    "Token introspection lets a resource server ask whether an OAuth access token is active.",
)


@pytest.fixture
def two_topics(vault: Path) -> Path:
    """Six notes on sourdough and six on OAuth tokens; bread-2 links to bread-0, nothing else
    links."""
    for topic, texts in (("bread", BREAD), ("auth", AUTH)):
        for number, text in enumerate(texts):
            (vault / f"{topic}-{number}.md").write_text(f"# {topic.title()} {number}\n\n{text}\n", "utf-8")
    with open_index(vault, create=True) as index:
        index.sync()
    return vault


async def map_calls(vault: Path) -> dict[str, Any]:
    from mcp import Client

    calls = {
        "clusters": ("map_clusters", {}),
        "note": ("map_note", {"note": "bread-2", "k": 4}),
        "of_note": ("missing_links", {"note": "bread-2.md", "limit": 2}),
        "vault": ("missing_links", {"limit": 4}),
        "default": ("missing_links", {}),
        "unknown_note": ("map_note", {"note": "nope"}),
        "no_note": ("map_note", {}),
        "zero": ("missing_links", {"limit": 0}),
        "extra": ("map_clusters", {"notes": True}),
    }
    async with Client(mcp_server(vault)) as client:
        out: dict[str, Any] = {"tools": {t.name for t in (await client.list_tools()).tools}}
        for key, (tool, arguments) in calls.items():
            out[key] = await client.call_tool(tool, arguments)
    return out


def _error(result: Any) -> str:
    assert result.is_error
    text = " ".join(c.text for c in result.content)
    assert "\n" not in text and "Traceback" not in text, text
    return text


def test_mcp_map_tools_answer_clusters_a_notes_place_and_its_missing_links(two_topics: Path) -> None:
    out = run(map_calls(two_topics))
    assert {"map_clusters", "map_note", "missing_links"} <= out["tools"]

    clusters = out["clusters"].structured_content
    assert set(clusters) == {"space", "notes", "roles", "clusters"}  # lean: no list of every note
    assert clusters["notes"] == 12 and sum(clusters["roles"].values()) == 12
    assert sorted(c["size"] for c in clusters["clusters"]) == [6, 6]
    for cluster in clusters["clusters"]:
        assert set(cluster) == {"id", "label", "words", "central", "size", "thin"}
        topics = {path.split("-")[0] for path in cluster["central"]}
        assert len(topics) == 1 and len(cluster["central"]) == 3  # one topic per cluster
        named = {"bread": {"sourdough", "starter", "bread", "flour"}, "auth": {"oauth", "token", "tokens", "refresh"}}
        assert named[topics.pop()] & set(cluster["words"]) and " · " in cluster["label"]

    note = out["note"].structured_content
    assert note["path"] == "bread-2.md" and note["role"] in ("core", "member", "bridge", "island")
    assert "sourdough" in note["cluster"]["label"] or "starter" in note["cluster"]["label"]
    assert len(note["neighbours"]) == 4 and all(n["path"].startswith("bread-") for n in note["neighbours"])
    linked = {n["path"]: n["linked"] for n in note["neighbours"]}
    assert linked["bread-0.md"] is True and sum(linked.values()) == 1  # the one link it has
    unlinked = [n["path"] for n in note["neighbours"] if not n["linked"]]
    targets = [m["target"] for m in note["missing_links"]]  # the related notes it does not link
    assert len(targets) == 4 and set(unlinked) <= set(targets) and "bread-0.md" not in targets
    assert all(t.startswith("bread-") for t in targets)
    for link in note["missing_links"]:
        assert link["source"] == "bread-2.md" and link["link"] == f"[[{link['target'].removesuffix('.md')}]]"
        assert "Rye flour" in link["source_passage"]["text"] and link["target_passage"]["chunk_id"] > 0

    of_note = out["of_note"].structured_content
    assert of_note["note"] == "bread-2.md" and [m["target"] for m in of_note["missing_links"]] == targets[:2]
    whole = out["vault"].structured_content["missing_links"]
    assert len(whole) == 4 and out["vault"].structured_content["note"] is None
    assert [m["similarity"] for m in whole] == sorted((m["similarity"] for m in whole), reverse=True)
    pairs = [{m["source"], m["target"]} for m in whole]
    assert {"bread-0.md", "bread-2.md"} not in pairs  # linked already: never suggested
    assert all(len({p.split("-")[0] for p in pair}) == 1 for pair in pairs)  # each within one topic
    assert len(out["default"].structured_content["missing_links"]) == 10
    for answer in (out["clusters"], out["note"], out["vault"]):  # the data once more, compact, as text
        assert [c.text for c in answer.content] == [json.dumps(answer.structured_content, ensure_ascii=False, separators=(",", ":"))]

    assert "nope" in _error(out["unknown_note"])
    assert 'map_note needs "note"' in _error(out["no_note"])
    assert _error(out["zero"]).endswith("limit must be a whole number from 1 to 100 (got 0)")
    assert "map_clusters has no argument notes" in _error(out["extra"])


def test_mcp_map_of_too_few_notes_is_one_line_with_a_hint(vault: Path) -> None:
    (vault / "only.md").write_text("# Only\n\nOne note about sourdough starters.\n", "utf-8")
    with open_index(vault, create=True) as index:
        index.sync()

    async def ask() -> Any:
        from mcp import Client

        async with Client(mcp_server(vault)) as client:
            return await client.call_tool("map_clusters", {})

    text = _error(run(ask()))
    assert "a map needs at least 3 notes" in text and "vaultseek index" in text


def test_the_search_tools_description_names_the_fields_its_answer_has(indexed: Path) -> None:
    """The agent reads the tool's description, not docs/agents.md: it must name the fields the
    answer holds (``relevance``, ``no_match``) and none of those the answer leaves out (the
    ranks, scores, signals and heading context of ``vaultseek search --json``)."""
    import re

    from vaultseek.agents.mcp_server import SEARCH_DESCRIPTION, lean_answer

    with open_index(indexed) as index:
        full = index.search("rotate refresh tokens").to_dict()
    lean = lean_answer(full)
    note, section = lean["results"][0], lean["results"][0]["sections"][0]
    given = {*note, *section, "location", "no_match", "parsed", "notices"}
    left_out = {*full["results"][0], *full["results"][0]["sections"][0]} - given
    named = set(re.findall(r"`(\w+)`", SEARCH_DESCRIPTION))
    assert left_out and not left_out & named, left_out & named
    assert given <= named, given - named
