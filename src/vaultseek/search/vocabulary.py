"""A query's words against the words the index holds: other forms, and typos.

The full-text index stems English only (FTS5's Porter stemmer), so a German or Spanish word
finds its own form and no other: ``komprimieren`` misses a page that says ``komprimiert`` and
``Komprimierung``. And a word typed wrong finds nothing at all. Both are fixed on the query
side, against the index's own vocabulary (an ``fts5vocab`` view), so the index stays as it is:

* **word forms**: when the vault is written in a language Snowball stems (its commonest
  function words are in at least :data:`LANGUAGE_SHARE` of the chunks), each longer query word
  also matches every indexed word that starts with its stem in that language —
  ``komprimieren`` → ``komprimi*`` (``komprimiert``, ``komprimierung``), ``archivos`` →
  ``archiv*``. An English vault has none of the markers, so its queries are unchanged. The
  language's :data:`FUNCTION_WORDS` are left out of a query that has other words.
* **typos**: a query word that no chunk holds is replaced by the nearest indexed word
  (:func:`nearest_term`: a letter dropped, added, changed or two swapped; the commonest such
  word wins), and the response says what was searched instead (``Obsidain snyc`` →
  ``obsidian sync``), each word as the vault writes it (:func:`written_as`: *rotation*, not
  the stem ``rotat``). A word that occurs anywhere is never changed, and a query most of whose
  missing words have no near neighbour is another language's, not misspelt (:func:`_misspelt`).
  In a vault written in English or in no Snowball language (:func:`writes_english`) the word
  is also compared as the index stems it, and in the hybrid search with the static model's
  written words (:func:`spelled_word`), unless that model knows the word as typed.
* **words of like meaning**: a query word that no chunk holds, is no typo and that the
  static model knows as a word also matches the closest words by that model's vectors that
  the index holds (:func:`kin_words`: *nap* → *sleep*, *laptop* → *notebook*), when some
  other word of the query is the vault's: a question about the vault asked in the asker's own
  words. A query none of whose words the vault holds (made-up words, another language) is
  searched as typed. The response says what was added.

What each missing word was searched as is :attr:`Refined.alternatives`: the response carries
it, snippets are cut around it and every surface marks it beside the query's own words.

PyStemmer (Snowball in C, ~1 µs a word) is imported here only, on the first query of a vault
in one of those languages.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..records import searched_words
from ..storage.db import fts5_tokens
from ..storage.store import Store
from ..text.lexical import STOPWORDS, WORD, LexicalQuery, has_cjk, index_text

LANGUAGE_MARKERS: dict[str, tuple[str, ...]] = {
    "german": ("und", "nicht", "oder", "wird"),
    "spanish": ("los", "las", "pero"),
    "french": ("les", "avec", "pour"),
    "italian": ("della", "che", "sono"),
    "portuguese": ("não", "uma", "você"),
    "dutch": ("het", "een", "niet"),
}
"""Words common in running text of a language and rare elsewhere, per Snowball algorithm."""
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    language: frozenset(words.split())
    for language, words in {
        "german": "dem des im am auf aus fur wie was wo wann warum ich mein meine es sich auch kann man",
        "spanish": """el la los las lo un una unos unas de del al en y o u que es son ser esta estan he ha han por para
            con sin se me mi mis te tu tus su sus le les nos como cual cuando donde hay muy mas ya pero si""",
        "french": """le la les un une des du de au aux et ou que qui quoi est sont etre pour par avec sans dans
            sur ce cette ces mon ma mes je il elle nous vous ils ne pas plus comment quel quelle quand en""",
        "italian": """il lo la gli le un uno una di del della dei delle da con su per tra fra che sono essere
            come quale dove quando non piu mi ti si ci vi""",
        "portuguese": """os as um uma uns umas de do da dos das em no na nos nas por para com sem que sao ser
            esta estao como qual onde quando nao mais meu minha se me""",
        "dutch": """de het een en of van op te met voor aan bij zijn niet dat die dit wat hoe waar wanneer ik
            je jij we wij ze er""",
    }.items()
}
"""Per language (folded as the index stores words): articles, prepositions, pronouns, question
words. In a vault written in that language they are left out of a query that has other words,
as :data:`~vaultseek.text.lexical.STOPWORDS` are everywhere: a natural question is mostly
such words, which match half the vault (and Spanish ``es`` names a command's page)."""
LANGUAGE_SHARE = 0.05
"""A vault is taken to be (partly) in a language when its most frequent marker is in at least
this share of its chunks; in English collections (SciFact, the tldr pages) each is under 1%."""
MIN_STEM = 4
"""Stems shorter than this are not used as prefixes (``pak*`` would reach too far)."""
STEM_ENDING = 4
"""The longest ending a misspelt word may have past an indexed stem (``configur`` + ``aton``):
longer, and a word is "corrected" to its first part (``microenviroment`` → ``micro``)."""
KIN_COSINE = 0.6
"""The least cosine between a missing word's and a kin word's vectors (:func:`kin_words`):
*nap* → *sleep* is 0.66, *laptop* → *notebook* 0.66; *useless* → *useful* (0.65) passes too,
which is why only a word no chunk holds is given kin."""
KIN_WORDS = 1
"""Kin words searched for one missing word, closest first."""
NAMED_ONES: tuple[frozenset[str], ...] = tuple(
    frozenset(words.split())
    for words in (
        "monday tuesday wednesday thursday friday saturday sunday weekday weekend",
        """january february march april may june july august september october november december
        jan feb mar apr jun jul aug sep sept oct nov dec""",
        "yesterday today tonight tomorrow",
        """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
        fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
        eighty ninety hundred thousand million billion first second third fourth fifth sixth
        seventh eighth ninth tenth""",
    )
)
"""Words that each name one thing of a kind: a model puts *Tuesday* next to *Monday* and
*nine* next to *ten*, but a note about Tuesday does not answer a question about Monday. A
word's kin is never another word of its kind (:func:`kin_words`)."""
Kin = Callable[[str], list[tuple[str, float]]]
"""A model's nearest words to a word, with their cosines (``StaticEmbedder.kin``)."""
Spellings = Callable[[], Mapping[str, tuple[str, ...]]]
"""A model's words as they are written, by first letter (``StaticEmbedder.spellings``)."""


class WordModel(Protocol):
    """What the static model knows of words: their nearest words and how they are written."""

    def kin(self, word: str, limit: int = 5) -> list[tuple[str, float]]: ...

    def spellings(self) -> Mapping[str, tuple[str, ...]]: ...


_WORD = re.compile(r'^"([^\W\d_]+)"$')
"""A query phrase that is one word of letters: the only kind given other forms or corrected."""


@functools.cache
def _stemmer(language: str) -> Callable[[str], str]:
    import Stemmer  # PyStemmer: imported only for a vault in a language it stems

    stem: Callable[[str], str] = Stemmer.Stemmer(language).stemWord
    return stem


def fold(word: str) -> str:
    """``word`` lower-cased with its diacritics removed and ``ß`` as ``ss``, as the index
    stores words (``unicode61 remove_diacritics 2``)."""
    low = word.lower().replace("ß", "ss")
    if low.isascii():
        return low
    return "".join(c for c in unicodedata.normalize("NFKD", low) if not unicodedata.combining(c))


def writes_english(store: Store) -> bool:
    """Whether the vault is written in English too: *the* in at least :data:`LANGUAGE_SHARE`
    of its chunks (a German vault with English notes beside the German ones is; the Spanish
    tldr pages, 0.3 %, are not)."""
    chunks = store.chunk_count()
    return bool(chunks) and store.document_frequencies(["the"])[0] >= LANGUAGE_SHARE * chunks


def vault_languages(store: Store) -> tuple[str, ...]:
    """The Snowball languages the vault is written in, by :data:`LANGUAGE_MARKERS` (the counts
    are the store's cached document frequencies)."""
    markers = [word for words in LANGUAGE_MARKERS.values() for word in words]
    counts = dict(zip(markers, store.document_frequencies(markers), strict=True))
    chunks = store.chunk_count()
    if not chunks:
        return ()
    return tuple(
        language
        for language, words in LANGUAGE_MARKERS.items()
        if max(counts[w] for w in words) >= LANGUAGE_SHARE * chunks
    )


def word_forms(word: str, languages: tuple[str, ...]) -> list[str]:
    """The stems of ``word`` in ``languages`` worth searching as prefixes: folded, at least
    :data:`MIN_STEM` letters, and shorter than the word itself."""
    low = word.lower()
    folded = fold(word)
    forms: list[str] = []
    for language in languages:
        stem = fold(_stemmer(language)(low))
        if len(stem) >= MIN_STEM and stem != folded and stem not in forms:
            forms.append(stem)
    return forms


def osa_distance(a: str, b: str, limit: int) -> int:
    """Edit distance with adjacent swaps (optimal string alignment), or ``limit + 1`` once it
    is sure to exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def allowed_edits(word: str) -> int:
    """How many edits a correction of ``word`` may make: none under four letters, one up to
    seven (at four letters, only a swap of two neighbours: ``snyc``), two from eight."""
    return 0 if len(word) < 4 else 1 if len(word) < 8 else 2


def nearest_term(store: Store, word: str, *, stemmed: bool = True) -> str | None:
    """The indexed term closest to ``word`` within :func:`allowed_edits` (fewest edits, then
    most chunks), or None. Candidates start with the word's first two letters, its first and
    third (a second letter added, dropped or swapped: ``snyc`` → ``sync``) or its second and
    first: three narrow ``fts5vocab`` ranges. A term of five letters or more that the word
    starts with, :data:`STEM_ENDING` letters short of it at most, counts as one edit away: it
    is a stem (``configuraton`` → ``configur``).

    The index stores English words stemmed (*objects* as ``object``), so with ``stemmed`` (a
    vault in no Snowball language) a word of five letters or more is also compared as the index
    stems it: ``objcts`` is two edits from ``object`` but its stem ``objct`` one, as
    ``coputers`` (``coput``) is from ``comput``. A term only that comparison finds is taken when
    the vault's own word for it (:func:`written_as`) is one slip from the word as typed: the
    stem of *parade*, ``parad``, is one edit from ``param``, but *parade* is two from *params*,
    as *symphony* is from *symfony*."""
    nearest = _nearest(store, word, stemmed=stemmed)
    return nearest[0] if nearest is not None else None


def _nearest(store: Store, word: str, *, stemmed: bool) -> tuple[str, str | None] | None:
    """:func:`nearest_term`'s term, and the vault's own word for it when checking the term
    read it (None: not read yet)."""
    folded = fold(word)
    limit = allowed_edits(folded)
    if not limit:
        return None
    stem = store.index_terms(word) if stemmed and len(folded) >= 5 else []
    stems = [s for s in stem if len(stem) == 1 and len(s) >= 4 and s != folded]
    found: dict[str, tuple[int, int, bool]] = {}
    for start in dict.fromkeys(start for p in (folded, *stems) for start in (p[:2], p[0] + p[2], p[1] + p[0])):
        for term, chunks in store.terms_starting(start):
            as_typed = _edits(folded, term, limit)
            as_stemmed = [d for s in stems if (d := _edits(s, term, min(limit, allowed_edits(s)))) is not None]
            if chunks and (as_typed is not None or as_stemmed):
                found[term] = (min([*as_stemmed, *([as_typed] if as_typed is not None else [])]), -chunks, as_typed is not None)
    checks = iter(range(3))  # a check reads sections (written_as): three at most
    for term, (_distance, _chunks, typed) in sorted(found.items(), key=lambda item: (*item[1][:2], item[0])):
        if typed:
            return term, None
        if next(checks, None) is None:
            break
        if osa_distance(folded, fold(written := written_as(store, term, word)), 1) <= 1:
            return term, written
    return None


def _edits(word: str, term: str, limit: int) -> int | None:
    """The edits from ``word`` to ``term`` as :func:`nearest_term` counts them (a stem the word
    starts with is one); None when more than ``limit``."""
    if not limit:
        return None
    if 5 <= len(term) < len(word) <= len(term) + STEM_ENDING and word.startswith(term):
        return 1
    if abs(len(term) - len(word)) > limit or len(set(word) ^ set(term)) > 2 * limit:
        return None  # an edit changes the length by one and the letters by two at most
    distance = osa_distance(word, term, limit)
    if distance > limit or (len(word) == 4 and distance == 1 and sorted(word) != sorted(term)):
        return None  # four letters: only a swap, "rust" is no typo of "rest"
    return distance


PREFIX_COMPLETIONS = 3
"""How many index words a query's ``prefix*`` is embedded as (its commonest completions)."""
PREFIX_TERMS = 5_000
"""The most index terms read for one prefix, in term order (a one-letter prefix's run of the
vocabulary is the longest: ~1,500 terms and ~5 ms at 7k chunks); the commonest among them win."""
PREFIX_SAMPLE = 20
"""Chunks holding the prefix whose words say how each completion is written out."""


def prefix_completions(store: Store, prefix: str, n: int = PREFIX_COMPLETIONS) -> list[str]:
    """The ``n`` index words starting with ``prefix`` (a query's ``termin*``) that the most
    chunks hold, commonest first: what the vector lists embed for the prefix, since the
    literal ``termin*`` means nothing to a model. The index stores words stemmed
    (``terminal`` and ``terminate`` are both ``termin``), and a model reads whole words, so
    each is written as the word it most often is in a few chunks that hold the prefix.
    Several words before the ``*`` (``foo.ba*``) keep the first ones and complete the last."""
    typed = index_text(prefix.rstrip("*"))
    tokens = fts5_tokens(typed, query=True, prefix=True)
    if not tokens:
        return []
    *head, last = tokens
    terms = sorted(store.terms_starting(last, PREFIX_TERMS), key=lambda row: (-row[1], row[0]))[:n]
    written = {} if has_cjk(typed) else _written_forms(store, typed, [term for term, _chunks in terms])
    return list(dict.fromkeys(" ".join([*head, written.get(term, term)]) for term, _chunks in terms))


def _written_forms(store: Store, typed: str, terms: list[str]) -> dict[str, str]:
    """Index term → the word it is most often written as, in a few chunks that hold a word
    starting with ``typed``'s last word."""
    start = fold(WORD.findall(typed)[-1]) if WORD.findall(typed) else ""
    phrase = '"' + " ".join(WORD.findall(typed)) + '" *'
    ids = store.chunks_matching(phrase, PREFIX_SAMPLE).tolist() if start else []
    seen: dict[str, int] = {}
    for row in store.chunks_by_id(ids).values():
        for word in WORD.findall(row.text):
            low = word.lower()
            if fold(low).startswith(start):
                seen[low] = seen.get(low, 0) + 1
    if not seen:
        return {}
    words = sorted(seen, key=lambda w: (-seen[w], w))
    forms: dict[str, str] = {}
    for word in words:  # commonest first: the first word to reach a term writes it
        found = store.index_terms(word)
        if len(found) == 1 and found[0] in terms:
            forms.setdefault(found[0], word)
    return forms


WRITTEN_SAMPLE = 50
"""Chunks holding a corrected term whose words say how the vault writes it (~5 ms; twenty
missed *compressing* among the tldr pages that say *compress*, *compressed*, *compression*)."""


def written_as(store: Store, term: str, typed: str) -> str:
    """How the vault writes index ``term`` (stemmed: ``rotat``), the written word nearest to
    ``typed`` among those of a few chunks that hold it (``rotaton`` → *rotation* where the vault
    says both *rotate* and *rotation*): what a reader is told was searched. ``term`` itself
    when no word of those chunks is indexed as it."""
    seen: dict[str, int] = {}
    for row in store.chunks_by_id(store.chunks_matching(f'"{term}"', WRITTEN_SAMPLE).tolist()).values():
        for word in WORD.findall(row.text):
            low = word.lower()
            if fold(low)[:2] == term[:2]:
                seen[low] = seen.get(low, 0) + 1
    folded = fold(typed)
    for word in sorted(seen, key=lambda w: (osa_distance(folded, fold(w), len(w) + len(folded)), -seen[w], w)):
        if store.index_terms(word) == [term]:
            return word
    return term


def spelled_word(store: Store, word: str, spellings: Spellings) -> str | None:
    """The written word one slip from ``word`` among the model's (``spellings``) that some
    chunk holds (the one the most chunks hold), or None, for a word of six letters or more:
    what :func:`nearest_term` cannot reach through the index's stems. Porter stems *operator*
    to ``oper`` and *running* to ``run``, so neither ``ooerator`` nor ``runnimg`` is an edit or
    two from a term, but each is one from a word of the dictionary the vault holds. One slip,
    not two: two reach from a word the model lacks to another it knows (*espresso* →
    *express*, *sprocket* → *socket*), which is a rarer word, not a typo; and not in a word of
    five letters, where one slip reaches a word from nonsense (*ploof* → *proof*)."""
    folded = fold(word)
    if len(folded) < 6 or not folded.isascii():
        return None
    near = [
        w for w in spellings().get(folded[0], ()) if abs(len(w) - len(folded)) <= 1
        and len(set(w) ^ set(folded)) <= 2 and osa_distance(folded, w, 1) <= 1
    ]  # fmt: skip
    held = [(-chunks, w) for w, chunks in zip(near, store.word_frequencies(near), strict=True) if chunks]
    return min(held)[1] if held else None


def kin_words(store: Store, word: str, kin: Kin) -> list[str]:
    """Up to :data:`KIN_WORDS` words that ``kin`` finds within :data:`KIN_COSINE` of ``word``
    and some chunk holds, closest first, one per index term (*sleeping* and *sleep* are one),
    none of the same kind (:data:`NAMED_ONES`)."""
    kind = next((words for words in NAMED_ONES if word.lower() in words), frozenset())
    near = [w for w, cosine in kin(word) if cosine >= KIN_COSINE and w not in STOPWORDS and w not in kind]
    found: dict[str, str] = {}
    for candidate, chunks in zip(near, store.word_frequencies(near), strict=True):
        terms = store.index_terms(candidate)
        if chunks and terms and terms[0] not in found:
            found[terms[0]] = candidate
        if len(found) == KIN_WORDS:
            break
    return list(found.values())


@dataclass(frozen=True, slots=True)
class Refined:
    """A query as :func:`refine_query` made it searchable, and what it changed."""

    query: LexicalQuery
    notices: tuple[str, ...] = ()
    """What the response tells the user: the corrected query, the words added."""
    alternatives: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Each query word no chunk holds (as typed) and what was searched in its place or beside
    it: a typo's correction, the start its other forms share (``komprimi*``), words of like
    meaning. Snippets are cut around them and every surface marks them."""
    slips: tuple[str, ...] = ()
    """The words of :attr:`alternatives` that were typos, replaced by their correction, and
    that the static model has no whole word for (``runnimg``, not ``proud``): to an embedding
    model they are pieces without meaning."""

    @property
    def marked(self) -> tuple[str, ...]:
        """The words of :attr:`alternatives` as snippets look for them."""
        return searched_words(self.alternatives)

    def respelled(self, text: str) -> str:
        """``text`` with each of :attr:`slips` (whole, in any case) replaced by its correction:
        what the vector lists embed. A slip is pieces the model has no meaning for; a word it
        knows (*proud*, corrected to the vault's *prod*) keeps the meaning it was typed with."""
        for word in self.slips:
            correction = self.alternatives[word][0].replace("\\", "\\\\")  # a replacement, not a template
            text = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", correction, text, flags=re.IGNORECASE)
        return text


def refine_query(store: Store, query: LexicalQuery, model: WordModel | None = None) -> Refined:
    """``query`` with its misspelt words corrected, its words' other forms added and, given
    the static ``model``, words of like meaning for the words no chunk holds
    (:func:`kin_words`); with the notices a response shows about it and what each missing
    word was searched as. Given the model, a word of a vault written in English that no index
    term is near is also corrected against the model's written words (:func:`spelled_word`).
    In a vault written in another language its :data:`FUNCTION_WORDS` are left out first,
    unless nothing else is left."""
    languages = vault_languages(store)
    if languages:
        query = _without_function_words(query, languages)
    words = {i: m.group(1) for i, p in enumerate(query.phrases) if (m := _WORD.match(p))}
    words = {i: w for i, w in words.items() if w.lower() not in STOPWORDS and not has_cjk(w)}
    if not words:
        return Refined(query)
    frequencies = dict(zip(words, store.word_frequencies(list(words.values())), strict=True))
    phrases = list(query.phrases)
    terms = list(query.terms)
    shown = [p.replace('"', "").replace(" *", "*") for p in phrases]
    expanded: list[str] = []
    english = not languages or writes_english(store)  # Porter's stems and the model's words are English
    alternatives: dict[str, tuple[str, ...]] = {}
    corrections: dict[int, str | None] = {}
    words_known: set[str] = set()
    """The missing words the model knows as whole words."""
    spelled: dict[int, str | None] = {}
    """The vault's own word for a correction, where finding it already read it."""
    for i, word in words.items():
        if frequencies[i]:
            continue
        forms = [f for f in word_forms(word, languages) if store.terms_starting(f, 1)]
        if forms:
            phrases[i] = "(" + " OR ".join([phrases[i], *(f'"{f}" *' for f in forms)]) + ")"
            expanded.append(word.lower())
            alternatives[word] = tuple(f"{_as_typed(word, f)}*" for f in forms)
        else:
            # A word the model's language writes so is no slip of another (*sweet*, *Swift*):
            # only the index's own terms may stand in for it, as before either step existed.
            known = model is not None and word.lower() in model.spellings().get(word[:1].lower(), ())
            if known:
                words_known.add(word)
            nearest = _nearest(store, word, stemmed=english and not known)
            if nearest is not None:
                corrections[i], spelled[i] = nearest
            elif model is not None and english and not known:
                found = spelled_word(store, word, model.spellings)
                found_terms = store.index_terms(found) if found is not None else []
                corrections[i], spelled[i] = (found_terms[0], found) if found_terms else (None, None)
            else:
                corrections[i] = None
    fixed: list[tuple[str, str]] = []
    if _misspelt(corrections):
        for i, term in corrections.items():
            if term is not None:
                written = spelled.get(i) or written_as(store, term, words[i])
                phrases[i], shown[i] = f'"{term}"', written
                fixed.append((words[i], written))
                alternatives[words[i]] = (written,)
                terms = [written if t == words[i].lower() else t for t in terms]
    notices: list[str] = []
    if fixed:
        searched = " ".join(p.strip('"') for p in shown)
        missing = ", ".join(f'"{word}"' for word, _term in fixed)
        notices.append(f'searched for "{searched}": no chunk has {missing}')
    if model is not None and len(corrections) < len(words):  # some word is the vault's
        typos = {word for word, _term in fixed}
        for i in corrections:
            if words[i] not in typos and (near := kin_words(store, words[i], model.kin)):
                phrases[i] = "(" + " OR ".join([phrases[i], *(f'"{w}"' for w in near)]) + ")"
                alternatives[words[i]] = tuple(near)
                added = " and ".join(f'"{w}"' for w in near)
                notices.append(f'no chunk has "{words[i]}": searched {added} too, the nearest word the vault has')
    refined = LexicalQuery(tuple(phrases), tuple(dict.fromkeys(terms)), query.required, tuple(expanded))
    slips = tuple(word for word, _written in fixed if word not in words_known)
    return Refined(refined, tuple(notices), alternatives, slips)


def _as_typed(word: str, stem: str) -> str:
    """``stem`` (folded, as the index stores words) as ``word`` writes it when it is the start
    of ``word``'s folded form (``schlüssel`` for ``Schlüsseln``): what a reader sees marked."""
    low = word.lower()
    return low[: len(stem)] if len(low) == len(fold(word)) and fold(word).startswith(stem) else stem


def _misspelt(corrections: dict[int, str | None]) -> bool:
    """Whether the words no chunk holds read as typos of the vault's words: at least half of
    them are an edit or two from an indexed word. A question in a language the vault is not
    written in lacks most of its words with none near (``wie lade ich eine datei herunter``
    over English pages), and the one that happens to be near (``datei`` → ``date``) is no
    typo: BM25 searches such a query's words as typed, and the vector lists embed them so."""
    return sum(term is not None for term in corrections.values()) * 2 >= len(corrections)


def _without_function_words(query: LexicalQuery, languages: tuple[str, ...]) -> LexicalQuery:
    """``query`` without the one-word phrases that are function words in ``languages``; as it
    is when that would leave nothing."""
    function = frozenset().union(*(FUNCTION_WORDS[language] for language in languages))
    words = {p: fold(m.group(1)) for p in query.phrases if (m := _WORD.match(p))}
    gone = {word for word in words.values() if word in function}
    kept = tuple(p for p in query.phrases if words.get(p) not in gone)
    if not gone or not kept:
        return query
    return LexicalQuery(kept, tuple(t for t in query.terms if fold(t) not in gone), query.required)
