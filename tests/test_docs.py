"""The manual against the code.

The command-line and configuration references are generated (``scripts/docs_reference.py``)
and must be current; every ``vaultseek`` command line, ``--flag`` and config key the README and
the manual (``docs/``, without the design notes in ``docs/research/``) write must exist; and
user docs and the package's docstrings and comments name no scratch ``/tmp`` paths.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib.util
import io
import re
import shlex
import tokenize
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from types import ModuleType

import pytest

from vaultseek.cli.main import build_parser
from vaultseek.config import Config, load_config
from vaultseek.errors import VaultseekError

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "vaultseek"
USER_DOCS = [
    REPO / "README.md",
    *sorted(p for p in (REPO / "docs").rglob("*.md") if "research" not in p.relative_to(REPO / "docs").parts),
]
KEYS = {f.name for f in fields(Config) if f.name not in ("sources", "notices", "database_url", "vault_is_last_indexed")}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "scripts" / "docs_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the generated references ------------------------------------------------------------------


def test_the_generated_references_are_current() -> None:
    stale = _generator().stale_pages()
    diffs = [
        "".join(difflib.unified_diff(
            path.read_text("utf-8").splitlines(keepends=True), wanted.splitlines(keepends=True),
            fromfile=str(path.relative_to(REPO)), tofile="what the code says", n=1,
        ))[:3000]
        for path, wanted in stale.items()
    ]  # fmt: skip
    assert not stale, "stale reference pages: run `python scripts/docs_reference.py`\n" + "\n".join(diffs)


def test_the_references_are_in_the_manuals_navigation() -> None:
    nav = (REPO / "mkdocs.yml").read_text("utf-8")
    assert "reference/cli.md" in nav and "reference/configuration.md" in nav


def test_every_environment_variable_the_reference_names_is_read(vault: Path) -> None:
    """For each key, ``VAULTSEEK_<KEY>`` set to a probe value either changes the setting or is
    refused with an error naming the key: the variable is read either way."""
    page = (REPO / "docs" / "reference" / "configuration.md").read_text("utf-8")
    defaults = Config()
    probes = {"vault": str(vault / "missing"), "db": str(vault / "probe.db")}
    unread = []
    for key in sorted(KEYS):
        variable = f"VAULTSEEK_{key.upper()}"
        assert f"`{variable}`" in page, variable
        probe = probes.get(key, "probe-a,probe-b")
        try:
            value = getattr(load_config(vault=None if key == "vault" else vault, environ={variable: probe}), key)
        except VaultseekError as exc:
            if key not in str(exc) and key != "vault":
                unread.append(f"{variable}: {exc}")
            continue
        if value == getattr(defaults, key):
            unread.append(f"{variable}={probe} left `{key}` at its default")
    assert unread == []


def test_what_a_vaults_own_file_may_set_is_what_the_reference_says(vault: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (vault / ".vaultseek.toml").write_text(f'vault = "{elsewhere}"\ntop_k = 7\n', "utf-8")
    config = load_config(vault=vault, environ={})
    assert (config.vault, config.top_k) == (vault.resolve(), 7)

    page = (REPO / "docs" / "reference" / "configuration.md").read_text("utf-8")
    refused = {
        m.group(1)
        for m in re.finditer(r"^## `(\w+)`\n\n[^\n]*not accepted in a vault's own", page, re.MULTILINE)
    }
    assert refused == {"vault"}


# -- reading the docs --------------------------------------------------------------------------


@dataclass(frozen=True)
class Code:
    """A piece of code in the docs: one line of a fenced block, or one inline code span."""

    path: Path
    line: int
    text: str
    fence: str | None
    """The fenced block's info string ('' for none), or None for an inline span."""

    def where(self) -> str:
        return f"{_relative(self.path)}:{self.line}"


def _relative(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else path.name


def code_in(path: Path) -> Iterator[Code]:
    """Every fenced-block line and inline code span of a Markdown file."""
    lines = path.read_text("utf-8").splitlines()
    fence: str | None = None
    marker = ""
    prose: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if fence is None and stripped.startswith(("```", "~~~")):
            yield from _spans(path, prose)
            prose = []
            marker = stripped[:3]
            fence = stripped[3:].strip()
        elif fence is not None and stripped.startswith(marker):
            fence = None
        elif fence is not None:
            yield Code(path, number, line, fence)
        else:
            prose.append((number, line))
    yield from _spans(path, prose)


def _spans(path: Path, prose: list[tuple[int, str]]) -> Iterator[Code]:
    """Inline code spans, which may run over a line break but not over a blank line."""
    paragraph: list[tuple[int, str]] = []
    for number, line in [*prose, (0, "")]:
        if line.strip():
            paragraph.append((number, line))
            continue
        if paragraph:
            text = "\n".join(part for _, part in paragraph)
            for match in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", text, re.DOTALL):
                line_number = paragraph[0][0] + text.count("\n", 0, match.start())
                yield Code(path, line_number, " ".join(match.group(2).split()), None)
        paragraph = []


def all_code() -> Iterator[Code]:
    for path in USER_DOCS:
        yield from code_in(path)


# -- commands and flags ------------------------------------------------------------------------

ROOT = build_parser()
STOP_WORDS = {"|", "||", "&&", ";", "&", ">", ">>", "2>", "2>&1", "<", "…", "..."}
FLAG = re.compile(r"--[A-Za-z][\w-]*(=.*)?|-[A-Za-z]")
PLACEHOLDER = re.compile(r"[A-Z][A-Z_]*")
"""``vaultseek COMMAND --help``, ``vaultseek review ACTION``: a word standing for any command."""
COMMAND_AT = re.compile(r"(?:^|(?<=[\s\"'(]))vaultseek(?=[ \t])")


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    sub = _subcommands(parser)
    for child in (sub.choices.values() if sub else ()):
        yield from _parsers(child)


VAULTSEEK_FLAGS = {flag for parser in _parsers(ROOT) for flag in parser._option_string_actions}


def _script_flags() -> set[str]:
    """The flags of the benchmark and maintenance scripts (``add_argument("--x", …)``), which
    the measurement pages document beside their figures."""
    flags = set()
    for path in [*(REPO / "benchmarks").glob("*.py"), *(REPO / "scripts").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                flags |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")}
    return flags


NOT_OUR_FLAGS = {
    "--flag": "docs/search.md lists it as an identifier-like query that intent detects, not a flag",
    "--no-deps": "pip's, in docs/research/embedding-model.md: how tokenlearn installs",
    "--inference-path": "whisper.cpp's whisper-server: where it answers transcriptions (transcription_url)",
    "--mmproj": "llama.cpp's llama-server: a vision model's image projector (docs/study.md)",
}


def command_lines(code: Code) -> Iterator[str]:
    """The words after each ``vaultseek`` that starts a command in this piece of code: at the
    start, after a quote or ``(`` (JSON settings, ``$(…)``), or after ``--`` (``claude mcp add
    vaultseek -- vaultseek mcp``) or environment assignments (``VAULTSEEK_OCR=false vaultseek
    index``)."""
    text = code.text
    if code.fence is not None:
        text = re.sub(r"(^|\s)#.*$", "", text)  # a shell comment
    for match in COMMAND_AT.finditer(text):
        before = text[: match.start()]
        quote = before[-1:] if before[-1:] in ("\"", "'", "(") else ""
        if not quote:
            words = before.split()
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[-1]):
                words.pop()
            if words and words[-1] not in ("--", "|", "&&", ";", "$"):
                continue  # `vaultseek` as an argument: `claude mcp add vaultseek -- …`
        rest = text[match.end():]
        if quote in ("\"", "'"):
            rest = rest.split(quote, 1)[0]
        # `[--project|--user]`, `[FILE\|FOLDER\|-]`: every alternative is a word to check.
        rest = re.sub(r"\[([^\]]*)\]", lambda m: " " + re.sub(r"\\?\|", " ", m.group(1)) + " ", rest)
        yield rest.replace("\\|", "|")


def check_command(words: list[str]) -> list[str]:
    """What in ``vaultseek <words>`` the parser does not have."""
    problems: list[str] = []
    parser, path, placeholder, positional_only = ROOT, ["vaultseek"], False, False
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        if word in STOP_WORDS or word.endswith("…"):
            break
        if positional_only:
            continue
        if word == "--":
            positional_only = True
            continue
        if FLAG.fullmatch(word):
            flag = word.split("=", 1)[0]
            known = VAULTSEEK_FLAGS if placeholder else parser._option_string_actions
            if flag not in known:
                problems.append(f"`{' '.join(path)}` has no {flag}")
            elif not placeholder and "=" not in word:
                action = parser._option_string_actions[flag]
                takes = action.nargs is None or (action.nargs == "?" and at < len(words) and not words[at].startswith("-"))
                at += 1 if takes and action.nargs != 0 else 0
            continue
        sub = _subcommands(parser)
        if sub is None or placeholder:
            continue  # a positional argument
        if word in sub.choices:
            parser = sub.choices[word]
            path.append(word)
        elif PLACEHOLDER.fullmatch(word):
            placeholder = True
        else:
            problems.append(f"`{' '.join(path)}` has no subcommand {word!r}")
            break
    return problems


def _words(rest: str) -> list[str]:
    try:
        return shlex.split(rest)
    except ValueError:  # an unbalanced quote in prose: plain words are enough to check
        return rest.split()


def test_every_command_line_in_the_docs_exists() -> None:
    problems = []
    seen = 0
    for code in all_code():
        for rest in command_lines(code):
            seen += 1
            problems += [f"{code.where()}: {problem}" for problem in check_command(_words(rest))]
    assert seen > 100  # the README and the manual are full of them: the parsing found them
    assert problems == []


def test_every_flag_written_alone_exists() -> None:
    """`--where 'priority<3'`, `-k 10`: a span that starts with a flag names flags of vaultseek,
    of a benchmark or script, or one of :data:`NOT_OUR_FLAGS`."""
    known = VAULTSEEK_FLAGS | _script_flags() | set(NOT_OUR_FLAGS)
    problems = []
    for code in all_code():
        if code.fence is None and FLAG.match(code.text):
            problems += [
                f"{code.where()}: {word}"
                for word in (w.split("=", 1)[0] for w in code.text.split())
                if FLAG.fullmatch(word) and word not in known
            ]
    assert problems == []


def test_the_command_checker_catches_what_is_not_there() -> None:
    assert check_command(_words('search "q" --kind pdf --json')) == []
    assert check_command(_words("hook install --user --dry-run")) == []
    assert check_command(_words("COMMAND --help")) == []
    assert check_command(_words("search -- -flag")) == []
    assert check_command(_words("search q --no-such-flag")) == ["`vaultseek search` has no --no-such-flag"]
    assert check_command(_words("daemon restart")) == ["`vaultseek daemon` has no subcommand 'restart'"]
    assert check_command(_words("hook install --vault ~/v --json")) == ["`vaultseek hook install` has no --json"]
    code = Code(REPO / "README.md", 1, "claude mcp add vaultseek -- vaultseek mcp --vault ~/vault", "")
    assert list(command_lines(code)) == [" mcp --vault ~/vault"]


# -- configuration keys ------------------------------------------------------------------------

KEY_SPAN = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
KEY_FAMILIES = {key.split("_")[0] for key in KEYS if "_" in key}
"""``hook_…``, ``intake_…``, ``llm_…``: a span named like a key of one of these families is read
as a key (unless it is one of :data:`NOT_KEYS`)."""
NOT_KEYS = {
    "bm25_rank": "a field of each search result (JSON output, Python API)",
    "deep_rank": "a field of each search result (JSON output, Python API)",
    "links_rank": "a field of each related note (JSON output, Python API)",
    "vector_rank": "a field of each related note (JSON output, Python API)",
    "deep_similarity": "a field of each related note (JSON output, Python API)",
    "max_tokens": "a field of the search request (JSON, Python API)",
    "link_names": "an index table docs/links.md describes",
    "llm_unavailable": "an error code of the HTTP API",
    "llm_error": "an error code of the HTTP API",
    "model_missing": "an error code of the HTTP API",
    "a": "docs/research/embedding-model.md: `a = 5e-4`, the SIF weighting formula's constant",
    "intake_domain": "a frontmatter key intake writes in a filed note (docs/intake.md)",
    "intake_original": "a frontmatter key intake writes in a filed note (docs/intake.md)",
}


def test_every_toml_block_holds_only_real_keys() -> None:
    problems, blocks = [], 0
    for path in USER_DOCS:
        text = path.read_text("utf-8")
        for match in re.finditer(r"^```toml\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
            blocks += 1
            data = tomllib.loads(match.group(1))
            data = data.get("vaultseek", data)
            problems += [f"{path.relative_to(REPO)}: {key}" for key in data if key not in KEYS]
    assert blocks >= 2
    assert problems == []


def test_every_config_key_the_docs_name_exists() -> None:
    assert [problem for path in USER_DOCS for problem in key_problems(path)] == []


def test_the_key_checker_catches_what_is_not_there(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Raise `hook_min_similarity`, or set `top_k = 5` and `VAULTSEEK_TOPK=5`; `bm25_rank` is\n"
        "a result field, and `a = 5e-4` a formula's.\n\n"
        "| signal | setting |\n|---|---|\n| title | `title_matching` |\n\n"
        "## Settings by topic\n\n- **Search**: `top_k`, `ocr_langs`\n",
        "utf-8",
    )
    flagged = {problem.rsplit(": ", 1)[1] for problem in key_problems(page)}
    assert flagged == {"hook_min_similarity", "VAULTSEEK_TOPK", "title_matching", "ocr_langs"}


def key_problems(path: Path) -> list[str]:
    """Config keys named in config context that ``Config`` does not have: `key = value` spans,
    ``VAULTSEEK_<KEY>`` variables, a table's "setting" column, a "Settings by topic" section's
    names, and spans shaped like a key family's (`hook_min_relevance`)."""
    text = path.read_text("utf-8")
    name = _relative(path)
    named = [match.group(1).lower() for match in re.finditer(r"\bVAULTSEEK_([A-Z][A-Z0-9_]*)", text)]
    problems = [f"{name}: VAULTSEEK_{key.upper()}" for key in named if key not in KEYS]
    problems += [f"{name}: {key}" for key in _setting_columns(text) if key not in KEYS]
    if "## Settings by topic" in text:
        topics = text.split("## Settings by topic", 1)[1].split("\n## ", 1)[0]
        problems += [f"{name}: {key}" for key in re.findall(r"`([^`]+)`", topics) if key not in KEYS]
    for code in code_in(path):
        if code.fence is not None:
            continue
        assignment = re.fullmatch(r"([a-z][a-z0-9_]*) = \S.*", code.text)  # TOML, not `k=5`
        key = assignment.group(1) if assignment else code.text if KEY_SPAN.fullmatch(code.text) else None
        if key is None or key in KEYS or key in NOT_KEYS:
            continue
        if assignment or key.split("_")[0] in KEY_FAMILIES:
            problems.append(f"{code.where()}: {key}")
    return problems


def _setting_columns(text: str) -> Iterator[str]:
    """The names in a Markdown table's "setting" column (the signals table in docs/search.md)."""
    column = None
    for line in text.splitlines():
        if not line.startswith("|"):
            column = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if column is None:
            column = cells.index("setting") if "setting" in cells else -1
        elif column >= 0 and column < len(cells) and not set(cells[column]) <= set("-: "):
            yield from re.findall(r"`([^`]+)`", cells[column])


# -- no scratch paths --------------------------------------------------------------------------

TMP = re.compile(r"/tmp\b")
TMP_ALLOWED = {
    ("agents/daemon_client.py", "longer paths fall back to /tmp"):
        "where the daemon's socket goes when its usual path is too long for a Unix socket",
}
"""``/tmp`` written on purpose: (file under src/vaultseek, the text), and why."""


def test_user_docs_name_no_tmp_paths() -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in USER_DOCS
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1)
        if TMP.search(line)
    ]
    assert found == []


def _docstrings_and_comments(path: Path) -> Iterator[tuple[int, str]]:
    source = path.read_text("utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            yield node.lineno, node.value.value  # docstrings, attribute docstrings included


def test_package_docstrings_and_comments_name_no_tmp_paths() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        for line, text in _docstrings_and_comments(path):
            for match in TMP.finditer(text):
                context = text[max(0, match.start() - 40) : match.end()]
                if not any(name == file and snippet in " ".join(text.split()) for file, snippet in TMP_ALLOWED):
                    found.append(f"{name}:{line}: …{' '.join(context.split())}")
    assert found == []


@pytest.mark.parametrize(("name", "snippet"), sorted(TMP_ALLOWED))
def test_each_allowed_tmp_path_is_still_there(name: str, snippet: str) -> None:
    """An exception that no longer matches anything goes from the list."""
    texts = [" ".join(text.split()) for _, text in _docstrings_and_comments(SRC / name)]
    assert any(snippet in text for text in texts)
