"""Query words against the index's vocabulary: other word forms for German and Spanish vaults,
the nearest indexed word for a word found nowhere (typo tolerance), and words of like meaning
for a word the vault does not use."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultseek import QueryError, open_index
from vaultseek.embeddings.static import load_embedder
from vaultseek.search.vocabulary import (
    Refined,
    _without_function_words,
    allowed_edits,
    fold,
    osa_distance,
    refine_query,
    vault_languages,
    word_forms,
    writes_english,
)
from vaultseek.text.lexical import parse_query

GERMAN = {
    "tar.md": "# tar\n\nPackt Dateien in ein Archiv und entpackt sie wieder. Das Archiv wird mit gzip "
    "komprimiert; die Komprimierung lässt sich mit `-z` oder `-j` wählen.",
    "ls.md": "# ls\n\nZeigt den Inhalt eines Verzeichnisses an, mit Größe und Datum jeder Datei.",
    "ping.md": "# ping\n\nPrüft, ob ein Rechner im Netz erreichbar ist, und misst die Antwortzeit.",
    "cp.md": "# cp\n\nKopiert Dateien und Verzeichnisse; vorhandene Dateien werden nicht gefragt.",
}
SPANISH = {
    "gzip.md": "# gzip\n\nComprime o descomprime los archivos indicados y deja las copias comprimidas.",
    "ls.md": "# ls\n\nMuestra los archivos de un directorio, pero no las carpetas ocultas.",
    "ping.md": "# ping\n\nComprueba si un equipo responde en la red y mide las demoras.",
}
ENGLISH = {
    "obsidian.md": "# obsidian\n\nOpen notes in the Obsidian app and sync a vault between devices.",
    "rsync.md": "# rsync\n\nCopy files to a remote host; sync only what changed.",
    "rest.md": "# rest\n\nCall a REST API from the terminal and show the response.",
    "ls.md": "# ls\n\nList the files of a directory with their sizes.",
}


def _index(vault: Path, write: Callable[..., Path], notes: dict[str, str]) -> Path:
    for rel, text in notes.items():
        write(rel, text)
    with open_index(vault, create=True) as index:
        index.sync()
    return vault


def test_edit_distance_counts_a_swap_as_one() -> None:
    assert osa_distance("snyc", "sync", 2) == 1
    assert osa_distance("obsidain", "obsidian", 2) == 1
    assert osa_distance("compres", "compress", 1) == 1
    assert osa_distance("kitten", "sitting", 5) == 3
    assert osa_distance("abc", "xyzxyz", 1) == 2  # gives up past the limit


def test_short_words_are_never_corrected() -> None:
    assert allowed_edits("ls") == 0
    assert allowed_edits("snyc") == 1
    assert allowed_edits("obsidain") == 2


def test_folding_matches_the_index() -> None:
    assert fold("Straße") == "strasse"
    assert fold("Komprimierung") == "komprimierung"
    assert fold("verschlüsseln") == "verschlusseln"


def test_word_forms_are_snowball_stems() -> None:
    assert word_forms("komprimieren", ("german",)) == ["komprimi"]
    assert word_forms("archivos", ("spanish",)) == ["archiv"]
    assert word_forms("komprimieren", ()) == []


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_a_german_verb_finds_its_other_forms(vault: Path, write: Callable[..., Path], mode: str) -> None:
    _index(vault, write, GERMAN)
    with open_index(vault) as index:
        response = index.search("komprimieren", mode=mode)  # the page says komprimiert, Komprimierung
        assert response.results[0].path == "tar.md"
        assert response.notices == ()  # another form is no typo
        assert response.alternatives == {"komprimieren": ("komprimi*",)}  # what was searched for it
        assert "komprimiert" in response.results[0].snippet


def test_a_spanish_word_finds_its_other_forms(vault: Path, write: Callable[..., Path]) -> None:
    _index(vault, write, SPANISH)
    with open_index(vault) as index:
        hits = index.search("comprimir", mode="bm25").results  # the page says Comprime, comprimidas
        assert hits and hits[0].path == "gzip.md"


def test_languages_come_from_the_vault(vault: Path, write: Callable[..., Path]) -> None:
    _index(vault, write, {**ENGLISH, **{f"de/{rel}": text for rel, text in GERMAN.items()}})
    with open_index(vault) as index:
        assert vault_languages(index.store) == ("german",)
        response = index.search("listing", mode="bm25")  # English: Porter's stemming, as before
        assert response.results[0].path == "ls.md" and response.notices == ()


def test_function_words_of_the_vaults_language_leave_a_question() -> None:
    question = parse_query("¿Cuál es la forma de comprimir un archivo?")
    assert _without_function_words(question, ("spanish",)).phrases == ('"forma"', '"comprimir"', '"archivo"')
    assert _without_function_words(question, ()) == question
    only = parse_query("es la")  # nothing else: the function words are the query
    assert _without_function_words(only, ("spanish",)) == only


def test_a_spanish_question_is_not_answered_by_its_function_words(vault: Path, write: Callable[..., Path]) -> None:
    """``es`` is Spanish for "is" and the name of a Windows search tool: in a Spanish vault a
    question's ``es`` is not searched (nor ``la``, ``de``, …), so the tool's page does not win."""
    _index(vault, write, {**SPANISH, "es.md": "# es\n\nBusca archivos por nombre en el disco: es la búsqueda de Everything."})
    with open_index(vault) as index:
        assert vault_languages(index.store) == ("spanish",)
        hits = index.search("¿es posible comprimir los archivos?", mode="bm25").results
        assert hits and hits[0].path == "gzip.md"
        assert index.search("es", mode="bm25").results[0].path == "es.md"  # alone, it is the query


def test_an_english_vault_has_no_snowball_language(vault: Path, write: Callable[..., Path]) -> None:
    _index(vault, write, ENGLISH)
    with open_index(vault) as index:
        assert vault_languages(index.store) == ()


def test_typos_are_corrected_and_said(vault: Path, write: Callable[..., Path]) -> None:
    _index(vault, write, ENGLISH)
    with open_index(vault) as index:
        for mode in ("bm25", "hybrid"):
            response = index.search("Obsidain snyc", mode=mode)
            assert response.results[0].path == "obsidian.md"
            assert response.notices == ('searched for "obsidian sync": no chunk has "Obsidain", "snyc"',)
            assert response.alternatives == {"Obsidain": ("obsidian",), "snyc": ("sync",)}


def test_the_vector_lists_read_a_corrected_typo_as_the_word_meant(vault: Path, write: Callable[..., Path]) -> None:
    """A slip is another word to an embedding model: once the words are corrected, the vector
    list embeds the correction, so the search ranks as if the question had been typed right."""
    _index(vault, write, {**ENGLISH, "terminal.md": "# terminal\n\nColours and fonts of the terminal window."})
    with open_index(vault) as index:
        right = index.search("sync the vault between devices", mode="hybrid", view="chunks")
        slip = index.search("snyc the vault between devcies", mode="hybrid", view="chunks")
        assert slip.alternatives == {"snyc": ("sync",), "devcies": ("devices",)}
        assert [(r.path, r.vec_rank, round(r.score, 6)) for r in slip.results] == [
            (r.path, r.vec_rank, round(r.score, 6)) for r in right.results
        ]
        assert [r.relevance for r in slip.results] == [r.relevance for r in right.results]


def test_a_correction_replaces_only_the_whole_word_typed() -> None:
    refined = Refined(parse_query("snyc Snyc-Tool"), alternatives={"snyc": ("sync",), "nap": ("sleep",)}, slips=("snyc",))
    assert refined.respelled("SNYC the snyc-tool, asnyc and snycs; nap") == "sync the sync-tool, asnyc and snycs; nap"
    assert Refined(parse_query("x"), alternatives={"x": ("a\\1",)}, slips=("x",)).respelled("x y") == "a\\1 y"


def test_a_word_the_model_knows_keeps_its_meaning_for_the_vectors(vault: Path, write: Callable[..., Path]) -> None:
    """*proud* is no chunk's word and is searched as the vault's *prod*; the model knows
    *proud*, so the vectors read it as typed, while a slip it has no word for is respelled."""
    _index(vault, write, {**ENGLISH, "prod.md": "# prod\n\nDeploy the build to prod."})
    with open_index(vault) as index:
        model = load_embedder()
        known = refine_query(index.store, parse_query("so proud"), model)
        assert known.alternatives == {"proud": ("prod",)} and known.slips == ()
        assert known.respelled("so proud") == "so proud"
        slip = refine_query(index.store, parse_query("obsidian snyc"), model)
        assert slip.slips == ("snyc",) and slip.respelled("obsidian snyc") == "obsidian sync"


def test_a_typo_is_read_as_the_index_stems_it(vault: Path, write: Callable[..., Path]) -> None:
    """The index stores English words stemmed (*computers* as ``comput``): a typo is compared
    as it is stemmed too, and the notice names the word as the vault writes it."""
    notes = {
        "remote.md": "# Remote\n\nRun one command on several remote computers at once.",
        "json.md": "# JSON\n\nTurn a JSON string into objects with their properties.",
    }
    _index(vault, write, {**ENGLISH, **notes})
    with open_index(vault) as index:
        response = index.search("several remote coputers", mode="bm25")  # two edits from "comput"
        assert response.results[0].path == "remote.md"
        assert response.alternatives == {"coputers": ("computers",)}
        assert response.notices == ('searched for "several remote computers": no chunk has "coputers"',)
        response = index.search("json string into objcts", mode="bm25")
        assert response.alternatives == {"objcts": ("objects",)} and response.results[0].path == "json.md"


def test_a_vault_in_german_and_english_reads_english_typos_as_english(vault: Path, write: Callable[..., Path]) -> None:
    """German notes beside English ones make the vault German (its words get other forms) and
    leave it English too: English typos are compared as the index stems them. A vault in
    German alone is not: Porter's stems and the model's words are English."""
    remote = {"remote.md": "# Remote\n\nRun one command on several remote computers at once."}
    _index(vault, write, {**ENGLISH, **remote, **{f"de/{rel}": text for rel, text in GERMAN.items()}})
    with open_index(vault) as index:
        assert vault_languages(index.store) == ("german",) and writes_english(index.store)
        assert index.search("several remote coputers").alternatives == {"coputers": ("computers",)}
    for rel in [*ENGLISH, *remote]:
        (vault / rel).unlink()
    with open_index(vault) as index:
        index.sync()
        assert not writes_english(index.store)


def test_a_typo_the_stems_hide_is_corrected_against_the_words_of_the_language(vault: Path, write: Callable[..., Path]) -> None:
    """Porter stems *operator* to ``oper`` and *running* to ``run``: ``ooerator`` and ``runnimg``
    are no edit or two from any index term, but one from a word of the static model's
    vocabulary that the vault holds. The hybrid search corrects them against it; BM25 alone
    loads no model and searches them as typed."""
    notes = {
        "operators.md": "# Operator precedence\n\nWhich operator is applied first when an expression has several.",
        "policy.md": "# Execution policy\n\nRunning scripts is disabled on this system until the policy allows it.",
    }
    _index(vault, write, {**ENGLISH, **notes})
    with open_index(vault) as index:
        response = index.search("ooerator precedence", mode="hybrid")
        assert response.alternatives == {"ooerator": ("operator",)}
        assert response.notices[0] == 'searched for "operator precedence": no chunk has "ooerator"'
        assert response.results[0].path == "operators.md"
        response = index.search("runnimg scripts is disabled", mode="hybrid")
        assert response.alternatives == {"runnimg": ("running",)} and response.results[0].path == "policy.md"
        assert index.search("ooerator precedence", mode="bm25").alternatives == {}
        # a made-up word near no word of either is searched as typed
        assert index.search("xylophonic precedence", mode="hybrid").alternatives == {}
        # a word the language writes so is no slip of the vault's (*bottle* is one from
        # *battle*), and a short made-up word is one slip from too many (*ploof* from *proof*)
        write("keys.md", "# Keyboard\n\nHold shift to win the battle, and check the proof before printing.")
        index.sync()
        assert index.search("bottle keyboard", mode="hybrid").alternatives.get("bottle") != ("battle",)
        assert index.search("ploof", mode="hybrid").alternatives == {}


def test_words_that_exist_are_never_corrected(vault: Path, write: Callable[..., Path]) -> None:
    _index(vault, write, ENGLISH)
    with open_index(vault) as index:
        assert index.search("obsidian sync", mode="bm25").notices == ()
        assert index.search("obsidian sync").alternatives == {}
        assert index.search("rsync", mode="bm25").notices == ()
        # four letters: only a swap is a typo ("rust" is not "rest" misspelt)
        response = index.search("rust", mode="bm25")
        assert response.notices == () and response.results == ()


def test_a_question_in_another_language_is_not_corrected_into_the_vaults(vault: Path, write: Callable[..., Path]) -> None:
    _index(vault, write, {**ENGLISH, "date.md": "# date\n\nShow or set the system date and time."})
    with open_index(vault) as index:
        # "datei" is one letter from "date", but none of the question's other missing words is
        # near an indexed word: it is German, not misspelt English.
        response = index.search("wie lade ich eine datei herunter", mode="bm25")
        assert response.notices == () and response.results == ()
        # typos among words the vault holds are still corrected
        assert index.search("Obsidain snyc vault", mode="bm25").notices == (
            'searched for "obsidian sync vault": no chunk has "Obsidain", "snyc"',
        )


def test_typos_in_a_german_vault(vault: Path, write: Callable[..., Path]) -> None:
    _index(vault, write, GERMAN)
    with open_index(vault) as index:
        response = index.search("Verzeichnise", mode="bm25")  # another form: no notice
        assert response.results[0].path in {"ls.md", "cp.md"} and response.notices == ()
        response = index.search("Archvi", mode="bm25")
        assert response.results[0].path == "tar.md"
        assert response.notices == ('searched for "archiv": no chunk has "Archvi"',)


SCRIPTING = {
    "start-sleep.md": "# Start-Sleep\n\nSuspends the script for a while: sleep for some seconds before the next "
    "command runs, for example before a retry.",
    "retry.md": "# Retries\n\nA script that tries again after a failure should count its attempts and give "
    "up after five of them.",
    "rename.md": "# Rename-Computer\n\nGives the computer a new name on the network; a restart applies it.",
    "notes.md": "# Weekly notes\n\nThe team meets every Monday. The script of the demo is in the shared folder.",
}


def test_a_word_no_note_uses_finds_the_notes_words_of_like_meaning(vault: Path, write: Callable[..., Path]) -> None:
    _index(vault, write, SCRIPTING)
    with open_index(vault) as index:
        question = "make my script take a short nap before it tries again"
        response = index.search(question, mode="hybrid")
        assert response.results[0].path == "start-sleep.md"
        assert response.notices[0].startswith('no chunk has "nap": searched "sle')
        assert response.notices[0].endswith("too, the nearest word the vault has")
        (kin,) = response.alternatives["nap"]
        assert kin.startswith("sle") and set(response.alternatives) == {"nap"}
        # the words alone (BM25) are the words as typed: the retry note, which says "tries again"
        assert index.search(question, mode="bm25").results[0].path == "retry.md"


def test_a_snippet_is_cut_around_the_word_searched_in_place_of_the_query_s(vault: Path, write: Callable[..., Path]) -> None:
    """A long section whose one match is the word searched for a missing one (here a typo's
    correction, far down the section) shows that word, not the section's first lines; the
    response says which word it was, and it round-trips through the contract's JSON."""
    filler = " ".join(f"Line {n} of the release checklist covers packaging." for n in range(40))
    _index(vault, write, {**ENGLISH, "deploy.md": f"# Deploy\n\n{filler} Finally, rotate the signing keys."})
    with open_index(vault) as index:
        response = index.search("signing keys rotaton", mode="bm25")
        assert response.alternatives == {"rotaton": ("rotate",)}
        assert "rotate the signing keys" in response.results[0].snippet
        again = type(response).from_dict(response.to_dict())
        assert again.alternatives == response.alternatives and response.to_dict()["alternatives"] == {"rotaton": ["rotate"]}


def test_words_of_like_meaning_only_for_a_question_about_the_vault(vault: Path, write: Callable[..., Path]) -> None:
    _index(vault, write, SCRIPTING)
    with open_index(vault) as index:
        # a word the vault holds is searched as it is
        assert all("the nearest word" not in n for n in index.search("sleep before a retry").notices)
        # made-up words and questions in another language than the model's: most words are missing
        for query in ("nap", "zebra nap", "wie lange schläft das skript"):
            assert all("the nearest word" not in n for n in index.search(query).notices), query
        # a day names one day: asked about Wednesday, a note about Tuesday (the model's nearest
        # word to it, which the vault has) is no answer
        write("standup.md", "# Standup\n\nThe team demos the script every Tuesday.")
        index.sync()
        assert all("the nearest word" not in n for n in index.search("what does the team demo on wednesday").notices)


def test_the_static_model_knows_how_words_are_written() -> None:
    from vaultseek.embeddings.static import load_embedder

    spellings = load_embedder().spellings()
    assert "operator" in spellings["o"] and "running" in spellings["r"]
    assert all(word[0] == letter and word.isalpha() and word.islower() for letter, words in spellings.items() for word in words)
    assert not any(word.startswith("##") for words in spellings.values() for word in words)


def test_the_static_model_knows_words_of_like_meaning() -> None:
    from vaultseek.embeddings.static import load_embedder

    model = load_embedder()
    near = [word for word, _cosine in model.kin("nap")]
    assert "sleep" in near and "nap" not in near
    cosines = [cosine for _word, cosine in model.kin("laptop", limit=3)]
    assert len(cosines) == 3 and cosines == sorted(cosines, reverse=True) and cosines[0] < 1.0
    assert model.kin("xylophonic") == []  # word pieces: no vector of its own
    assert model.kin("Laptop") == model.kin("laptop", limit=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_any_query_is_answered(vault: Path, write: Callable[..., Path], text: str) -> None:
    if not (vault / "tar.md").exists():
        _index(vault, write, {**GERMAN, "obsidian.md": ENGLISH["obsidian.md"], "zh.md": "# 进程\n\n列出所有正在运行的进程。"})
    with open_index(vault) as index:
        if text.strip():
            try:
                index.search(text, mode="bm25")
            except QueryError:  # only operators (`-word`, `tag:x`): refused with a message, never a crash
                pass
        else:  # the search contract refuses a blank query, with a message
            with pytest.raises(QueryError, match="the query is empty"):
                index.search(text, mode="bm25")
        index.search(text + " snyc komprimieren", mode="bm25")
