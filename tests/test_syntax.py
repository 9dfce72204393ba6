"""The query syntax's parser (``search/syntax.py``) on its own: what each operator reads as,
what stays text, the errors it gives, and — by property — that it raises nothing but
``QueryError`` on any text and loses no plain word."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultseek.errors import QueryError
from vaultseek.search.syntax import parse_syntax, plain_query
from vaultseek.text.lexical import STOPWORDS, parse_query

NOW = datetime(2026, 3, 15, 12, 0).astimezone().timestamp()


def test_a_query_without_operators_reads_as_it_always_did() -> None:
    for text in ["rotate refresh tokens", "C++ templates", "a-b e-mail", "error: foo bar", "§3 Absatz 2", "x" * 300]:
        parsed = parse_syntax(text)
        assert parsed == plain_query(text) and not parsed.operators
        assert parsed.lexical == parse_query(text) and parsed.text == text


def test_a_quoted_phrase_is_required_and_ranked() -> None:
    parsed = parse_syntax('"Exact  Phrase" sync')
    assert parsed.required == ("Exact Phrase",)
    assert parsed.lexical.required == ('"Exact Phrase"',) and parsed.lexical.phrases == ('"sync"',)
    assert parsed.lexical.match_all() == '"Exact Phrase" AND "sync"'
    assert parsed.text == "Exact Phrase sync"  # what the vectors embed: unquoted
    assert {"exact", "phrase", "sync"} <= set(parsed.lexical.terms)  # snippets mark the phrase too


def test_quotes_protect_every_other_operator() -> None:
    parsed = parse_syntax('"-r" "tag:x" "#idea" "[a:b]" "foo*"')
    assert parsed.required == ("-r", "tag:x", "#idea", "[a:b]", "foo*")
    assert not parsed.excluded and not parsed.fields and not parsed.prefixes and parsed.filter is None


@pytest.mark.parametrize(
    ("text", "excluded"),
    [
        ("sync -android", ("android",)),
        ('sync -"some phrase"', ("some phrase",)),
        ("sync -draft*", ("draft*",)),
        ("sync -v2 -android", ("v2", "android")),
        ("sync -東京 -端口", ("東京", "端口")),
    ],
)
def test_minus_excludes_a_word_a_phrase_or_a_prefix(text: str, excluded: tuple[str, ...]) -> None:
    parsed = parse_syntax(text)
    assert parsed.excluded == excluded and parsed.text == "sync"
    assert parsed.lexical.phrases == ('"sync"',)  # an excluded word is not searched for


def test_what_looks_like_an_exclusion_but_is_text() -> None:
    for text in ["sync - android", "sync e-mail", "sync -5", "temperature -3.5", "docker compose up -d", "rm --force", "sync -#3",
                 "ssh -L端口转发怎么写", "npm install -Dと-gの違い", "pacman -Syu", "Get-ChildItem -Recurse"]:  # fmt: skip
        parsed = parse_syntax(text)
        assert not parsed.excluded, text
        assert parsed.lexical == parse_query(text), text


def test_a_capitalised_minus_word_is_text_the_search_may_read_as_an_exclusion() -> None:
    parsed = parse_syntax("Termin -Zahnarzt -ErrorAction -TLS -Draft*")
    assert not parsed.excluded and parsed.capitalised == ("Zahnarzt", "Draft*")
    excluding = parse_syntax("Termin -Zahnarzt -ErrorAction -TLS -Draft*", excluding=["Zahnarzt", "Draft*", "TLS"])
    assert excluding.excluded == ("Zahnarzt", "Draft*") and excluding.text == "Termin -ErrorAction -TLS"
    assert parse_syntax("sync -android").capitalised == () and parse_syntax("pacman -Syu").capitalised == ("Syu",)


def test_a_prefix_is_kept_for_bm25_and_named_for_the_vectors() -> None:
    parsed = parse_syntax("termin*")
    assert parsed.prefixes == ("termin*",) and parsed.prefix_only
    assert parsed.lexical.phrases == ('"termin" *',)
    assert parsed.embedded({"termin*": ["terminal", "termin"]}) == "terminal termin"
    assert parsed.embedded({}) == "termin"
    mixed = parse_syntax("termin* sync")
    assert not mixed.prefix_only and mixed.embedded({"termin*": ["terminal"]}) == "terminal sync"


def test_fields_fill_the_filter() -> None:
    parsed = parse_syntax(
        'meeting tag:work #idea/new path:"Daily Notes" file:2026-01 kind:pdf after:2w before:2026-04 '
        '[status:done] [priority>3] [stage:"in progress"]',
        now=NOW,
    )
    assert parsed.text == "meeting" and parsed.lexical.phrases == ('"meeting"',)
    assert parsed.fields == (
        "tag:work", "#idea/new", 'path:"Daily Notes"', "file:2026-01", "kind:pdf", "after:2w", "before:2026-04",
        "[status:done]", "[priority>3]", '[stage:"in progress"]',
    )  # fmt: skip
    scope = parsed.filter
    assert scope is not None
    assert scope.tags == ("work", "idea/new") and scope.kinds == ("pdf",)
    assert scope.path_contains == ("Daily Notes",) and scope.name_contains == ("2026-01",)
    assert scope.where == (("status", "done"), ("stage", "in progress"))
    assert [str(c) for c in scope.comparisons or ()] == ["priority>3"]
    assert scope.modified_after is not None and abs(scope.modified_after.timestamp() - (NOW - 14 * 86_400)) < 1
    assert scope.modified_before == datetime(2026, 4, 1).astimezone()


def test_what_looks_like_a_field_but_is_text() -> None:
    for text in ["error: foo", "note: see below", "tag: empty", "#3 issue", "C# code", "see [1] and [[link:x]]",
                 "[a](b:c) link", "file:///etc/hosts", "10:30 meeting", "Tag:work", "status [todo]"]:  # fmt: skip
        parsed = parse_syntax(text)
        assert not parsed.fields and parsed.filter is None, text


def test_a_bad_field_value_is_the_filters_own_error() -> None:
    cases = {
        "x kind:zzz": ("unknown kind 'zzz'", "use some of note, pdf"),
        "x after:lunch": ("cannot read 'lunch' as a date or an age", "use a date"),
        "x [priority>high]": ("cannot compare with 'high'", "a comparison takes a number or a date"),
        "x [a>>b]": ("has two operators", "one of : = <"),
        "x after:2w before:3w": ("modified after", "swap them?"),
        "x after:1d after:2d": ("after: is given 2 times", "give one after:"),
    }
    for text, (message, hint) in cases.items():
        with pytest.raises(QueryError) as caught:
            parse_syntax(text, now=NOW)
        assert message in caught.value.message and caught.value.hint and hint in caught.value.hint, text


def test_a_field_cannot_be_excluded() -> None:
    for text in ["x -tag:draft", "x -#draft", "x -[status:done]", "x -kind:pdf"]:
        with pytest.raises(QueryError, match="cannot be excluded") as caught:
            parse_syntax(text)
        assert caught.value.hint and '"-' in caught.value.hint


def test_a_query_must_say_what_to_look_for() -> None:
    for text in ["-android", "-android -ios", 'tag:work -"old notes"', "kind:pdf", "#idea"]:
        with pytest.raises(QueryError, match="say what to look for") as caught:
            parse_syntax(text)
        assert caught.value.hint and "e.g." in caught.value.hint
    assert parse_syntax('"android" -ios').required == ("android",)  # a phrase is something to look for


def test_the_shown_parse_says_what_was_read() -> None:
    parsed = parse_syntax('sync "exact phrase" -android termin* tag:work', now=NOW)
    shown = parsed.shown({"termin*": ["terminal"]})
    assert shown is not None
    assert shown.to_dict() == {
        "text": "sync exact phrase terminal", "required": ["exact phrase"], "excluded": ["android"],
        "prefixes": {"termin*": ["terminal"]}, "fields": ["tag:work"], "filters": {"tags": ["work"]},
    }  # fmt: skip
    assert parse_syntax("plain words").shown({}) is None


OPERATOR_TEXT = st.lists(
    st.sampled_from([*"ab-*:#[]<>=!/ \t\n\u00e4\u6771", "tag:", "path:", "file:", "kind:", "after:", "before:"]), max_size=12
).map("".join)
"""Text made mostly of operator characters, without quotes (which may join a word to a phrase)."""
WORD = re.compile(r"[a-z]{2,12}")


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=200))
def test_any_text_parses_or_is_a_query_error(text: str) -> None:
    try:
        parsed = parse_syntax(text, now=NOW)
    except QueryError as error:
        assert error.message
        return
    assert isinstance(parsed.text, str)
    parsed.lexical.match_all()  # renders


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(OPERATOR_TEXT, st.from_regex(WORD, fullmatch=True)), min_size=1, max_size=6))
def test_plain_words_are_never_lost(pieces: list[tuple[str, str]]) -> None:
    """A plain word, spaced off from whatever surrounds it, is searched: in the free text the
    vectors embed and in the BM25 query's terms — unless a bracket around it made a field."""
    text = " ".join(f"{noise} {word} " for noise, word in pieces)
    try:
        parsed = parse_syntax(text, now=NOW)
    except QueryError:
        return
    free = parsed.text.split()
    for _noise, word in pieces:
        in_field = any(word in typed for typed in parsed.fields)
        assert word in free or in_field, (text, parsed)
        if not in_field and word not in STOPWORDS:  # a stopword ("zu", "the") is embedded, not matched
            assert word in parsed.lexical.terms, (text, parsed)
