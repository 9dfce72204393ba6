"""Commands that must say what went wrong, or what they did, instead of doing something else:
a busy port, a second index of a vault, a daemon beside a running watcher, options typed after
``--``. Each runs the real command in a child process, as a user would."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_cli, wait_for
from vaultseek.agents import daemon_client
from vaultseek.agents.watch import writer_active
from vaultseek.cli.main import build_parser
from vaultseek.config import Config, load_config


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port this process listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def db_of(vault: Path) -> Path:
    db = load_config(vault=vault).db
    assert db is not None
    return db


# -- a port in use -----------------------------------------------------------------------------


def test_serve_on_a_busy_port_is_one_line_and_exit_9(sample_vault: Path, tmp_path: Path, busy_port: int) -> None:
    db = tmp_path / "i.db"
    result = run_cli("serve", "--vault", str(sample_vault), "--db", str(db), "--port", str(busy_port))
    assert result.returncode == 9, result.stderr
    assert result.stdout == ""  # no "running at" banner for a server that never ran
    first, hint = result.stderr.splitlines()
    held = f"error: the study app cannot listen on 127.0.0.1:{busy_port}: the port is in use by pid {os.getpid()} ("
    assert first.startswith(held) and first.endswith(")"), first  # this test process holds it
    assert hint.startswith("hint: pass another --port (--port ") and hint.endswith("is free now), or stop what holds it")
    assert not db.exists()  # nothing was started


def test_mcp_http_has_its_own_default_port_and_checks_it(sample_vault: Path, busy_port: int) -> None:
    args = build_parser().parse_args(["mcp", "--http"])
    assert args.port == 8766 != Config().serve_port  # `serve` and `mcp --http` can run together
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    result = run_cli("mcp", "--http", "--port", str(busy_port), "--vault", str(sample_vault))
    assert result.returncode == 9, result.stderr
    assert result.stderr.startswith(f"error: the MCP server cannot listen on 127.0.0.1:{busy_port}: the port is in use")
    assert "Traceback" not in result.stderr and "Errno" not in result.stderr


def test_a_port_past_65535_is_refused_not_wrapped_around(sample_vault: Path, tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    served = run_cli("serve", "--vault", str(sample_vault), "--db", str(db), "--port", "99999")
    assert served.returncode == 2 and served.stdout == "", served.stdout  # no banner, no server
    assert served.stderr.splitlines()[0] == "error: arguments: `serve_port` must be a port from 1 to 65535 (got 99999)"
    mcp = run_cli("mcp", "--http", "--port", "99999", "--vault", str(sample_vault))
    assert mcp.returncode == 2 and "argument --port: '99999' is not a port from 1 to 65535" in mcp.stderr
    assert "Traceback" not in mcp.stderr and "unexpected" not in mcp.stderr


# -- which index is the vault's default --------------------------------------------------------


def status_db(vault: Path, *extra: str) -> str:
    result = run_cli("status", "--json", "--vault", str(vault), *extra)
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["db_path"])


def test_indexing_into_another_db_keeps_the_default(sample_vault: Path, tmp_path: Path) -> None:
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    default = db_of(sample_vault)
    other = tmp_path / "other.db"
    done = run_cli("index", str(sample_vault), "--db", str(other))
    assert done.returncode == 0, done.stderr
    assert other.exists()
    assert f"the vault's default index stays {default}" in done.stderr
    assert f"--db {other} --make-default" in done.stderr
    assert status_db(sample_vault) == str(default)  # a bare command still finds the old one
    assert status_db(sample_vault, "--db", str(other)) == str(other)

    made = run_cli("index", str(sample_vault), "--db", str(other), "--make-default")
    assert made.returncode == 0, made.stderr
    assert "default index" not in made.stderr
    assert status_db(sample_vault) == str(other)


def test_the_first_index_of_a_vault_is_its_default_wherever_it_is(sample_vault: Path, tmp_path: Path) -> None:
    first = tmp_path / "first.db"
    done = run_cli("index", str(sample_vault), "--db", str(first), "--quiet")
    assert done.returncode == 0 and done.stderr == ""
    assert status_db(sample_vault) == str(first)
    first.unlink()  # a default that is gone orphans nothing: the next index takes its place
    second = tmp_path / "second.db"
    done = run_cli("index", str(sample_vault), "--db", str(second))
    assert done.returncode == 0 and "default index" not in done.stderr
    assert status_db(sample_vault) == str(second)


# -- one writer: the daemon and `vaultseek watch` ----------------------------------------------


def test_daemon_start_refuses_while_watch_runs(sample_vault: Path) -> None:
    db = db_of(sample_vault)
    watch = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", "watch", "--vault", str(sample_vault)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert wait_for(lambda: writer_active(db), 30)
        for extra in ((), ("--foreground",)):
            refused = run_cli("daemon", "start", "--vault", str(sample_vault), *extra)
            assert refused.returncode == 4, refused.stderr
            assert refused.stdout == ""  # never "started"
            assert refused.stderr.startswith(f"error: another vaultseek is already watching the index {db} (`vaultseek watch`")
            assert "--no-watch" in refused.stderr
            assert daemon_client.is_running(db) is None
        beside = run_cli("daemon", "start", "--no-watch", "--vault", str(sample_vault))
        assert beside.returncode == 0 and beside.stdout.startswith("started"), beside.stderr
    finally:
        run_cli("daemon", "stop", "--vault", str(sample_vault))  # whichever started
        watch.send_signal(signal.SIGINT)
        watch.communicate(timeout=20)
    assert daemon_client.is_running(db) is None


# -- options after `--` ------------------------------------------------------------------------


def test_options_after_double_dash_get_a_hint(sample_vault: Path) -> None:
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    misplaced = run_cli("search", "--", "-flag", "--vault", str(sample_vault), "-k", "3")
    assert misplaced.returncode == 2
    assert misplaced.stderr.splitlines() == [
        "error: after --, every word is part of the query: --vault and -k are not read as options",
        f"hint: put options before --: vaultseek search --vault {sample_vault} -k 3 -- -flag",
    ]
    placed = run_cli("search", "--vault", str(sample_vault), "-k", "3", "--json", "--", "-flag tokens")  # (an exclusion alone asks what to look for)
    assert placed.returncode == 0, placed.stderr
    assert json.loads(placed.stdout)["query"] == "-flag tokens"


def test_an_exclusion_typed_as_a_word_of_its_own_says_to_quote_the_query(sample_vault: Path) -> None:
    """Unquoted, ``-android`` reaches argparse as an option: it answered "unrecognized
    arguments: -android" under the top command's usage, and ``-kubernetes`` "argument -k:
    invalid int value: 'ubernetes'"."""
    for words, quoted in ((["sync", "-android"], "'sync -android'"), (["-kubernetes"], "'WORDS -kubernetes'"),
                          (["--json", "tokens", "-draft*", "-k", "3"], "'tokens -draft*'")):  # fmt: skip
        refused = run_cli("search", "--vault", str(sample_vault), *words)
        assert refused.returncode == 2
        excluded = next(word for word in words if word.startswith("-") and word[1] != "-" and word != "-k")
        assert refused.stderr.splitlines() == [
            f"error: {excluded}: not an option of vaultseek search; an exclusion goes inside the quoted query",
            f"hint: quote the whole query as one word: vaultseek search {quoted}",
        ]
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    folder = run_cli("search", "--vault", str(sample_vault), "--folder", "-archive", "tokens")  # a value: argparse's word
    assert folder.returncode == 2 and "not an option" not in folder.stderr
    for words in (["-k3", "tokens"], ["-v", "tokens"], ["--", "tokens -android"]):  # options, and a query after --
        assert run_cli("search", "--vault", str(sample_vault), *words).returncode == 0, words


def test_a_query_typed_as_several_words_is_searched_as_one(sample_vault: Path) -> None:
    """``search rotate oauth tokens`` unquoted was "unrecognized arguments: oauth tokens"."""
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    quoted = run_cli("search", "--vault", str(sample_vault), "--json", "refresh token rotation")
    unquoted = run_cli("search", "--vault", str(sample_vault), "--json", "refresh", "token", "rotation")
    assert unquoted.returncode == 0, unquoted.stderr
    assert json.loads(unquoted.stdout)["query"] == "refresh token rotation"
    assert json.loads(unquoted.stdout)["results"] == json.loads(quoted.stdout)["results"] != []


def test_a_vault_given_as_a_bare_word_names_the_option_that_takes_it(sample_vault: Path) -> None:
    """``status ~/vault`` was argparse's "unrecognized arguments" under the top command's usage;
    in a search, the folder's path would have been searched as words."""
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    status = run_cli("status", str(sample_vault))
    assert status.returncode == 2
    assert status.stderr.splitlines() == [
        f"error: {sample_vault} is a folder: vaultseek status takes its vault as --vault PATH",
        f"hint: vaultseek status --vault {sample_vault}",
    ]
    fixed = status.stderr.splitlines()[1].removeprefix("hint: vaultseek ").split()
    assert run_cli(*fixed).returncode == 0
    search = run_cli("search", "tokens", str(sample_vault))
    assert search.returncode == 2
    assert search.stderr.splitlines() == [
        f"error: {sample_vault} is a folder: a vault is named with --vault, not in the query",
        f"hint: vaultseek search --vault {sample_vault} tokens",
    ]
    other = run_cli("status", "--vault", str(sample_vault), "no-such-folder")  # not a folder: argparse's own word
    assert other.returncode == 2 and "unrecognized arguments: no-such-folder" in other.stderr


def test_a_vault_not_indexed_yet_is_told_the_command_that_indexes_it(sample_vault: Path, tmp_path: Path) -> None:
    """Every command reading the index answers a missing one with the command line that makes
    it for the vault it was asked about, not ``vaultseek index <folder>``."""
    for words in (["search", "tokens"], ["status"], ["related", "oauth.md"], ["links", "oauth.md"], ["map"]):
        missing = run_cli(*words, "--vault", str(sample_vault))
        assert missing.returncode == 3, (words, missing.stderr)
        assert missing.stderr.splitlines()[-1] == f"hint: run `vaultseek index {sample_vault}` first", words
    elsewhere = tmp_path / "elsewhere.db"
    named = run_cli("search", "tokens", "--vault", str(sample_vault), "--db", str(elsewhere))
    assert named.stderr.splitlines() == [
        f"error: no index at {elsewhere}",
        f"hint: run `vaultseek index {sample_vault} --db {elsewhere}` first",
    ]
    made = run_cli("index", str(sample_vault), "--db", str(elsewhere), "--quiet")  # the hint's command works
    assert made.returncode == 0 and run_cli("search", "tokens", "--vault", str(sample_vault), "--db", str(elsewhere)).returncode == 0


# -- a folder for --db, deep search before the deep vectors ------------------------------------


def test_a_folder_given_as_the_index_is_one_line_and_exit_2(sample_vault: Path, tmp_path: Path) -> None:
    folder = tmp_path / "indexes"
    folder.mkdir()
    for command in (("index", str(sample_vault)), ("search", "sourdough", "--vault", str(sample_vault))):
        result = run_cli(*command, "--db", str(folder))
        assert result.returncode == 2, result.stderr
        assert result.stderr.splitlines() == [
            f"error: --db names the folder {folder}, not an index file",
            f"hint: give a file's path, e.g. --db {folder / 'index.db'}",
        ]
    from_env = run_cli("status", "--vault", str(sample_vault), env={"VAULTSEEK_DB": str(folder)})
    assert from_env.returncode == 2 and f"VAULTSEEK_DB={folder / 'index.db'}" in from_env.stderr
    assert list(folder.iterdir()) == []


def test_deep_search_without_deep_vectors_says_how_to_get_them(sample_vault: Path) -> None:
    assert run_cli("index", str(sample_vault), "--no-deep", env={"VAULTSEEK_DEEP_TIER": "true"}).returncode == 0
    result = run_cli("search", "sourdough", "--mode", "deep", "--no-daemon", env={"VAULTSEEK_DEEP_TIER": "true"})
    assert result.returncode == 2
    error, hint = result.stderr.splitlines()
    assert error == "error: deep search is unavailable: no deep vectors yet"
    assert hint.startswith("hint: run `vaultseek deep`") and "vaultseek status" in hint
    off = run_cli("search", "sourdough", "--mode", "deep", "--no-daemon")  # the tests' deep_tier = false
    assert off.returncode == 2 and "deep_tier = true" in off.stderr and "`vaultseek deep`" in off.stderr
