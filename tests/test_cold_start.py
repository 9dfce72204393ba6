"""What a fresh `vaultseek search` leaves out, without changing what it does.

Its speed is a benchmark figure (``python -m benchmarks.coldsearch``), not a timed test; these
check that the cuts stay in place and change no result.
"""

from __future__ import annotations

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
