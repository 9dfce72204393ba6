"""The query syntax people bring from Obsidian and web search, read into a typed value.

    "exact phrase"        every result's chunk holds the phrase, as the full-text index
                          matches one (its tokenizer: case, accents and English endings fold)
    -word  -"a phrase"    no result comes from a note (a file) that holds it; ``-draft*`` too
    termin*               words starting with ``termin``, in every mode (see :mod:`hybrid`)
    tag:x  #x             the filter's ``tags``
    path:x                the filter's ``path_contains``: text in the vault-relative path
    file:x                the filter's ``name_contains``: text in the file name
    kind:pdf              the filter's ``kinds``
    after:2w  before:2026-01      the filter's ``modified_after`` / ``modified_before``
    [key:value]  [key>3]  a frontmatter condition of the filter's ``where``

Everything else is text, read as it always was: a quote that is never closed, ``word:word``
with a field not listed (``error: foo``), a hyphenated word (``a-b``), a number (``-5``), a
command-line flag or parameter (``-d``, one character; ``--force``; ``-ErrorAction``, more than
one capital letter; ``-L端口``, a flag run into CJK text),
``#3`` (a tag needs a letter), a ``[[link]]``, a bracket without a comparison (``[1]``). Field
names are lower case. A capitalised ``-Word`` (``-Recurse``, ``-Syu``, ``-Zahnarzt``) is
text here and named in :attr:`ParsedQuery.capitalised`: the search reads it as an exclusion
unless the vault writes it as a flag (``restriction.written_as_flags``), since a German noun
is capitalised too. Quotes protect what they hold from every other operator (``"-r"``,
``"tag:x"``); a field's value may be quoted (``path:"Daily Notes"``).

The fields make one :class:`~vaultseek.records.SearchFilter` read by the filter parser, so a
bad value is the same :class:`QueryError` a request's ``filters`` get (an unknown kind lists
the kinds), and the rules are the filters': the values of one field are alternatives
(``tag:a tag:b`` is either tag, as ``--tag a --tag b``), different fields must all hold. That
filter then narrows the request's own (:meth:`SearchFilter.within`).

:func:`parse_syntax` needs no index; the search itself turns the value into lists
(``search.hybrid``, ``search.restriction``). A query without an operator costs one regular
expression search and is read exactly as :func:`~vaultseek.text.lexical.parse_query` reads it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import QueryError
from ..records import QueryParse, SearchFilter
from ..text.lexical import MAX_TERMS, LexicalQuery, has_cjk, parse_query, phrase_query
from .filters import parse_filter

_MAYBE = re.compile(r'["*:#\[]|(?:^|\s)-')
"""A character some operator needs: text without one is read as plain words at once."""
_FIELD = re.compile(r'(tag|path|file|kind|after|before):("[^"]*"|[^\s"]\S*)')
_FILTER_FIELD = {
    "tag": "tags", "path": "path_contains", "file": "name_contains", "kind": "kinds",
    "after": "modified_after", "before": "modified_before",
}  # fmt: skip
_TAG = re.compile(r"#([\w/-]+)")
_HAS_LETTER = re.compile(r"[^\W\d_]")
"""A tag needs a letter (``#3`` is a number, as in Obsidian); so does an excluded word."""
_LATIN = re.compile(r"[A-Za-z]")
_BRACKET = re.compile(r"\[([^\[\]\n]+)\]")
_CONDITION = re.compile(r"[:=<>]")
"""A bracket is a frontmatter condition only with an operator in it: ``[1]`` stays text."""


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A query read for its operators. A query with none has only :attr:`text` and
    :attr:`lexical`, which are then exactly what the query was always searched as."""

    text: str
    """The free text: the query without its operators, phrases unquoted (``*`` kept on a
    prefix). What the vector lists embed, once each prefix is given its completions
    (:meth:`embedded`), and what title matching and intent read."""
    lexical: LexicalQuery
    """What BM25 ranks: the free words as :func:`parse_query` reads them, the required
    phrases as :attr:`LexicalQuery.required`."""
    required: tuple[str, ...] = ()
    """The quoted phrases, as typed between the quotes."""
    excluded: tuple[str, ...] = ()
    """What no result's note may hold, as typed (``android``, ``some phrase``, ``draft*``)."""
    excluded_match: str | None = None
    """The exclusions as one FTS5 expression (their phrases joined by ``OR``)."""
    prefixes: tuple[str, ...] = ()
    """The free words typed with a trailing ``*``, as typed."""
    prefix_only: bool = False
    """Every free word is a prefix (``termin*``): then every list ranks only the chunks that
    hold a word starting with one of them."""
    fields: tuple[str, ...] = ()
    """The field operators as typed (``tag:work``, ``[status:done]``)."""
    filter: SearchFilter | None = None
    """The filter the fields make (None: no field)."""
    segments: tuple[str, ...] = field(default=(), repr=False)
    """The free text's pieces in order (a word, a prefix as typed, a phrase's text)."""
    capitalised: tuple[str, ...] = ()
    """The capitalised ``-Word``s read as text, without their ``-`` (``Recurse``, ``Zahnarzt``):
    a flag in a vault that writes it as one, else an exclusion (:func:`parse_syntax`'s
    ``excluding``)."""

    @property
    def operators(self) -> bool:
        """Whether the query used any operator."""
        return bool(self.required or self.excluded or self.prefixes or self.fields)

    def prefix_match(self) -> str:
        """The FTS5 expression a chunk matches when it holds a word starting with one of the
        prefixes (empty without prefixes)."""
        return parse_query(" ".join(self.prefixes)).match_any() if self.prefixes else ""

    def embedded(self, completions: Mapping[str, Sequence[str]]) -> str:
        """The text the vector lists embed: :attr:`text` with each prefix replaced by its
        ``completions`` (the prefix without its ``*`` when it has none)."""
        if not self.prefixes:
            return self.text
        out: list[str] = []
        for segment in self.segments:
            if segment in self.prefixes:
                out.extend(completions.get(segment) or [segment.rstrip("*")])
            else:
                out.append(segment)
        return " ".join(out)

    def shown(self, completions: Mapping[str, Sequence[str]]) -> QueryParse | None:
        """What every surface shows of the parse (None without operators)."""
        if not self.operators:
            return None
        return QueryParse(
            text=self.embedded(completions),
            required=self.required,
            excluded=self.excluded,
            prefixes={prefix: tuple(completions.get(prefix) or ()) for prefix in self.prefixes},
            fields=self.fields,
            filters=self.filter.to_dict() if self.filter is not None else {},
        )


def plain_query(text: str) -> ParsedQuery:
    """``text`` read without operators, as every query was before them (the agent hooks and
    the study chat pass natural language: ``don't use the -r flag``)."""
    return ParsedQuery(text, parse_query(text), segments=(text,))


def may_have_operators(text: str) -> bool:
    """Whether ``text`` holds a character some operator needs (one regular expression search):
    without one, :func:`parse_syntax` is :func:`plain_query`."""
    return _MAYBE.search(text) is not None


def parse_syntax(text: str, *, now: float | None = None, excluding: Collection[str] = ()) -> ParsedQuery:
    """``text`` read for its operators (the module docstring); ``now`` (epoch seconds,
    default the current time) anchors ``after:2w``; ``excluding`` names capitalised
    ``-Word``s (:attr:`ParsedQuery.capitalised`) to read as exclusions. Raises
    :class:`QueryError` for a field value the filters refuse, an operator on a field
    (``-tag:x``), or a query that has nothing to look for once its exclusions and fields are
    taken out."""
    if not may_have_operators(text):
        return plain_query(text)
    reading = _Reading(text, excluding)
    reading.read()
    if not reading.required and not reading.excluded and not reading.prefixes and not reading.fields:
        plain = plain_query(text)
        return replace(plain, capitalised=tuple(reading.capitalised)) if reading.capitalised else plain
    return reading.parsed(now=now)


class _Reading:
    """One pass over a query's text, piece by piece (whitespace separates pieces; a quoted
    phrase may hold whitespace)."""

    def __init__(self, text: str, excluding: Collection[str] = ()) -> None:
        self.text = text
        self.excluding = excluding
        self.capitalised: list[str] = []
        self.segments: list[str] = []
        self.words: list[str] = []
        self.prefixes: list[str] = []
        self.required: list[str] = []
        self.phrases: list[str] = []
        self.excluded: list[str] = []
        self.excluded_phrases: list[str] = []
        self.fields: list[str] = []
        self.values: dict[str, list[str]] = {}

    def read(self) -> None:
        text, at, end = self.text, 0, len(self.text)
        while at < end:
            if text[at].isspace():
                at += 1
                continue
            at = self._piece(at)

    def _piece(self, start: int) -> int:
        """Read the piece at ``start``; returns where the next one may begin."""
        text = self.text
        negated = text[start] == "-" and start + 1 < len(text) and not text[start + 1].isspace() and text[start + 1] != "-"
        at = start + 1 if negated else start
        if text[at] == '"':
            close = text.find('"', at + 1)
            if close > at:
                self._phrase(text[at + 1 : close], negated=negated)
                return close + 1
        elif (match := _FIELD.match(text, at)) and _ends(text, match.end()):
            name, value = match.group(1), _unquoted(match.group(2))
            if value and not (name == "file" and value.startswith("//")):  # file:///… is a URL
                self._field(match.group(0), _FILTER_FIELD[name], value, negated=negated)
                return match.end()
        elif (
            text[at] == "#" and (match := _TAG.match(text, at)) and _ends(text, match.end())
            and _HAS_LETTER.search(match.group(1))
        ):  # fmt: skip
            self._field(match.group(0), "tags", match.group(1), negated=negated)
            return match.end()
        elif text[at] == "[" and (match := _BRACKET.match(text, at)) and _ends(text, match.end()) and _CONDITION.search(match.group(1)):
            self._field(match.group(0), "where", _condition(match.group(1)), negated=negated)
            return match.end()
        stop = start
        while stop < len(text) and not text[stop].isspace():
            stop += 1
        word = text[start:stop]
        if negated and (_excludable(word[1:]) or (word[1:] in self.excluding and _capitalised(word[1:]))):
            self._exclude(word[1:], parse_query(word[1:]).phrases)
        else:
            if negated and _capitalised(word[1:]):
                self.capitalised.append(word[1:])
            self._word(word)
        return stop

    def _word(self, word: str) -> None:
        self.segments.append(word)
        self.words.append(word)
        if word.endswith("*") and parse_query(word).phrases:
            self.prefixes.append(word)

    def _phrase(self, inner: str, *, negated: bool) -> None:
        phrase = phrase_query(inner)
        shown = " ".join(inner.split())
        if phrase is None:  # no word in it ("?"): text, as it was
            if not negated:
                self._word(inner)
            return
        if negated:
            self._exclude(shown, (phrase,))
        else:
            self.segments.append(shown)
            self.phrases.append(shown)
            self.required.append(phrase)
            if len(self.required) > MAX_TERMS:
                raise QueryError(f"the query has more than {MAX_TERMS} quoted phrases", hint="its most telling phrases are enough")

    def _exclude(self, shown: str, phrases: tuple[str, ...]) -> None:
        self.excluded.append(shown)
        self.excluded_phrases.extend(phrases)
        if len(self.excluded) > MAX_TERMS:
            raise QueryError(f"the query excludes more than {MAX_TERMS} words or phrases", hint="exclude fewer")

    def _field(self, typed: str, name: str, value: str, *, negated: bool) -> None:
        if negated:
            raise QueryError(
                f"-{typed}: a field cannot be excluded",
                hint=f'exclude words (-draft, -"some phrase"), or quote it to search for its words: "-{typed}"',
            )
        self.fields.append(typed)
        self.values.setdefault(name, []).append(value)

    def parsed(self, *, now: float | None) -> ParsedQuery:
        if not self.words and not self.required:
            what = "excludes words" if not self.fields else "has filters" if not self.excluded else "has filters and exclusions"
            raise QueryError(
                f"the query only {what}: say what to look for",
                hint='add the words to find, e.g. sync -android, or tag:project "meeting notes"',
            )
        lexical = parse_query(" ".join(self.words))
        required = tuple(dict.fromkeys(self.required))
        terms = [*lexical.terms, *(word.lower() for phrase in required for word in phrase.strip('"').split())]
        return ParsedQuery(
            text=" ".join(self.segments),
            lexical=LexicalQuery(lexical.phrases, tuple(dict.fromkeys(terms)), required),
            required=tuple(dict.fromkeys(self.phrases)),
            excluded=tuple(self.excluded),
            excluded_match=" OR ".join(dict.fromkeys(self.excluded_phrases)) or None,
            prefixes=tuple(dict.fromkeys(self.prefixes)),
            prefix_only=bool(self.words) and all(word in self.prefixes for word in self.words),
            fields=tuple(self.fields),
            filter=self._filter(now=now) if self.fields else None,
            segments=tuple(self.segments),
            capitalised=tuple(self.capitalised),
        )

    def _filter(self, *, now: float | None) -> SearchFilter:
        data: dict[str, Any] = {}
        for name, values in self.values.items():
            if name in ("modified_after", "modified_before"):
                if len(values) > 1:
                    word = "after" if name == "modified_after" else "before"
                    raise QueryError(f"{word}: is given {len(values)} times", hint=f"give one {word}: (and one {'before' if word == 'after' else 'after'}: for a range)")
                data[name] = values[0]
            else:
                data[name] = values
        return parse_filter(data, now=now)


def _ends(text: str, at: int) -> bool:
    """Whether a piece ending at ``at`` ends there: the text's end or whitespace follows."""
    return at >= len(text) or text[at].isspace()


def _unquoted(value: str) -> str:
    return value[1:-1].strip() if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _condition(inner: str) -> str:
    """A bracket's frontmatter condition, its value unquoted: ``status:"in progress"``."""
    match = re.match(r'(.*?(?:<=|>=|!=|[:=<>]))\s*"(.*)"\s*$', inner)
    return match.group(1) + match.group(2) if match else inner


def _excludable(word: str) -> bool:
    """Whether ``-word`` excludes ``word``: it starts with a letter, is longer than one
    character (``-d`` is a command-line flag, ``-5`` a number), has no capital letter
    (``-Syu``, ``-ErrorAction``: a flag or a PowerShell parameter, what a search for a command
    names) and is not a Latin flag run into CJK text (``ssh -L端口转发``: a flag, then the
    question, written without a space)."""
    if len(word.rstrip("*")) < 2 or not _HAS_LETTER.match(word) or not parse_query(word).phrases:
        return False
    if word != word.lower():
        return False
    return not (has_cjk(word) and _LATIN.search(word))


def _capitalised(word: str) -> bool:
    """Whether ``-word`` is a capitalised word the vault decides on
    (:attr:`ParsedQuery.capitalised`): excludable but for its one capital, its first letter
    (``-Recurse``, ``-Zahnarzt``; not ``-ErrorAction`` or ``-TLS``, only ever flags)."""
    rest = word[1:]
    return word[:1].isupper() and rest == rest.lower() and _excludable(word[:1].lower() + rest)
