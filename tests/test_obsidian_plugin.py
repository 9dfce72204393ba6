"""The Obsidian plugin (``obsidian-plugin/``, shipped built in ``vaultseek/obsidian/plugin/``).

The Obsidian app cannot run here. What runs instead: the plugin's own tests under Node
(``node --test``, with the project's stand-in for the ``obsidian`` module) against the shipped
``main.js``; the same bundle against a real ``vaultseek serve --token-file`` (search with
Obsidian's filters, related notes, the index state and a re-index, a wrong token, an empty index,
a server that is down, the streamed chat); the install command; and that the shipped bundle is
what the sources build (when the npm toolchain is installed in ``obsidian-plugin/``)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.support.standin_llm import StandinLLM

from study_fixtures import missing, serve_with_token

REPO = Path(__file__).resolve().parents[1]
PLUGIN_SOURCES = REPO / "obsidian-plugin"
SHIPPED = REPO / "src" / "vaultseek" / "obsidian" / "plugin"
TOKEN = "obsidian-plugin-test-token-1234"
NOTES = {
    "law/tenancy.md": """
        ---
        tags: [law/tenancy]
        ---
        # Tenancy

        ## Notice period

        The notice period for a tenancy is three months. Termination must be in writing and
        signed by both parties.
        """,
    "law/deposit.md": """
        ---
        tags: [law]
        ---
        # Deposit

        The landlord returns the deposit within thirty days after the tenancy ends.
        """,
    "cooking/bread.md": """
        ---
        tags: [food]
        ---
        # Sourdough bread

        ## Baking

        Bake the loaf hot with steam; the [[starter]] gives it its sour taste.
        """,
    "cooking/starter.md": """
        # Starter

        Feed the sourdough starter with equal weights of flour and water twice a day.
        """,
}


def node() -> str:
    found = shutil.which("node")
    if found is None:
        missing("node is not installed")
    assert found is not None
    return found


def run_node_tests(test_file: str, env: dict[str, str] | None = None) -> None:
    result = subprocess.run([node(), "--require", "./test/standin/register.cjs", "--test",
                             test_file], check=False, cwd=PLUGIN_SOURCES, capture_output=True, text=True, timeout=300,
                            env={**os.environ, **(env or {})})  # fmt: skip
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "# fail 0" in result.stdout and "# pass 0" not in result.stdout, result.stdout[-3000:]


def make_vault(root: Path, notes: dict[str, str]) -> Path:
    vault = root / "vault"
    vault.mkdir(parents=True)
    for rel, text in notes.items():
        target = vault / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), "utf-8")
    return vault


def test_the_plugins_unit_tests_pass_on_the_shipped_bundle() -> None:
    run_node_tests("test/unit.test.cjs")


def test_the_plugin_against_a_real_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault(tmp_path / "full", NOTES)
    empty = make_vault(tmp_path / "empty", {})
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    with StandinLLM() as llm:
        monkeypatch.setenv("VAULTSEEK_LLM_URL", llm.url)
        monkeypatch.setenv("VAULTSEEK_LLM_MODEL", "standin")
        with serve_with_token(vault, token_file, tmp_path / "serve.log") as served, \
                serve_with_token(empty, token_file, tmp_path / "empty.log") as bare:  # fmt: skip
            run_node_tests("test/integration.test.cjs", {"VAULTSEEK_URL": served.url, "VAULTSEEK_TOKEN": TOKEN,
                                                         "VAULTSEEK_VAULT": str(vault.resolve()),
                                                         "VAULTSEEK_EMPTY_URL": bare.url})  # fmt: skip
            assert "Traceback" not in served.output()


def test_the_shipped_bundle_is_what_the_sources_build() -> None:
    manifest = json.loads((SHIPPED / "manifest.json").read_text("utf-8"))
    assert manifest == json.loads((PLUGIN_SOURCES / "manifest.json").read_text("utf-8"))
    assert manifest["version"] == json.loads((PLUGIN_SOURCES / "package.json").read_text("utf-8"))["version"]
    assert (SHIPPED / "styles.css").read_bytes() == (PLUGIN_SOURCES / "styles.css").read_bytes()
    assert b"var VaultseekPlugin = class extends import_obsidian" in (SHIPPED / "main.js").read_bytes()
    if not (PLUGIN_SOURCES / "node_modules" / "esbuild").is_dir():
        return  # the toolchain is not installed (npm ci in obsidian-plugin/): presence and version only
    result = subprocess.run([node(), "esbuild.config.mjs", "check"], check=False, cwd=PLUGIN_SOURCES, capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def install(vault: Path) -> tuple[int, str, str]:
    from vaultseek.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", out)
        patch.setattr("sys.stderr", err)
        code = main(["obsidian", "install", "--vault", str(vault)])
    return code, out.getvalue(), err.getvalue()


def test_install_copies_the_plugin_into_the_vault_and_says_how_to_enable_it(tmp_path: Path) -> None:
    vault = tmp_path / "My Vault"
    code, _out, err = install(vault)
    assert (code, err.splitlines()[0]) == (2, f"error: no vault at {vault}: the folder does not exist")
    vault.mkdir()
    code, _out, err = install(vault)
    assert code == 2 and "is not an Obsidian vault yet (it has no .obsidian folder)" in err
    assert "open the folder once in Obsidian" in err and "Traceback" not in err
    assert not (vault / ".obsidian").exists()  # nothing made on a refusal

    (vault / ".obsidian").mkdir()
    code, out, _err = install(vault)
    folder = vault / ".obsidian" / "plugins" / "vaultseek"
    assert code == 0 and out.startswith(f"vaultseek plugin 0.1.0 installed in {folder}")
    assert "Community plugins" in out and "vaultseek serve --vault" in out
    for name in ("main.js", "manifest.json", "styles.css"):
        assert (folder / name).read_bytes() == (SHIPPED / name).read_bytes()

    (folder / "data.json").write_text('{"token": "kept"}')  # the plugin's settings
    (folder / "main.js").write_text("an older build")
    assert install(vault)[1].startswith("vaultseek plugin 0.1.0 updated in")
    assert (folder / "main.js").read_bytes() == (SHIPPED / "main.js").read_bytes()
    assert (folder / "data.json").read_text() == '{"token": "kept"}'
    (vault / ".obsidian" / "community-plugins.json").write_text('["vaultseek"]')
    code, out, _err = install(vault)
    assert code == 0 and out.splitlines() == [f"vaultseek plugin 0.1.0 already up to date in {folder}",
                                              "It is enabled in this vault."]  # fmt: skip
    assert sorted(p.name for p in folder.iterdir()) == ["data.json", "main.js", "manifest.json", "styles.css"]


def test_the_index_state_and_a_reindex_over_http(client: Any, study_vault: Path) -> None:
    state = client.get("/api/index/state").json()
    assert (state["files"], state["indexing"], state["indexing_error"], state["deep"]) == (2, False, None, None)
    assert state["vault"] == str(study_vault.resolve()) and state["last_indexed"]
    (study_vault / "law" / "lease.md").write_text("# Lease\n\nThe lease runs for two years.\n", "utf-8")
    queued = client.post("/api/index/sync")
    assert (queued.status_code, queued.json()) == (202, {"queued": True})
    done = client.post("/api/index/sync", json={"wait": True}).json()
    assert (done["queued"], done["files"], done["indexing"]) == (False, 3, False)
    for body in ({"wait": "yes"}, {"later": True}, [1]):
        refused = client.post("/api/index/sync", json=body)
        assert refused.status_code == 400 and refused.json()["error"]["message"] == 'the body is {"wait": true | false} or empty'
