"""Fixtures for the study app tests: a vault with two topics in two folders, a stand-in LLM,
the app (Starlette TestClient, or uvicorn on a real socket)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vaultseek.bench.standin_llm import StandinLLM

STUDY_NOTES = {
    "law/tenancy.md": """
        ---
        tags: [law/tenancy]
        ---
        # Tenancy

        ## Notice period

        The notice period for a tenancy is three months. Termination must be in writing and
        signed by both parties.
        """,
    "cooking/bread.md": """
        ---
        tags: [food]
        ---
        # Sourdough

        ## Feeding the starter

        Feed the sourdough starter with equal weights of flour and water twice a day, and keep
        it warm so the yeast stays active.
        """,
}


def make_study_vault(root: Path) -> Path:
    vault = root / "vault"
    for rel, text in STUDY_NOTES.items():
        target = vault / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return vault


def make_app(vault: Path, db: Path, llm_url: str, **settings: Any) -> Any:
    from vaultseek.config import load_config
    from vaultseek.engine import Index
    from vaultseek.web.app import create_app

    settings = {"llm_model": "standin", **settings}
    config = load_config(vault=vault, db=db, llm_url=llm_url, **settings)
    app = create_app(lambda: Index(config, create=True), config)
    assert app.notebook.kb.ingest.idle.wait(60)
    return app


@pytest.fixture
def standin() -> Iterator[StandinLLM]:
    with StandinLLM() as server:
        yield server


@pytest.fixture
def study_vault(tmp_path: Path) -> Path:
    return make_study_vault(tmp_path)


@pytest.fixture
def app(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> Iterator[Any]:
    application = make_app(study_vault, tmp_path / "index.db", standin.url)
    yield application
    application.notebook.close()


@pytest.fixture
def client(app: Any) -> Iterator[Any]:
    from starlette.testclient import TestClient

    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        yield test_client


@pytest.fixture
def live(app: Any) -> Iterator[Any]:
    from vaultseek.web.server import BackgroundServer

    with BackgroundServer(app) as server:
        yield server


def envelopes(lines: Any) -> list[dict[str, Any]]:
    import json

    return [json.loads(line) for line in lines if line.strip()]
