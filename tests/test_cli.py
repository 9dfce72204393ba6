"""The `vaultseek` command as a user runs it: a child process, real files, real exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import run_cli


def test_index_then_search_from_anywhere(sample_vault: Path, tmp_path: Path) -> None:
    done = run_cli("index", str(sample_vault))
    assert done.returncode == 0, done.stderr
    assert "4 added" in done.stdout
    # From an unrelated folder, search finds the vault that was just indexed.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = run_cli("search", "how do I rotate oauth tokens", cwd=elsewhere)
    assert found.returncode == 0, found.stderr
    assert "security/oauth.md" in found.stdout.splitlines()[0]
    # ... and says which vault it searched, since nothing named it
    shown = f"~/{sample_vault.relative_to(Path.home())}" if sample_vault.is_relative_to(Path.home()) else sample_vault
    assert found.stderr.splitlines() == [f"searching {shown} (the last vault indexed; --vault to choose)"]
    as_json = json.loads(run_cli("search", "oauth", "--json", cwd=elsewhere).stdout)
    assert as_json["vault"] == str(sample_vault) and as_json["vault_is_last_indexed"] is True
    inside = run_cli("search", "oauth", cwd=sample_vault / "security")
    named = run_cli("search", "oauth", "--json", "--vault", str(sample_vault), cwd=elsewhere)
    assert inside.stderr == "" and named.stderr == "" and "vault" not in json.loads(named.stdout)


def test_results_show_how_likely_they_answer_not_the_fused_score(sample_vault: Path) -> None:
    import re

    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    shown = run_cli("search", "rotate refresh tokens", "-k", "3", "--vault", str(sample_vault))
    entries = [line for line in shown.stdout.splitlines() if re.match(r" ?\d+\. ", line)]
    assert len(entries) == 3
    assert re.search(r"oauth\.md — OAuth token rotation  \d\d% likely relevant$", entries[0])
    assert entries[1].endswith("<1% likely relevant")  # a note that does not answer, said so
    assert not re.search(r"\d\.\d{4}", shown.stdout)  # no raw score such as 0.9450 or 0.0000
    chunks = run_cli("search", "rotate refresh tokens", "--view", "chunks", "-k", "1", "--vault", str(sample_vault))
    assert re.search(r"  \d\d% likely relevant · bm25 #\d", chunks.stdout) and not re.search(r"\d\.\d{4}", chunks.stdout)
    verbose = run_cli("search", "rotate refresh tokens", "-k", "3", "-v", "--vault", str(sample_vault))
    assert re.search(r"likely relevant · score \d\.\d{4}$", verbose.stdout.splitlines()[0])


def test_search_json_shape(sample_vault: Path) -> None:
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    done = run_cli("search", "_rrf_fuse", "--mode", "bm25", "--json", "--vault", str(sample_vault))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["query"] == "_rrf_fuse" and data["mode"] == "bm25" and data["view"] == "notes"
    assert list(data) == [
        "query", "mode", "view", "results", "notices", "intent", "no_match", "parsed", "reranking", "expansion", "alternatives",
    ]  # fmt: skip
    assert data["reranking"] is None and data["expansion"] is None  # off by default
    note = data["results"][0]
    assert list(note) == ["path", "title", "score", "relevance", "sections"]
    assert note["path"] == "code/fusion.md" and note["title"] == "fusion" and note["score"] == note["sections"][0]["score"]
    first = note["sections"][0]
    assert list(first) == ["path", "section", "heading_context", "label", "snippet", "score", "bm25_rank", "vec_rank",
                           "deep_rank", "relevance", "signals", "location", "chunk_id"]  # fmt: skip
    assert note["relevance"] == first["relevance"] and first["relevance"] > 0.5  # an identifier the note holds
    assert data["no_match"] is False
    assert first["location"] is None and first["label"] == first["section"]  # notes have no page or slide
    assert first["path"] == "code/fusion.md" and first["bm25_rank"] == 1 and first["vec_rank"] is None
    again = run_cli("search", "_rrf_fuse", "--mode", "bm25", "--json", "--vault", str(sample_vault))
    assert again.stdout == done.stdout  # byte-identical
    chunks = json.loads(run_cli("search", "_rrf_fuse", "--mode", "bm25", "--view", "chunks", "--json", "--vault", str(sample_vault)).stdout)
    assert chunks["view"] == "chunks" and chunks["results"][0] == first


def test_batch(sample_vault: Path, tmp_path: Path) -> None:
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    batch = tmp_path / "queries.jsonl"
    batch.write_text(
        '{"id": "q1", "query": "sourdough starter"}\n'
        "not json\n"
        '{"id": 7, "query": "refresh token reuse"}\n'
    )
    done = run_cli("search", "--batch", str(batch), "--vault", str(sample_vault))
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["q1", None, 7]
    assert lines[0]["results"][0]["path"] == "cooking/bread.md"
    assert "error" in lines[1]
    assert lines[2]["results"][0]["path"] == "security/oauth.md"
    assert done.returncode == 1 and "1 batch line" in done.stderr


def test_status_lists_skipped_files(sample_vault: Path) -> None:
    (sample_vault / "bad.md").write_bytes(b"\x00\x01\x02 a binary file named like a note \x00\xff")
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    human = run_cli("status", "--vault", str(sample_vault))
    assert "4 indexed, 1 skipped" in human.stdout
    assert "bad.md:" in human.stdout
    data = json.loads(run_cli("status", "--json", "--vault", str(sample_vault)).stdout)
    assert data["files"] == 4 and data["chunks"] == data["vectors"]
    assert data["skipped"][0]["path"] == "bad.md"


def test_user_mistakes_are_one_clear_line(tmp_path: Path, sample_vault: Path) -> None:
    missing = run_cli("index", str(tmp_path / "nope"))
    assert missing.returncode == 2 and missing.stderr.startswith("error: vault folder")
    assert "Traceback" not in missing.stderr

    no_index = run_cli("search", "x", "--vault", str(sample_vault))
    assert no_index.returncode == 3
    assert "hint: run `vaultseek index" in no_index.stderr

    not_db = tmp_path / "notes.db"
    not_db.write_text("this is not a database, just text " * 100)
    corrupt = run_cli("search", "x", "--vault", str(sample_vault), "--db", str(not_db))
    assert corrupt.returncode == 5 and "Traceback" not in corrupt.stderr

    bad_config = sample_vault / ".vaultseek.toml"
    bad_config.write_text("top_k = [oops")
    config = run_cli("index", str(sample_vault))
    assert config.returncode == 2 and "not valid TOML" in config.stderr
    bad_config.write_text("colour = 'blue'\n")
    unknown = run_cli("index", str(sample_vault))
    assert unknown.returncode == 2 and "unknown key" in unknown.stderr
    bad_config.write_text("deep_teir = false\n")
    typo = run_cli("index", str(sample_vault))
    assert typo.returncode == 2 and "hint: did you mean deep_tier" in typo.stderr

    usage = run_cli("search", "--vault", str(sample_vault))
    assert usage.returncode != 0 and "Traceback" not in usage.stderr


def test_env_var_and_db_flag(sample_vault: Path, tmp_path: Path) -> None:
    db = tmp_path / "custom.db"
    assert run_cli("index", "--db", str(db), "--quiet", env={"VAULTSEEK_VAULT": str(sample_vault)}).returncode == 0
    assert db.exists()
    found = run_cli("search", "sourdough", "--db", str(db), "--json", env={"VAULTSEEK_VAULT": str(sample_vault)})
    assert json.loads(found.stdout)["results"][0]["path"] == "cooking/bread.md"


def test_more_user_mistakes(sample_vault: Path, tmp_path: Path) -> None:
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    both = run_cli("search", "x", "--batch", "-", "--vault", str(sample_vault), stdin="")
    assert both.returncode == 2 and "give either" in both.stderr

    read_only = tmp_path / "ro"
    read_only.mkdir()
    read_only.chmod(0o500)
    try:
        import os

        if os.geteuid() != 0:
            denied = run_cli("index", str(sample_vault), "--db", str(read_only / "sub" / "x.db"))
            assert denied.returncode == 7 and "Traceback" not in denied.stderr
    finally:
        read_only.chmod(0o700)

    bad_batch = tmp_path / "b.jsonl"
    bad_batch.write_bytes(b"\xff\xfe\x00garbage")
    assert run_cli("search", "--batch", str(bad_batch), "--vault", str(sample_vault)).returncode == 2


def test_batch_keeps_ids_of_bad_lines(sample_vault: Path) -> None:
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    done = run_cli("search", "--batch", "-", "--vault", str(sample_vault), stdin='{"id": 2}\n{"id": 3, "query": "bread"}\n')
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["id"] == 2 and "error" in lines[0]
    assert lines[1]["id"] == 3 and lines[1]["results"]


def test_relative_db_is_anchored_where_it_was_given(sample_vault: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "c1", tmp_path / "c2"
    first.mkdir()
    second.mkdir()
    assert run_cli("index", str(sample_vault), "--db", "rel.db", "--quiet", cwd=first).returncode == 0
    assert (first / "rel.db").exists()
    found = run_cli("search", "sourdough", "--vault", str(sample_vault), "--json", cwd=second)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"]


def test_index_without_a_folder_indexes_the_current_one(sample_vault: Path, tmp_path: Path) -> None:
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    fresh = tmp_path / "newvault"
    fresh.mkdir()
    (fresh / "a.md").write_text("# A note\n\nSomething about zeppelins and their hangars.")
    done = run_cli("index", cwd=fresh)
    assert done.returncode == 0 and str(fresh) in done.stdout


def test_a_terminal_sees_the_searched_words_marked_in_snippets(sample_vault: Path) -> None:
    """At a terminal, snippets mark the words searched: the typed ones and the word searched for
    a mistyped one (bold); piped, the text is plain."""
    import os
    import pty
    import subprocess
    import sys

    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    args = [sys.executable, "-m", "vaultseek.cli.launcher", "search", "rotate refresh tokesn", "-k", "1", "--vault", str(sample_vault)]
    main, side = pty.openpty()
    env = {**os.environ, "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    with subprocess.Popen(args, stdout=side, stderr=subprocess.DEVNULL, env=env) as child:
        os.close(side)
        shown = b""
        while chunk := _read_pty(main):
            shown += chunk
        child.wait(timeout=120)
    os.close(main)
    text = shown.decode()
    assert 'no chunk has "tokesn"' in text, text
    marked = [word.lower() for word in re.findall(r"\x1b\[1m([^\x1b]+)\x1b\[0m", text)]
    assert "rotate" in marked and any(word.startswith("token") for word in marked), marked
    piped = run_cli("search", "rotate refresh tokesn", "-k", "1", "--vault", str(sample_vault))
    assert "\x1b" not in piped.stdout and 'no chunk has "tokesn"' in piped.stdout


def _read_pty(fd: int) -> bytes:
    """What a pseudo-terminal has to read; b"" once its child has closed it."""
    import os

    try:
        return os.read(fd, 65536)
    except OSError:  # Linux: EIO when the other side is closed
        return b""


def test_control_characters_never_reach_the_terminal(vault: Path) -> None:
    (vault / "evil.md").write_text("# Evil\n\nThis note about zeppelins \x1b]0;pwned\x07 hides \x1b[31mescapes\x1b[0m.")
    assert run_cli("index", str(vault), "--quiet").returncode == 0
    shown = run_cli("search", "zeppelins", "--vault", str(vault))
    assert "\x1b" not in shown.stdout and "zeppelins" in shown.stdout


def test_a_long_query_that_finds_nothing_is_not_echoed_whole(sample_vault: Path) -> None:
    run_cli("index", str(sample_vault))
    pasted = " ".join(["zzqxv"] * 1_000)  # a pasted page of a word no note holds
    done = run_cli("search", pasted, "--mode", "bm25", "--vault", str(sample_vault))
    line = next(line for line in done.stdout.splitlines() if line.startswith("No results for"))
    assert len(line) < 120 and line.endswith("…'."), line
