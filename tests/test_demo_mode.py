"""Demo mode: ``vaultseek serve --demo`` as its own process (what a new user runs), with no
model server anywhere: the bundled demo vault, the built-in stand-in model (it quotes the
retrieved passages with their citations and builds the study hub's JSON from their sentences),
every page and the chat over HTTP, nothing listening but the app's own port, and the pages in
Chromium at 1280 and 390 px.

The study app's hub and dashboard screenshots in ``docs/images/study/`` come from the demo: each
run writes them there (hub-1280.png, hub-390.png, dashboard-1280.png, dashboard-390.png) and to
``tests/artifacts/``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.browser import chromium
from tests.support.ports import free_port

from study_fixtures import wait_until_serving

ROOT = Path(__file__).parent.parent
DOC_IMAGES = ROOT / "docs" / "images" / "study"
ARTIFACTS = Path(__file__).parent / "artifacts"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """The demo app's URL and process id. No LLM URL is set: the app must need none."""
    port = free_port()
    logs = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTSEEK_LLM")}
    env["VAULTSEEK_LLM_URL"] = "http://127.0.0.1:9/nothing-listens-here"  # were it used, every call would fail
    log = open(logs / "serve.log", "w+b")  # noqa: SIM115 - closed in the finally below
    process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", "serve", "--demo", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, env=env, cwd=logs)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(process, log, lambda: httpx.get(f"{url}/api/status", timeout=2).json()["index"]["files"] > 0,
                           "vaultseek serve --demo", seconds=60)  # fmt: skip
        log.seek(0)
        assert b"DEMO MODE" in log.read()
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(timeout=15)
        log.close()


def listening_ports(pid: int) -> set[int]:
    """The TCP ports the process listens on (from /proc: its sockets, and the kernel's table)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_the_demo_is_labelled_and_listens_only_on_its_own_port(demo: tuple[str, int]) -> None:
    url, pid = demo
    status = httpx.get(f"{url}/api/status").json()
    assert status["llm"]["backend"] == "demo" and status["llm"]["ok"] and status["llm"]["demo"] is True
    assert "demo" in status["llm"]["model"] and "no model" in status["llm"]["model"]
    assert status["index"]["files"] == 5 and status["index"]["chunks"] >= 5
    assert httpx.get(url + "/").status_code == 200
    assert httpx.get(url + "/study").headers["location"] == "/#hub"
    for page in ("hub", "dashboard"):
        assert httpx.get(f"{url}/static/js/pages/{page}.js").status_code == 200
    assert listening_ports(pid) == {int(url.rsplit(":", 1)[1])}


def test_the_chat_quotes_the_notes_with_citations(demo: tuple[str, int]) -> None:
    url, _pid = demo
    with httpx.stream("POST", f"{url}/api/chat", json={"question": "What gas does photosynthesis release?"}, timeout=30) as answer:
        assert answer.status_code == 200
        envelopes = [json.loads(line) for line in answer.iter_lines() if line.strip()]
    kinds = [e["type"] for e in envelopes]
    assert "error" not in kinds and kinds[-1] == "done"
    text = "".join(e["data"]["text"] for e in envelopes if e["type"] == "text")
    citations = next(e["data"]["citations"] for e in envelopes if e["type"] == "metadata")
    cited = {c["n"]: c["path"] for c in citations}
    assert "oxygen" in text and "no language model wrote this answer" in text
    quoted = [int(n) for n in re.findall(r"\[(\d+)\]", text)]
    assert quoted and all(cited.get(n) for n in quoted)
    assert "biology/photosynthesis.md" in {cited[n] for n in quoted}


def test_every_kind_of_study_material_is_made_and_studied(demo: tuple[str, int]) -> None:
    url, _pid = demo
    made = {}
    for kind, count in (("quiz", 4), ("flashcards", 5), ("workshop", 3), ("mindmap", 4)):
        with httpx.stream("POST", f"{url}/api/study/materials?stream=1", json={"kind": kind, "count": count}, timeout=60) as response:
            lines = [json.loads(line) for line in response.iter_lines() if line.strip()]
        stages = [line["stage"] for line in lines]
        assert stages[-1] == "done", lines[-1]
        assert "writing" in stages and "checking" in stages
        material = lines[-1]["material"]
        assert material["problems"] == [], material["problems"]  # the stand-in's JSON passes every check
        made[kind] = material
    questions = made["quiz"]["content"]["questions"]
    assert len(questions) == 4 and all(q["source"] in {s["number"] for s in made["quiz"]["sources"]} for q in questions)
    answers = [q["correct_index"] for q in questions]
    graded = httpx.post(f"{url}/api/study/materials/{made['quiz']['id']}/attempts", json={"answers": answers}).json()
    assert graded["score"] == 4
    assert len(made["flashcards"]["cards"]) == 5
    lesson = httpx.get(f"{url}/api/study/materials/{made['workshop']['id']}/lessons/1", timeout=30).json()
    assert lesson["markdown"].startswith("# ") and "## Key points" in lesson["markdown"] and "[" in lesson["markdown"]
    assert len(made["mindmap"]["content"]["branches"]) == 4
    board = httpx.get(f"{url}/api/study/dashboard").json()
    earned = {b["id"] for b in board["badges"] if b["earned"]}
    assert {"first_steps", "all_rounder", "first_quiz", "perfect_score"} <= earned


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def save_shot(page: Any, name: str) -> None:
    for folder in (DOC_IMAGES, ARTIFACTS):
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"{name}.png"), full_page=name.startswith("dashboard"))


@pytest.mark.parametrize("width", (1280, 390))
def test_the_demo_in_chromium(browser: Any, demo: tuple[str, int], width: int) -> None:
    url, _pid = demo
    page = browser.new_context(viewport={"width": width, "height": 860}).new_page()
    outside: list[str] = []
    page.on("request", lambda request: outside.append(request.url) if not request.url.startswith((url, "data:")) else None)
    page.goto(url + "/#hub")
    page.wait_for_selector("#model-status .label:has-text('demo')")
    page.wait_for_selector("#gen-count[max]")  # the kinds' limits have loaded
    assert "no language model runs" in page.wait_for_selector("#hub-demo:not([hidden])").inner_text()
    page.select_option("#gen-kind", "quiz")
    page.fill("#gen-count", "3")
    page.fill("#gen-topic", "photosynthesis")
    page.click("#gen-submit")
    page.wait_for_selector("#quiz-form")
    for n in range(3):
        page.locator(f'fieldset[data-n="{n}"] input').nth(n % 2).check()
    page.click("#quiz-submit")
    page.wait_for_selector("#quiz-score:has-text('Score')")
    page.evaluate("window.scrollTo(0, 0)")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    save_shot(page, f"hub-{width}")
    page.click("a[data-route=dashboard]")
    page.wait_for_selector("#dash-badges li")
    assert page.locator("#dash-badges li").count() == 25
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    save_shot(page, f"dashboard-{width}")
    assert outside == []


# -- --vault, and stopping it ------------------------------------------------------------------


def test_demo_on_your_own_vault_quotes_your_notes(sample_vault: Path) -> None:
    from conftest import SAMPLE_NOTES, run_cli

    assert run_cli("index", str(sample_vault)).returncode == 0
    shown = run_cli("serve", "--demo", "--vault", str(sample_vault), "--get", "/api/status")
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    assert status["llm"]["demo"] is True and status["index"]["files"] == len(SAMPLE_NOTES)
    refused = run_cli("serve", "--demo", "--db", str(sample_vault.parent / "x.db"), "--get", "/api/status")
    assert refused.returncode == 2 and refused.stderr.startswith("error: --db and --collection go with --vault")


def demo_process(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path, str]:
    """``serve --demo`` with its own TMPDIR, so its scratch folder can be watched."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    port = free_port()
    log = open(tmp_path / "serve.log", "w+b")  # noqa: SIM115 - the process holds it; closed with tmp_path
    process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", "serve", "--demo", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "TMPDIR": str(scratch)})  # fmt: skip
    return process, scratch, f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_demo_leaves_no_scratch_folder(tmp_path: Path, signum: int) -> None:
    from conftest import wait_for

    process, scratch, url = demo_process(tmp_path)
    try:
        assert wait_for(lambda: any(scratch.glob("vaultseek-demo-*")), 30)
        with open(tmp_path / "serve.log", "rb") as log:
            wait_until_serving(process, log, lambda: httpx.get(f"{url}/api/status", timeout=2).status_code == 200,
                               "vaultseek serve --demo", seconds=60)  # fmt: skip
        process.send_signal(signum)
        code = process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert code == (143 if signum == signal.SIGTERM else 0)
    assert list(scratch.glob("vaultseek-demo-*")) == []


def test_a_demo_stopped_while_it_starts_leaves_no_scratch_folder(tmp_path: Path) -> None:
    from conftest import wait_for

    process, scratch, _url = demo_process(tmp_path)
    try:
        assert wait_for(lambda: any(scratch.glob("vaultseek-demo-*/demo-vault")), 30)  # copying or indexing
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert code == 143
    assert list(scratch.glob("vaultseek-demo-*")) == []
