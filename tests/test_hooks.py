"""The Claude Code hooks, driven as Claude Code drives them: JSON on stdin of a real process."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_cli
from vaultseek import open_index
from vaultseek.agents.hooks import (
    HEADER,
    HookSettings,
    is_trivial,
    render_memory,
    text_of,
    user_prompt_context,
)


def event(prompt: str, **extra: object) -> str:
    return json.dumps({"session_id": "s-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt, **extra})  # fmt: skip


@pytest.fixture(autouse=True)
def patient_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold hook process (imports, model, vectors) can pass the 2 s product deadline on a
    loaded 2-core machine and then, rightly, fail open with no output. These tests are about
    what a hook answers, so they give it time; the deadline has its own test, which sets one."""
    monkeypatch.setenv("VAULTSEEK_HOOK_TIMEOUT", "30")


@pytest.fixture
def indexed(sample_vault: Path) -> Path:
    with open_index(sample_vault, create=True) as index:
        index.sync()
    return sample_vault


def log_text() -> str:
    path = Path(os.environ["XDG_STATE_HOME"]) / "vaultseek" / "hook.log"
    return path.read_text("utf-8") if path.exists() else ""


@pytest.mark.parametrize(
    "prompt",
    ["thanks", "Thanks!", "ok", "ok, go on", "yes please", "danke schön", "merci", "gracias",
     "好的", "ありがとう", "/compact", "/clear  ", "  ", "👍", "a b", "thank you so much!"],
)  # fmt: skip
def test_trivial_prompts(prompt: str) -> None:
    assert is_trivial(prompt)


@pytest.mark.parametrize(
    "prompt",
    ["how do we rotate refresh tokens?", "fix /home/me/app.py please", "Kündigungsfrist?",
     "what does _rrf_fuse do", "ok now rotate the tokens"],
)  # fmt: skip
def test_prompts_with_content_are_not_trivial(prompt: str) -> None:
    assert not is_trivial(prompt)


def test_user_prompt_submit_prints_the_documented_block(indexed: Path) -> None:
    result = run_cli("hook", "user-prompt-submit", "--vault", str(indexed),
                     stdin=event("how should we rotate refresh tokens?"))  # fmt: skip
    assert result.returncode == 0 and result.stderr == ""
    out = result.stdout
    assert out.startswith(HEADER + "\n\n### ")
    assert "(security/oauth.md)" in out
    assert "### Rotating refresh tokens (security/oauth.md)" in out
    assert "sourdough" not in out.lower()  # the bread note is not relevant
    again = run_cli("hook", "user-prompt-submit", "--vault", str(indexed),
                    stdin=event("how should we rotate refresh tokens?"))  # fmt: skip
    assert again.stdout == out  # deterministic


def test_unrelated_and_trivial_prompts_inject_nothing(indexed: Path) -> None:
    for prompt in ("thanks!", "/compact", "what is the airspeed velocity of an unladen swallow"):
        result = run_cli("hook", "user-prompt-submit", "--vault", str(indexed), stdin=event(prompt))
        assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), prompt


@pytest.mark.parametrize(
    "stdin",
    ["", "not json", "[1, 2]", '{"prompt": 5}', '{"no_prompt": true}', "\udcff".encode("utf-8", "surrogatepass").decode("latin-1")],
)  # fmt: skip
def test_garbage_input_fails_open(indexed: Path, stdin: str) -> None:
    result = run_cli("hook", "user-prompt-submit", "--vault", str(indexed), stdin=stdin)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert "failed open" in log_text()


def test_missing_index_and_damaged_index_fail_open(vault: Path, tmp_path: Path) -> None:
    (vault / "a.md").write_text("# A\n\nrefresh tokens rotate\n", "utf-8")
    result = run_cli("hook", "user-prompt-submit", "--vault", str(vault), stdin=event("rotate refresh tokens"))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert "IndexNotFoundError" in log_text()
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    result = run_cli("hook", "user-prompt-submit", "--vault", str(vault), "--db", str(junk),
                     stdin=event("rotate refresh tokens"))  # fmt: skip
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert "IndexCorruptError" in log_text()


def test_a_writer_holding_the_lock_does_not_block_the_hook(indexed: Path) -> None:
    with open_index(indexed) as index:
        index.conn.execute("BEGIN EXCLUSIVE")  # WAL: readers still read the last commit
        result = run_cli("hook", "user-prompt-submit", "--vault", str(indexed), stdin=event("rotate refresh tokens"))
        index.conn.execute("ROLLBACK")
    assert result.returncode == 0 and result.stdout.startswith(HEADER)


def test_a_stalled_daemon_fails_open_at_the_deadline(indexed: Path) -> None:
    import socket
    import time

    from vaultseek.agents import daemon_client
    from vaultseek.config import load_config

    path = daemon_client.socket_path(load_config(vault=indexed).db)
    daemon_client.make_private_dir(path.parent)
    stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stalled.bind(str(path))
    stalled.listen(4)  # accepts connections, never answers
    try:
        started = time.monotonic()
        result = run_cli("hook", "user-prompt-submit", "--vault", str(indexed),
                         stdin=event("rotate refresh tokens"), env={"VAULTSEEK_HOOK_TIMEOUT": "1"})  # fmt: skip
        elapsed = time.monotonic() - started
    finally:
        stalled.close()
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert elapsed < 5
    assert "failed open" in log_text()


def test_budget_is_respected_and_first_entry_kept(indexed: Path) -> None:
    with open_index(indexed) as index:
        out = user_prompt_context(index, {"prompt": "rotate refresh tokens revoke token family"},
                                  HookSettings(max_tokens=40))  # fmt: skip
    assert out.startswith(HEADER) and out.count("### ") == 1
    assert len(out) <= 40 * 4 + 2


def test_a_document_entry_says_where_to_look(indexed: Path) -> None:
    rows = "\n".join(f"{n},valve-{n},torque {n * 7} Nm" for n in range(1, 41))
    (indexed / "specs.csv").write_text(f"id,part,torque\n{rows}\n", "utf-8")
    with open_index(indexed) as index:
        index.sync()
        out = user_prompt_context(index, {"prompt": "what torque does valve-33 need?"},
                                  HookSettings(min_relevance=-1.0))  # fmt: skip
    assert "### specs · rows 22–41 (specs.csv)" in out


def test_render_memory_is_empty_without_results() -> None:
    assert render_memory([], (), max_tokens=500) == ""


def big_tool_event(prompt_session: str = "s-1") -> str:
    lines = [f"compiling module_{i}.c ... ok" for i in range(3000)]
    lines[1700] = "ERROR: refresh token rotation failed: token family revoked after reuse"
    return json.dumps({"session_id": prompt_session, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "make test"}, "tool_use_id": "t1",
                       "tool_response": {"stdout": "\n".join(lines), "stderr": "", "interrupted": False}})  # fmt: skip


def test_post_tool_use_adds_a_ranked_extract(indexed: Path) -> None:
    run_cli("hook", "user-prompt-submit", "--vault", str(indexed),
            stdin=event("why does the refresh token rotation fail?"))  # fmt: skip
    result = run_cli("hook", "post-tool-use", "--vault", str(indexed), stdin=big_tool_event())
    assert result.returncode == 0 and result.stderr == ""
    output = json.loads(result.stdout)
    assert set(output) == {"hookSpecificOutput"}
    assert set(output["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert output["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    context = output["hookSpecificOutput"]["additionalContext"]
    assert "token family revoked after reuse" in context
    assert "[lines 1699-1704]" in context or "line 1701" in context or "1701" in context
    assert len(context) < 400 * 4 + 400
    again = run_cli("hook", "post-tool-use", "--vault", str(indexed), stdin=big_tool_event())
    assert again.stdout == result.stdout


def test_post_tool_use_ignores_small_outputs_and_garbage(indexed: Path) -> None:
    small = json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "a\nb\n"})
    for stdin in (small, "{", "null"):
        result = run_cli("hook", "post-tool-use", "--vault", str(indexed), stdin=stdin)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_text_of_walks_tool_responses() -> None:
    assert text_of({"file": {"filePath": "/a", "content": "x\ny"}, "n": 3}) == "/a\nx\ny"
    assert text_of("plain") == "plain"
