"""What a fresh `vaultseek search` leaves out, without changing what it does.

Its speed is a benchmark figure (``python -m benchmarks.coldsearch``), not a timed test; these
check that the cuts stay in place and change no result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultseek import open_index
from vaultseek.cli.main import COMMANDS, build_parser
from vaultseek.embeddings.static import _median_token_length, load_embedder

COMMAND_LINES = [
    ["search", "tokens", "--mode", "bm25", "-k", "3", "--folder", "a", "--folder", "b", "--recent", "--json"],
    ["search", "--batch", "-", "--no-daemon", "--vault", "v", "--db", "d.db"],
    ["index", "v", "--wait", "2.5", "--no-deep", "-q"],
    ["status", "--json", "--all"],
    ["hook", "user-prompt-submit", "--db", "d.db"],
    ["daemon", "start", "--no-watch"],
    ["review", "accept", "item.md", "--domain", "work"],
    ["links", "Home", "--json"],
    ["related", "Home", "-k", "4"],
    ["deep", "--background", "--quiet"],
    ["serve", "--port", "9000", "--get", "/api/status"],
]


@pytest.mark.parametrize("words", COMMAND_LINES, ids=lambda words: " ".join(words[:2]))
def test_the_one_command_parser_parses_as_the_whole_parser(words: list[str]) -> None:
    assert words[0] in COMMANDS
    assert vars(build_parser(only=words[0]).parse_args(words)) == vars(build_parser().parse_args(words))


def test_a_search_without_a_daemon_imports_no_socket_and_no_difflib(sample_vault: Path) -> None:
    with open_index(sample_vault, create=True) as index:
        index.sync()
    code = (
        "import sys; from vaultseek.cli.main import main;"
        f"code = main(['search', 'refresh tokens', '--vault', {str(sample_vault)!r}]);"
        "print(code, sorted(m for m in ('socket', 'difflib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 []"


def test_the_model_estimates_token_length_only_for_a_text_it_may_cut() -> None:
    """The characters-per-token estimate cuts a long text before tokenizing; a text no longer
    than the token limit in characters cannot be cut, so no estimate is made for it."""
    model = load_embedder()
    assert model.max_length is not None
    model.embed(["how do I rotate refresh tokens", "x" * model.max_length])
    assert model._median_token_chars is None
    long_text = " ".join(f"word{i} rotation" for i in range(2_000))
    vectors = model.embed([long_text, "short"])
    assert model._median_token_chars == _median_token_length(model.tokenizer)
    limit = model.max_length * model._median_token_chars
    assert len(long_text) > limit
    assert (vectors[0] == model.embed([long_text[:limit]])[0]).all()


NOT_FOR_A_PLAIN_SEARCH = (
    # other surfaces and features: the web app, the study app, language models, the MCP server,
    # indexing (markdown, chunking, document readers), links
    "vaultseek.web", "vaultseek.study", "vaultseek.llm", "vaultseek.agents.mcp_server",
    "vaultseek.index.sync", "vaultseek.notes", "vaultseek.links", "vaultseek.intake",
    "vaultseek.documents",
    # the model servers' builders (reranking, query expansion), for a search that asks for one
    "vaultseek.search.servers",
    # the PostgreSQL backend and the writer lock (a search of a SQLite index takes neither)
    "vaultseek.storage.postgres", "vaultseek.storage.writer_lock", "psycopg",
    # libraries a search does not use: the pool module (and logging), the model hub, the deep
    # model's runtime, safetensors (the model's matrix is memory-mapped), YAML, HTTP
    "concurrent.futures", "logging", "huggingface_hub", "onnxruntime", "safetensors", "yaml",
    "http", "email", "socket", "difflib",
    # the tokenizers library: a short ASCII query is tokenized in Python (embeddings.wordpiece);
    # the other commands' report types (sync, status, links, deep)
    "tokenizers", "vaultseek.reports",
)  # fmt: skip


def test_a_plain_search_loads_only_what_it_uses(sample_vault: Path) -> None:
    """A fresh `vaultseek search` in hybrid mode (the default), with a result named like a
    daily note (a long hyphenated name: the name scrubber runs): none of the modules above is
    imported, none of the other commands' report types is built, and the answer is the one an
    in-process search gives."""
    (sample_vault / "2024-05-14-refresh-token-rotation-notes.md").write_text(
        "# Rotation\n\nRefresh tokens are rotated every week.\n", encoding="utf-8"
    )
    with open_index(sample_vault, create=True) as index:
        index.sync()
        expected = [note["path"] for note in index.search("refresh tokens rotated").to_dict()["results"]]
    code = (
        "import json, sys; from vaultseek.cli.launcher import main;"
        f"code = main(['search', 'refresh tokens rotated', '--vault', {str(sample_vault)!r}, '--json']);"
        "import os, threading;"
        "built = [n for n in ('SyncReport', 'IndexStatus', 'DeepStatus') if n in vars(sys.modules['vaultseek.records'])];"
        "print(json.dumps([code, sorted(sys.modules), threading.active_count(), os.environ.get('OPENBLAS_NUM_THREADS'), built]))"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    answer, last = out.stdout.strip().splitlines()[:-1], out.stdout.strip().splitlines()[-1]
    exit_code, modules, threads, blas_threads, reports_built = json.loads(last)
    assert exit_code == 0
    assert [note["path"] for note in json.loads("\n".join(answer))["results"]] == expected
    assert "2024-05-14-refresh-token-rotation-notes.md" in expected
    loaded = [m for m in modules if any(m == name or m.startswith(name + ".") for name in NOT_FOR_A_PLAIN_SEARCH)]
    assert loaded == []
    assert reports_built == []  # the other commands' report types were not built (records.py)
    assert "numpy" in modules and "apsw" in modules  # it did search, in both lists
    assert threads == 1  # no pool's idle threads left behind
    assert blas_threads == "1"  # OpenBLAS starts no thread per core (a user's own setting stands)
