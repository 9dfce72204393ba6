"""Secrets written the ways people write them in notes and terminals — in code spans, tables,
bold labels, XML, tool flags, other languages, headers — never come back out of search, MCP, the
PostToolUse hook or intake's records; and the look-alikes in ordinary shell docs stay."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import mcp_server, run_cli
from fake_secrets import HEX, _Gen
from vaultseek import open_index
from vaultseek.agents.hooks import HookSettings, post_tool_use_output
from vaultseek.index.credentials import scrub

_G = _Gen(2929)
SECRETS = {name: _G.password() for name in (
    "codespan", "table", "bold", "xml", "mysql", "docker", "redis", "german", "spanish", "french")}
SECRETS["token"] = _G.chars(HEX, 39) + "f"
SECRETS["cookie"] = _G.mixed(32)
SECRETS["sk"] = "sk-" + _G.chars(HEX, 31) + "a"

FORMS = {
    "codespan": ("wifi password: `{}`", "password-assignment"),
    "table": ("| service | password |\n|---|---|\n| router | `{}` |", None),
    "bold": ("**Password:** `{}`", "password-assignment"),
    "xml": ("<settings><password>{}</password></settings>", "password-assignment"),
    "mysql": ("mysql -u root -p{} notes_db", "cli-password"),
    "docker": ("docker login -u deploy -p {} registry.example.com", "cli-password"),
    "redis": ("redis-cli -h cache.internal -a {} ping", "cli-password"),
    "german": ("WLAN Passwort: {}", "password-assignment"),
    "spanish": ("contraseña: {}", "password-assignment"),
    "french": ("mot de passe : {}", "password-assignment"),
    "token": ("Authorization: Token {}", "bearer-token"),
    "cookie": ("curl -H 'Cookie: sessionid={}; theme=dark' https://app.example.com", "cookie-header"),
    "sk": ("summariser key {}", "openai-api-key"),
}


@pytest.mark.parametrize("form", FORMS, ids=str)
def test_each_form_is_redacted_under_its_name(form: str) -> None:
    template, name = FORMS[form]
    result = scrub(template.replace("{}", SECRETS[form]))
    assert SECRETS[form] not in result.text
    if name is not None:
        assert result.counts.get(name) == 1, result


def test_a_password_column_in_a_table_row_is_redacted() -> None:
    """``| password | `x` |`` as a two-cell row, and the key in a later column of a wider row."""
    secret = SECRETS["table"]
    for row in (f"| password | `{secret}` |", f"| router | password | `{secret}` |"):
        assert scrub(row).text.count("[REDACTED:password-assignment]") == 1, row


@pytest.mark.parametrize("line", [
    "mkdir -p ~/notes/archive", "ssh -p 22 deploy@example.com", "scp -P 2222 file host:",
    "docker run -p 8080:80 nginx", "docker login registry.example.com", "mysql -P 3306 -h db.internal",
    "mysql -u root -p notes_db", "mysql -u {{user}} -p{{password}}", "ls -a; redis-cli ping",
    "redis-cli -a $REDIS_PASSWORD", "docker login -p $(cat ~/.pw) registry.example.com",
    "Cookie: theme=dark; lang=en", "Authorization: Token <your token>", "resenha: muito boa",
    "password: `<your password>`", "Passwort: `$PASSWORT`", "sk-learn-is-a-python-library-name-2024",
    "| Option | Description |\n|---|---|\n| `password` | the password to use |",
])
def test_look_alikes_in_ordinary_docs_are_kept(line: str) -> None:
    assert scrub(line).text == line


@pytest.mark.parametrize("template", [
    "the wifi password: {} until the router is replaced",
    "db password={} (rotated in May)",
    "Passwort: {} bis Ende Mai",
])
def test_a_password_followed_by_more_words_is_redacted(template: str) -> None:
    secret = "hunter" + _G.chars(HEX, 6) + "x9"
    result = scrub(template.format(secret))
    assert secret not in result.text and result.counts.get("password-assignment") == 1, result


@pytest.mark.parametrize("line", [
    "Password: Enter your password and press OK", "password: SHA256 hashed before storing",
    "password: 8 characters minimum", "password: AES-256 encrypted at rest",
    "password: v1.2.3-beta introduced it", "the password: required for every login",
])
def test_prose_after_a_password_key_is_kept(line: str) -> None:
    assert scrub(line).text == line


@pytest.fixture
def planted(vault: Path, write: Callable[..., Path]) -> Path:
    body = "\n\n".join(f"Setup step {i}:\n\n{template.replace('{}', SECRETS[form])}"
                       for i, (form, (template, _n)) in enumerate(FORMS.items()))
    write("home/network.md", f"# Home network walrus setup\n\n{body}\n")
    write("home/plain.md", "# Plain\n\nNothing secret here, only prose about the walrus garden.\n")
    return vault


def _leaked(text: str) -> list[str]:
    return [form for form, secret in SECRETS.items() if secret in text]


def test_search_returns_none_of_them_and_the_database_holds_none(planted: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    with open_index(planted, db=db, create=True) as index:
        index.sync()
        found = index.search("walrus setup step", mode="bm25")
        shown = json.dumps(found.to_dict())
        assert "network.md" in shown and "[REDACTED:" in shown
        assert _leaked(shown) == []
        index.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("index.db*"))
    assert [form for form, secret in SECRETS.items() if secret.encode() in raw] == []


def test_mcp_returns_none_of_them(planted: Path) -> None:
    with open_index(planted, create=True) as index:
        index.sync()

    async def calls() -> list[Any]:
        from mcp import Client

        params = mcp_server(planted)
        async with Client(params) as client:
            found = await client.call_tool("search", {"query": "walrus setup step", "k": 10})
            note = await client.call_tool("get_note", {"path": "home/network.md"})
            return [found, note]

    answers = asyncio.run(calls())
    dumped = "\n".join(json.dumps(a.structured_content) + str(a.content) for a in answers)
    assert "walrus" in dumped and "[REDACTED:" in dumped
    assert _leaked(dumped) == []


def test_the_post_tool_use_hook_does_not_repeat_a_token_the_tool_printed(planted: Path) -> None:
    filler = [f"step {i}: compiled module {i} without warnings" for i in range(600)]
    printed = [
        "Login with: docker login -u deploy -p " + SECRETS["docker"] + " registry.example.com",
        "walrus deploy failed: Authorization: Token " + SECRETS["token"] + " was rejected",
        "retrying with summariser key " + SECRETS["sk"],
    ]
    output = "\n".join(filler[:300] + printed + filler[300:])
    payload = {"tool_name": "Bash", "tool_input": {"command": "make deploy walrus"},
               "tool_response": {"stdout": output, "stderr": ""}}
    with open_index(planted, create=True) as index:
        index.sync()
        answer = post_tool_use_output(index, payload, HookSettings(), last_prompt="why did the walrus deploy fail?")
    context = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    assert "walrus deploy failed" in context and "[REDACTED:" in context
    assert _leaked(context) == []


def test_intake_keeps_no_secret_name_in_its_assessment_and_only_its_owner_reads_it(vault: Path) -> None:
    (vault / "cooking").mkdir()
    (vault / "cooking" / "bread.md").write_text("# Bread\n\nBake the dough in a hot oven.\n", "utf-8")
    token = "gh" + "p_" + _G.mixed(36)
    inbox = vault / "_intake" / "inbox"
    inbox.mkdir(parents=True)
    item = inbox / f"{token}.md"
    item.write_text("# Sourdough\n\nKnead the dough and bake the bread in a hot oven.\n", "utf-8")
    result = run_cli("intake", str(item), "--json", "--domain", "cooking", "--vault", str(vault))
    assert result.returncode == 0, result.stderr
    records = list((vault / ".vaultseek" / "intake" / "assessments").glob("*.json"))
    assert records
    for record in records:
        text = record.read_text("utf-8")
        assert token not in text and "REDACTED" in json.loads(text)["source"]
        assert stat.S_IMODE(record.stat().st_mode) == 0o600
