"""The engine end to end on real files, a real SQLite database and the real bundled model."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vaultseek import IndexNotFoundError, QueryError, open_index
from vaultseek.engine import Index


def indexed(vault: Path) -> Index:
    index = open_index(vault, create=True)
    index.sync()
    return index


def assert_consistent(index: Index) -> None:
    assert index.store.integrity_problems() == []


def test_index_and_search_hybrid(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        status = index.status()
        assert status.files == 4
        assert status.chunks == status.vectors > 0
        assert status.model == "vaultseek/minilm-l6-v2-m2v256"
        hits = index.search("how do I rotate oauth tokens").results
        assert hits[0].path == "security/oauth.md"
        assert hits[0].bm25_rank is not None and hits[0].vec_rank is not None
        assert "OAuth token rotation" in hits[0].heading_context
        assert_consistent(index)


def test_exact_identifier_found_by_bm25(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        hits = index.search("_rrf_fuse", mode="bm25").results
        assert [h.path for h in hits] == ["code/fusion.md"]
        assert hits[0].section == "The _rrf_fuse helper"
        assert hits[0].vec_rank is None


def test_vector_mode_finds_concepts_without_shared_words(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        hits = index.search("baking with yeast and flour", mode="vector").results
        assert hits[0].path == "cooking/bread.md"
        assert hits[0].bm25_rank is None


def test_same_query_gives_identical_output(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        first = json.dumps(index.search("token").to_dict())
    with open_index(sample_vault) as index:
        assert json.dumps(index.search("token").to_dict()) == first


def test_k_and_token_budget(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        assert len(index.search("the", k=2).results) <= 2
        budgeted = index.search("refresh token", max_tokens=40).results
        assert len(budgeted) >= 1
        cost = sum(len(r.path) + len(r.section) + len(r.snippet) for r in budgeted)
        assert cost <= 40 * 4 or len(budgeted) == 1


def test_incremental_run_does_nothing_when_nothing_changed(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        report = index.sync()
        assert (report.added, report.updated, report.deleted, report.chunks_written) == (0, 0, 0, 0)
        assert report.unchanged == 4


def test_touched_but_unchanged_file_is_not_rechunked(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        note = sample_vault / "cooking/bread.md"
        later = time.time_ns() + 5_000_000_000
        os.utime(note, ns=(later, later))
        report = index.sync()
        assert report.touched == 1 and report.updated == 0 and report.chunks_written == 0
        assert index.sync().unchanged == 4


def test_edit_replaces_chunks_and_reuses_unchanged_vectors(sample_vault: Path, write: Callable[..., Path]) -> None:
    with indexed(sample_vault) as index:
        before = index.status().chunks
        text = (sample_vault / "security/oauth.md").read_text()
        write("security/oauth.md", text + "\n## Key storage\n\nStore signing keys in the hardware security module, never on disk.\n")
        report = index.sync()
        assert report.updated == 1
        assert report.vectors_reused >= 2  # the untouched sections kept their vectors
        assert index.status().chunks == before + 1
        assert index.search("hardware security module", mode="bm25").results[0].section == "Key storage"
        assert_consistent(index)


def test_deleted_file_leaves_no_rows(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        (sample_vault / "code/fusion.md").unlink()
        assert index.sync().deleted == 1
        assert index.search("_rrf_fuse", mode="bm25").results == ()
        assert index.conn.execute("SELECT count(*) FROM files WHERE path LIKE 'code/%'").fetchall()[0][0] == 0
        assert_consistent(index)


def test_renamed_file_moves_without_reembedding(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        (sample_vault / "archive").mkdir()
        (sample_vault / "cooking/bread.md").rename(sample_vault / "archive/bread.md")
        report = index.sync()
        assert (report.added, report.deleted) == (1, 1)
        hits = index.search("sourdough starter", mode="bm25").results
        assert [h.path for h in hits] == ["archive/bread.md"]
        assert_consistent(index)


def test_bad_files_are_recorded_and_do_not_stop_the_run(sample_vault: Path, write: Callable[..., Path]) -> None:
    write("binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    write("latin1.md", "Caf\xe9 au lait".encode("latin-1"))
    write("utf16.md", "# UTF-16 note\n\nThis note was saved as UTF-16 with a byte order mark.".encode("utf-16"))
    (sample_vault / "loop.md").symlink_to(sample_vault / "loop.md")
    locked = write("locked.md", "# Locked\n\nNobody may read this file at all.")
    locked.chmod(0)
    os.mkfifo(sample_vault / "pipe.md")  # reading it would block the run forever
    big = write("huge.md", "x")
    with open(big, "wb") as handle:  # sparse: 11 MB without writing them
        handle.truncate(11 * 1024 * 1024)
    try:
        with indexed(sample_vault) as index:
            reasons = {s.path: s.reason for s in index.status().skipped}
            assert "binary" in reasons["binary.md"]
            assert "latin1.md" not in reasons  # decoded like a .txt in that charset, not refused
            assert reasons["loop.md"] == "symlink loop"
            assert "too large" in reasons["huge.md"]
            assert reasons["pipe.md"] == "not a regular file"
            if os.geteuid() != 0:  # root reads anything
                assert reasons["locked.md"] == "permission denied"
            assert index.status().files >= 6  # the four notes, the UTF-16 one and the Latin-1 one
            assert index.search("byte order mark", mode="bm25").results[0].path == "utf16.md"
            assert [c.text for c in index.get_note("latin1.md")] == ["Café au lait"]
            # A fixed file is picked up on the next run.
            (sample_vault / "binary.md").write_text("Café au lait, now in UTF-8 and long enough.")
            index.sync()
            assert "binary.md" not in {s.path for s in index.status().skipped}
    finally:
        locked.chmod(0o644)


def test_default_excludes_and_config_globs(vault: Path, write: Callable[..., Path]) -> None:
    body = "# Title\n\nEnough words in this note to make a chunk of text."
    for rel in (".obsidian/workspace.md", ".git/x.md", ".trash/old.md", "node_modules/p/readme.md",
                "drafts/private.md", "notes/keep.md", "notes/data.log"):  # .log: not a known type
        write(rel, body)
    write(".vaultseek.toml", 'exclude = [".obsidian", ".git", ".trash", "node_modules", "drafts/*"]\n')
    with indexed(vault) as index:
        paths = {r[0] for r in index.conn.execute("SELECT path FROM files")}
        assert paths == {"notes/keep.md"}


def test_model_change_reembeds_everything(sample_vault: Path, tmp_path: Path) -> None:
    import shutil

    from vaultseek.embeddings.static import BUNDLED_MODEL_DIR

    with indexed(sample_vault) as index:
        chunks = index.status().chunks
    # A "different model": the same files with a changed config fingerprint.
    other = tmp_path / "other-model"
    shutil.copytree(BUNDLED_MODEL_DIR, other)
    config = json.loads((other / "config.json").read_text())
    config["note"] = "a different model"
    (other / "config.json").write_text(json.dumps(config))
    with open_index(sample_vault, model=str(other)) as index:
        # Before re-indexing, the vector side refuses to mix models and says so.
        response = index.search("rotate tokens")
        assert response.notices and "re-embed" in response.notices[0]
        assert all(r.vec_rank is None for r in response.results)
        report = index.sync()
        assert report.reembedded == chunks
        assert any("model changed" in n for n in report.notices)
        assert index.status().model == str(other.resolve())
        assert index.search("rotate tokens").results[0].vec_rank is not None


def test_search_without_index_is_a_clear_error(vault: Path) -> None:
    with pytest.raises(IndexNotFoundError):
        open_index(vault)


def test_bad_mode_is_a_query_error(sample_vault: Path) -> None:
    with indexed(sample_vault) as index, pytest.raises(QueryError):
        index.search("x", mode="fuzzy")  # type: ignore[arg-type]


def test_hostile_queries_through_the_engine(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        for query in ["C++", '"unbalanced', "AND", "--flag", "-f", "§3 Absatz 2", "foo*", "🙂", "x" * 8_000, "\ud800 lone"]:
            index.search(query)
        for refused in ["x" * 8_001, "", "   ", "-flag"]:  # beyond the search contract's limits; only an exclusion
            with pytest.raises(QueryError, match=r"longer than|empty|say what to look for"):
                index.search(refused)
        assert index.search("§3 Absatz 2", mode="bm25").results[0].path == "de/recht.md"


def test_unicode_folding(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        assert index.search("kundigungsfrist", mode="bm25").results[0].path == "de/recht.md"


def test_a_second_connection_sees_new_writes(sample_vault: Path, write: Callable[..., Path]) -> None:
    with indexed(sample_vault) as writer, open_index(sample_vault) as reader:
        reader.search("anything at all")  # loads the vector matrix
        write("new.md", "# Zebra facts\n\nZebras have black and white stripes that confuse flies.")
        writer.sync()
        hits = reader.search("zebra stripes", mode="vector").results
        assert hits[0].path == "new.md"


def test_long_prompt_still_gets_a_lexical_list(sample_vault: Path) -> None:
    prompt = (
        "I am working on the login service again today and I would like to know what we decided "
        "about how refresh tokens should be handled when a client presents one that was already "
        "revoked, because the mobile team keeps asking me about it and I cannot remember the "
        "details of the grace window or whether we force a new login for the user"
    )
    assert len(prompt.split()) >= 60
    with indexed(sample_vault) as index:
        hits = index.search(prompt, mode="bm25").results
        assert hits and hits[0].path == "security/oauth.md"


def test_any_term_fallback_leaves_out_the_commonest_words(
    vault: Path, write: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultseek.search import candidates as search

    monkeypatch.setattr(search, "ANY_TERM_POSTINGS", 10)  # a big vault's budget, in miniature
    for i in range(40):
        write(f"n{i}.md", f"# Note {i}\n\nThis note mentions the common word everywhere, number {i}.")
    write("rare.md", "# Rare\n\nOnly this note talks about the zeppelin hangar and its common word.")
    with indexed(vault) as index:
        kept = search.affordable_phrases(index.store, ('"common"', '"zeppelin"', '"hangar"', '"word" *', '"absent"'))
        assert kept == ('"zeppelin"', '"hangar"', '"word" *')
        hits = index.search("common zeppelin unmatched", mode="bm25").results
        assert hits[0].path == "rare.md"


def test_interrupted_model_change_is_never_trusted(sample_vault: Path, tmp_path: Path) -> None:
    import shutil

    from vaultseek.embeddings.static import BUNDLED_MODEL_DIR

    with indexed(sample_vault):
        pass
    other = tmp_path / "other-model"
    shutil.copytree(BUNDLED_MODEL_DIR, other)
    (other / "config.json").write_text((other / "config.json").read_text().replace("{", '{"x": 1,', 1))
    with open_index(sample_vault, model=str(other)) as index:
        report = index.sync(should_stop=lambda: True)
        assert report.interrupted and "interrupted" in report.notices[0]
        response = index.search("rotate tokens")
        assert "half done" in response.notices[0]
    # Going back to the original model does not trust the half-changed table either.
    with open_index(sample_vault) as index:
        report = index.sync()
        assert report.reembedded == index.status().chunks
        assert index.search("rotate tokens").notices == ()


def test_skipped_file_is_retried_when_the_cause_is_fixed_without_touching_it(
    sample_vault: Path, write: Callable[..., Path]
) -> None:
    write("big.md", "# Big\n\n" + "A long note about zeppelins. " * 100)
    with open_index(sample_vault, create=True, max_file_mb=0.001) as index:
        index.sync()
        assert [s.path for s in index.status().skipped] == ["big.md"]
        assert index.sync().skipped[0].reason.startswith("too large")  # same reason, not replaced
    with open_index(sample_vault, max_file_mb=10) as index:
        index.sync()
        assert index.status().skipped == ()
        assert index.search("zeppelins", mode="bm25").results[0].path == "big.md"


def test_in_a_few_notes_a_function_word_finds_nothing(vault: Path, write: Callable[..., Path]) -> None:
    """In a dozen notes a word like *should* is held by one note, so BM25 would weigh it as much
    as a rare name; it is not looked for."""
    write("standup.md", "# Standup\n\nThey should say what is finished.\n")
    write("ci.md", "# CI\n\nWhen the build fails on main, read the first error in the log.\n")
    write("bread.md", "# Sourdough\n\nFeed the starter twice a day.\n")
    with open_index(vault, create=True, deep_tier=False) as index:
        index.sync()
        found = index.search("what should they do when the build fails", mode="bm25").results
    assert [hit.path for hit in found] == ["ci.md"]


def test_a_mistyped_setting_is_named_with_the_ones_it_may_mean(sample_vault: Path) -> None:
    from vaultseek import ConfigError

    with pytest.raises(ConfigError, match=r"^arguments: unknown key\(s\) deep$") as raised:
        open_index(sample_vault, deep=False)
    assert "deep_tier" in str(raised.value.hint)
    with pytest.raises(ConfigError, match="unknown key") as raised:
        open_index(sample_vault, zzzz=1)
    assert "max_file_mb" in str(raised.value.hint)  # nothing close: every setting is listed
    with pytest.raises(ConfigError, match="hook_min_deep_relevance is no longer a setting") as raised:
        open_index(sample_vault, hook_min_deep_relevance=0.5)
    assert "hook_min_relevance" in str(raised.value.hint)


def test_index_refuses_a_database_of_another_vault(sample_vault: Path, tmp_path: Path) -> None:
    from vaultseek import ConfigError

    other = tmp_path / "other"
    other.mkdir()
    db = tmp_path / "shared.db"
    with open_index(sample_vault, db=db, create=True) as index:
        index.sync()
    with open_index(other, db=db) as index, pytest.raises(ConfigError, match="belongs to the vault"):
        index.sync()
    with open_index(sample_vault, db=db) as index:
        assert index.status().files == 4  # nothing was deleted


def test_pipeline_change_reprocesses_unchanged_files(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        index.store.set_meta({"pipeline_version": "0"})
        report = index.sync()
        assert report.updated == 4 and report.unchanged == 0
        assert report.vectors_reused == report.chunks_written  # same text: no re-embedding
        assert index.sync().unchanged == 4


def test_lone_surrogates_in_a_query(sample_vault: Path) -> None:
    with indexed(sample_vault) as index:
        assert index.search("\ud800 oauth token").results


def test_token_budget_counts_everything_shown(sample_vault: Path) -> None:
    from vaultseek.search.budget import result_tokens

    with indexed(sample_vault) as index:
        results = index.search("token refresh revoke", view="chunks", max_tokens=60).results
        assert sum(result_tokens(r) for r in results) <= 60 or len(results) == 1
        tiny = index.search("token refresh revoke", view="chunks", max_tokens=5).results
        assert len(tiny) == 1 and tiny[0].path  # the best result is kept, its snippet cut


def test_config_exclude_adds_to_the_built_in_ones(vault: Path, write: Callable[..., Path]) -> None:
    body = "# Title\n\nEnough words in this note to make a chunk of text."
    for rel in (".trash/old.md", "sub/skip.md", "keep.md"):
        write(rel, body)
    write(".vaultseek.toml", 'exclude = ["sub"]\n')
    with indexed(vault) as index:
        assert {r[0] for r in index.conn.execute("SELECT path FROM files")} == {"keep.md"}


def test_concurrent_first_runs_do_not_race_on_the_schema(vault: Path, tmp_path: Path) -> None:
    import threading

    db = tmp_path / "race.db"
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            open_index(vault, db=db, create=True).close()
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_opening_a_new_index_outlasts_a_writer_met_while_switching_to_wal(tmp_path: Path) -> None:
    """Right after `journal_mode=WAL` has rewritten a new file's header, the opening
    connection asks to upgrade its read lock to a write lock, and there SQLite answers
    SQLITE_BUSY at once instead of waiting out the busy timeout. The study app's writer and
    its warm-up reader opening a fresh index together met exactly this about once in 450
    start-ups (the reader's schema migration held the write lock) and the writer's first sync
    was lost. Here another connection takes the write lock at that instant every time: a shim
    over the real unix VFS holds the opener just before that upgrade until the other has it."""
    import threading

    import apsw

    from vaultseek.storage import db

    path = tmp_path / "new.db"
    holding, refused, released = threading.Event(), threading.Event(), threading.Event()

    def other_writer() -> None:  # another process's connection: the plain unix VFS, no shim
        conn = apsw.Connection(str(path), vfs="unix")
        conn.execute("BEGIN IMMEDIATE")
        holding.set()
        refused.wait(10)
        conn.execute("ROLLBACK")
        conn.close()
        released.set()

    other = threading.Thread(target=other_writer)
    header_written = threading.Event()

    class Opener(apsw.VFSFile):
        def __init__(self, vfs: str, name: object, flags: list[int]) -> None:
            super().__init__("unix", name, flags)

        def xLock(self, level: int) -> None:
            if level == apsw.SQLITE_LOCK_EXCLUSIVE:
                header_written.set()
            if level != apsw.SQLITE_LOCK_RESERVED or not header_written.is_set() or other.ident:
                return super().xLock(level)
            other.start()
            assert holding.wait(10)
            try:
                return super().xLock(level)
            except apsw.BusyError:
                refused.set()
                raise

    class Shim(apsw.VFS):
        def __init__(self) -> None:
            super().__init__("vaultseek-upgrade-race", "unix", makedefault=True)

        def xOpen(self, name: object, flags: list[int]) -> apsw.VFSFile:
            return Opener("unix", name, flags)

    shim = Shim()
    try:
        conn = db.open_connection(path, create=True)
        met = refused.is_set()
    finally:
        apsw.set_default_vfs("unix")
        shim.unregister()
        refused.set()  # let the other connection go, whatever happened
        if other.ident:
            other.join(10)
    assert met and released.is_set()  # the race was met, and outlasted
    assert conn.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
    conn.close()


@pytest.mark.parametrize("position", [0, 30, 59])
def test_a_60_word_prompt_finds_its_one_known_word_wherever_it_stands(
    sample_vault: Path, position: int
) -> None:
    filler = [f"unknownword{i}" for i in range(59)]
    words = [*filler[:position], "sourdough", *filler[position:]]
    prompt = " ".join(words)
    assert len(prompt.split()) == 60
    with indexed(sample_vault) as index:
        hits = index.search(prompt, mode="bm25").results
        assert hits and hits[0].path == "cooking/bread.md"


# -- syncing named paths (what the watcher does with file events) ---------------------------------
def bm25_paths(index: Index, query: str) -> list[str]:
    return [hit.path for hit in index.search(query, mode="bm25", k=5).results]


def test_sync_of_named_paths_indexes_creates_edits_and_deletes(sample_vault: Path, write: Callable[..., Path]) -> None:
    with indexed(sample_vault) as index:
        write("new.md", "# Quokka\n\nQuokkas smile at tourists on Rottnest island.")
        write("cooking/bread.md", "# Rye\n\nRye bread needs a sour starter and a long proof.")
        (sample_vault / "code/fusion.md").unlink()
        named = [sample_vault / "new.md", "cooking/bread.md", str(sample_vault / "code/fusion.md")]
        report = index.sync(paths=named)  # absolute or vault-relative
        assert not report.full and report.scanned == 2
        assert (report.added, report.updated, report.deleted) == (1, 1, 1)
        assert bm25_paths(index, "quokka") == ["new.md"]
        assert bm25_paths(index, "rye proof") == ["cooking/bread.md"]
        assert bm25_paths(index, "sourdough") == [] and bm25_paths(index, "_rrf_fuse") == []
        assert index.sync().unchanged == 4  # the full walk agrees: nothing was left to do
        assert_consistent(index)


def test_sync_of_named_paths_looks_at_nothing_else(sample_vault: Path, write: Callable[..., Path]) -> None:
    with indexed(sample_vault) as index:
        write("cooking/bread.md", "# Rye\n\nRye bread needs a sour starter and a long proof.")  # not named
        write("new.md", "# Quokka\n\nQuokkas smile at tourists on Rottnest island.")
        report = index.sync(paths=["new.md"])
        assert (report.scanned, report.added, report.unchanged) == (1, 1, 0)
        assert bm25_paths(index, "rye") == [] and bm25_paths(index, "sourdough") == ["cooking/bread.md"]
        assert index.sync().updated == 1  # only a full run sees the change nobody named
        assert bm25_paths(index, "rye") == ["cooking/bread.md"]


def test_sync_of_named_paths_follows_a_renamed_note_and_its_links(sample_vault: Path, write: Callable[..., Path]) -> None:
    write("home.md", "# Home\n\nBake with [[bread]], or with [[loaf]] once it exists.")
    with indexed(sample_vault) as index:

        def links() -> dict[str, str | None]:
            return {link.target: link.path for link in index.links("home.md").outgoing}

        assert links() == {"bread": "cooking/bread.md", "loaf": None}
        (sample_vault / "cooking/bread.md").rename(sample_vault / "cooking/loaf.md")
        report = index.sync(paths=["cooking/bread.md", "cooking/loaf.md"])  # a rename: a deletion and a creation
        assert not report.full and (report.added, report.deleted) == (1, 1)
        assert bm25_paths(index, "sourdough starter") == ["cooking/loaf.md"]
        assert links() == {"bread": None, "loaf": "cooking/loaf.md"}
        assert_consistent(index)


def test_sync_of_named_paths_skips_what_the_full_walk_skips(
    sample_vault: Path, write: Callable[..., Path], tmp_path: Path
) -> None:
    body = "# Pangolin\n\nPangolins are covered in keratin scales and roll into a ball."
    skipped = [".obsidian/workspace.md", ".trash/old.md", "_intake/inbox/clip.md", "_intake/review/clip.md",
               "notes/pangolin.png", "notes/pangolin.md.swp"]  # fmt: skip
    for rel in skipped:
        write(rel, body)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/p.md").write_text(body)
    (sample_vault / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)  # never followed
    (tmp_path / "outside.md").write_text(body)
    with indexed(sample_vault) as index, open_index(sample_vault) as reader:
        index.store.set_meta({"last_indexed": "before"})
        version = reader.store.data_version()
        named = [*skipped, "linked/p.md", tmp_path / "outside.md", "../outside.md", "missing.md", "code/fusion.md"]
        report = index.sync(paths=named)
        assert not report.full and (report.scanned, report.unchanged) == (1, 1)
        assert bm25_paths(index, "pangolin") == []
        assert reader.store.data_version() == version  # nothing to do, nothing written: readers keep their cache
        assert reader.store.get_meta("last_indexed") == "before"


def test_sync_of_named_paths_records_and_retries_unreadable_files(sample_vault: Path, write: Callable[..., Path]) -> None:
    with indexed(sample_vault) as index:
        write("broken.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
        index.sync(paths=["broken.md"])
        assert "binary" in {s.path: s.reason for s in index.status().skipped}["broken.md"]
        write("broken.md", "Café au lait, now in UTF-8 and long enough.")
        index.sync(paths=["broken.md"])
        assert index.status().skipped == () and bm25_paths(index, "lait") == ["broken.md"]


def test_sync_of_named_paths_becomes_full_for_folders_and_pipeline_changes(
    sample_vault: Path, write: Callable[..., Path]
) -> None:
    import shutil

    with indexed(sample_vault) as index:
        (sample_vault / "cooking").rename(sample_vault / "kitchen")  # the events name only the folders
        report = index.sync(paths=["cooking", "kitchen"])
        assert report.full and (report.added, report.deleted) == (1, 1)
        assert bm25_paths(index, "sourdough") == ["kitchen/bread.md"]
        shutil.rmtree(sample_vault / "kitchen")  # gone: only the index knows it was a folder
        assert index.sync(paths=["kitchen"]).full and bm25_paths(index, "sourdough") == []
        write("new/deep/note.md", "# Quokka\n\nQuokkas smile at tourists on Rottnest island.")
        assert index.sync(paths=["new"]).full and bm25_paths(index, "quokka") == ["new/deep/note.md"]
        (sample_vault / ".obsidian").mkdir()  # a folder the walk skips changes nothing
        assert not index.sync(paths=[".obsidian"]).full
        index.store.set_meta({"pipeline_version": "0"})  # every file must be re-processed
        report = index.sync(paths=["code/fusion.md"])
        assert report.full and report.updated == 4
        assert_consistent(index)


def test_sync_of_named_paths_reads_documents_and_drops_their_checkpoints(vault: Path, write: Callable[..., Path]) -> None:
    from tests.support import docgen

    write("notes/a.md", "# A\n\nA note, so that the vault is not empty.")
    with indexed(vault) as index:
        docgen.text_pdf(vault / "notes/report.pdf", ["Axolotls regrow their limbs.", "Salamanders on page two."])
        report = index.sync(paths=["notes/report.pdf"])
        assert not report.full and (report.added, report.documents_extracted, report.pages_extracted) == (1, 1, 2)
        assert bm25_paths(index, "axolotls") == ["notes/report.pdf"]
        for path in ("notes/report.pdf", "scans/gone.pdf", "scans/other.pdf"):  # as killed OCR runs leave them
            index.store.save_ocr_checkpoint(path, "sha", 1, "a page")
        (vault / "notes/report.pdf").unlink()
        assert index.sync(paths=["notes/report.pdf", "scans/gone.pdf"]).deleted == 1
        assert bm25_paths(index, "axolotls") == []
        assert index.conn.execute("SELECT DISTINCT path FROM ocr_checkpoints").fetchall() == [("scans/other.pdf",)]
