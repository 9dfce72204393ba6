"""The study app's front door on loopback bindings: which Host names it answers (DNS
rebinding) and which Origins (an opaque ``Origin: null`` is anyone's page), over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.standin_llm import StandinLLM

from study_fixtures import make_app
from vaultseek.web.security import host_name, served_hosts


@pytest.fixture
def second_loopback(study_vault: Path, tmp_path: Path, standin: StandinLLM) -> Iterator[Any]:
    """The app as ``vaultseek serve --host 127.0.0.2`` runs it (no token needed there), on a
    real socket."""
    from vaultseek.web.server import BackgroundServer

    app = make_app(study_vault, tmp_path / "index.db", standin.url, serve_host="127.0.0.2")
    try:
        with BackgroundServer(app, host="127.0.0.2") as server:
            yield server
    finally:
        app.notebook.close()


def test_a_loopback_server_answers_only_its_own_host_names(second_loopback: Any) -> None:
    port = second_loopback.url.rsplit(":", 1)[1]
    assert second_loopback.url.startswith("http://127.0.0.2:")
    with httpx.Client(base_url=second_loopback.url, timeout=30) as http:
        own = http.get("/api/search", params={"q": "notice period"})
        assert own.status_code == 200 and own.json()["results"]
        assert http.get("/api/documents", headers={"host": f"localhost:{port}"}).status_code == 200
        for host in ("evil.example", f"evil.example:{port}", f"127.0.0.2.evil.example:{port}",
                     f"127.0.0.1:{port}", f"[::1]:{port}", "127.0.0.2:80:80", ""):  # fmt: skip
            rebound = http.get("/api/search", params={"q": "notice period"}, headers={"host": host})
            assert rebound.status_code == 403, host
            assert rebound.json()["error"]["code"] == "forbidden_host" and "results" not in rebound.json()


def test_an_opaque_origin_is_refused(second_loopback: Any, client: Any) -> None:
    with httpx.Client(base_url=second_loopback.url, timeout=30) as http:
        for response in (
            http.get("/api/search", params={"q": "notice period"}, headers={"origin": "null"}),
            http.post("/api/chat", json={"question": "notice period"}, headers={"origin": "null"}),
            http.get("/api/documents", headers={"origin": "null"}),
        ):
            assert response.status_code == 403 and response.json()["error"]["code"] == "cross_origin"
        own = http.get("/api/documents", headers={"origin": second_loopback.url})
        assert own.status_code == 200
    # The default binding (127.0.0.1) refuses it too.
    refused = client.post("/api/chat", json={"question": "notice period"}, headers={"origin": "null"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "cross_origin"


@pytest.mark.parametrize(
    ("header", "name"),
    [("127.0.0.2:8765", "127.0.0.2"), ("LocalHost:8765", "localhost"), ("[::1]:8765", "::1"),
     ("[0:0::1]", "::1"), ("localhost", "localhost"), ("evil.example", "evil.example"),
     ("[127.0.0.1]", None), ("a:b:c", None), ("localhost:http", None), ("", None), ("u@localhost", None)],
)  # fmt: skip
def test_host_header_names(header: str, name: str | None) -> None:
    assert host_name(header) == name


def test_served_hosts_per_binding() -> None:
    assert served_hosts("127.0.0.2") == {"127.0.0.2", "localhost"}
    assert served_hosts("127.0.0.1") == {"127.0.0.1", "localhost"}
    assert served_hosts("::1") == {"::1", "localhost"}
    assert served_hosts("localhost") == {"localhost", "127.0.0.1", "::1"}
    assert served_hosts("0.0.0.0") is None and served_hosts("192.168.1.5") is None  # the token guards
