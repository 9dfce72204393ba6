"""Turning what a user typed into an FTS5 query that cannot fail, and choosing snippets.

FTS5's query language gives meaning to ``"``, ``*``, ``-``, ``:``, ``^``, ``(``, ``AND``,
``OR``, ``NOT``, ``NEAR``. Users type ``C++``, ``"unbalanced``, ``-flag`` and ``§3 Absatz 2``
and mean none of it. So we never pass their text through: each whitespace-separated piece is
reduced to the word tokens FTS5's ``unicode61`` tokenizer would see, and emitted as a quoted
phrase (``_rrf_fuse`` → ``"rrf fuse"``, matching the same adjacent tokens in the index). The
only syntax kept is a trailing ``*`` for prefix search (``auth*``). The result contains
nothing but quoted phrases, ``*``, ``AND``/``OR`` and parentheses, so it always parses. (The
operators people mean — ``"a phrase"``, ``-word``, ``tag:x`` — are read before this, by
``search.syntax``.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CJK_RANGES = (
    (0x1100, 0x11FF), (0x3040, 0x30FF), (0x3130, 0x318F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFF66, 0xFF9F),
)  # fmt: skip
"""Han, Hiragana, Katakana (incl. half-width), Hangul, as inclusive code point ranges: scripts
written without spaces between words (Korean has spaces, but particles cling to the words)."""
_CJK_RUN = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in CJK_RANGES) + "]+")


def index_text(text: str) -> str:
    """What the full-text index receives for ``text`` (queries go through it too).

    FTS5's ``unicode61`` tokenizer takes a whole run of CJK characters as one token, so a
    two-character word inside a sentence could never be found. Each run is rewritten as its
    overlapping character pairs plus its last character (``東京大学`` → ``東京 京大 大学 学``):
    any word of two or more characters is then the phrase of its pairs, and a single
    character is a prefix of a pair or the final single. ``ß`` becomes ``ss``, so *Straße*
    finds *Strasse* (the tokenizer already folds ä/ö/ü to a/o/u)."""
    if "ß" in text or "ẞ" in text:
        text = text.replace("ß", "ss").replace("ẞ", "SS")
    if not _CJK_RUN.search(text):
        return text
    return _CJK_RUN.sub(_split_run, text)


def _split_run(match: re.Match[str]) -> str:
    run = match.group()
    pairs = [run[i : i + 2] for i in range(len(run) - 1)]
    return " " + " ".join([*pairs, run[-1]]) + " "


WORD = re.compile(r"[^\W_]+")
"""A word as FTS5's ``unicode61`` tokenizer sees one: it splits on everything that is not a
letter, number or private-use character, and underscore is punctuation to it, so it is a
separator here too. Every module that splits text into words the way the index does uses it."""
MAX_TERMS = 64
"""Longer queries keep their first 64 distinct non-stopword pieces: a whole 60-word prompt
from an agent hook fits, and a 10 KB paste still costs a bounded amount of work."""


STOPWORDS = frozenset(
    """a an and are as at be but by can do does for from how i if in into is it its me my
    no not of on or our so that the their then there these this to was we what when where
    which who why will with you your der die das und ist nicht ein eine zu den mit von
    about against all also am any been being between both could did doing else had has have
    having he her here hers herself him himself his itself just might must myself nor only
    other others ought ours ourselves own please same shall she should some such than them
    themselves they those through too upon very were whom whose would yet yours yourself
    yourselves via within without don doesn didn isn aren wasn weren haven hasn won shouldn
    wouldn couldn""".split()
)
"""Words dropped from a query that has other words. In a big vault they match most chunks,
so they add nothing to the ranking but make FTS5 read huge posting lists (a 60 ms query
becomes 2 ms); in a vault of a dozen notes the one note that says *should* or *they* would
rank first on it, since a word few notes hold weighs the most. Words of time, order and amount
(*every*, *before*, *until*, *much*) stay: "every 2 seconds" and "before it tries again" name
what a command does."""


@dataclass(frozen=True, slots=True)
class LexicalQuery:
    """The pieces of a query, ready to render as an FTS5 expression."""

    phrases: tuple[str, ...]
    """Each piece as a quoted FTS5 phrase, possibly with a trailing prefix ``*``; stopwords
    are left out unless the query has nothing else."""
    terms: tuple[str, ...]
    """Lower-cased word tokens, for choosing snippets."""
    required: tuple[str, ...] = ()
    """Phrases every match holds (a query's ``"quoted phrases"``, ``search.syntax``): joined
    with ``AND`` to either form of the query, and scored by BM25 like the others."""
    expanded: tuple[str, ...] = ()
    """Lower-cased words no chunk holds that match by their other forms instead
    (``vocabulary.refine_query``: *komprimieren* finds *komprimiert*)."""
    left_out: int = 0
    """Words of the query's CJK runs it does not look for: a single character beside longer
    words (``秒`` and ``測`` of ``このスクリプト何秒かかってるか測りたい``, which searches
    ``スクリプト``)."""

    @property
    def empty(self) -> bool:
        return not self.phrases and not self.required

    @property
    def pieces(self) -> int:
        """How many words and phrases the user asked about: those the query looks for, and
        the words of its CJK runs it leaves out (:attr:`left_out`)."""
        return len(self.phrases) + len(self.required) + self.left_out

    def match_all(self) -> str:
        return " AND ".join((*self.required, *self.phrases))

    def match_any(self) -> str:
        if not self.required or not self.phrases:
            return " OR ".join(self.phrases) if not self.required else self.match_all()
        return " AND ".join(self.required) + " AND (" + " OR ".join(self.phrases) + ")"


def _query_tokens(piece: str) -> list[str]:
    """Word tokens of an ``index_text``-ed piece; a CJK run's trailing single is dropped from
    a multi-character word, so the phrase is just its pairs (found anywhere in a run)."""
    tokens = WORD.findall(piece)
    out: list[str] = []
    for i, token in enumerate(tokens):
        follows_pair = i > 0 and len(tokens[i - 1]) == 2 and tokens[i - 1][1] == token
        if _is_single_cjk(token) and follows_pair:
            continue
        out.append(token)
    return out


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a character of :data:`CJK_RANGES`."""
    return bool(_CJK_RUN.search(text))


def _is_single_cjk(token: str) -> bool:
    return len(token) == 1 and bool(_CJK_RUN.match(token))


def parse_query(text: str, *, max_terms: int = MAX_TERMS) -> LexicalQuery:
    """Split user text into safe FTS5 phrases; never raises. CJK runs are split into words
    first (:func:`cjk_words`)."""
    phrases: list[str] = []
    stop_phrases: list[str] = []
    terms: list[str] = []
    seen: set[str] = set()
    pieces, left_out = _query_pieces(text)
    for raw in pieces:
        piece = index_text(raw)
        tokens = _query_tokens(piece)
        if not tokens:
            continue
        prefix = raw.endswith("*") or (len(tokens) == 1 and _is_single_cjk(tokens[0]))
        phrase = '"' + " ".join(tokens) + '"' + (" *" if prefix else "")
        key = phrase.lower()
        if key in seen:
            continue
        seen.add(key)
        if not prefix and len(tokens) == 1 and key.strip('"') in STOPWORDS:
            stop_phrases.append(phrase)
            continue
        phrases.append(phrase)
        terms.extend(t.lower() for t in tokens)
        if len(phrases) >= max_terms:
            break
    if not phrases:  # "to be or not to be": all stopwords, so they are the query
        phrases = stop_phrases[:max_terms]
        terms = [p.strip('"').lower() for p in phrases]
    return LexicalQuery(tuple(phrases), tuple(dict.fromkeys(terms)), left_out=left_out)


def phrase_query(text: str) -> str | None:
    """``text`` as one FTS5 phrase — its words, in order, next to each other — or None when it
    holds no word. A CJK run is its character pairs (as :func:`parse_query` reads one)."""
    tokens = _query_tokens(index_text(text))
    return '"' + " ".join(tokens) + '"' if tokens else None


def _query_pieces(text: str) -> tuple[list[str], int]:
    """The whitespace-separated pieces of ``text``, each CJK run replaced by its words (the
    pieces as they are when that leaves nothing: a query of question words only), and how many
    words of its CJK runs are left out (:func:`cjk_words`)."""
    pieces: list[str] = []
    left_out = 0
    for raw in text.split():
        runs = _CJK_RUN.findall(raw)
        if all(_script(run[0]) == "hangul" for run in runs):  # none, or Korean: spaced already
            pieces.append(raw)
            continue
        at = 0
        for match in _CJK_RUN.finditer(raw):
            if match.start() > at:
                pieces.append(raw[at : match.start()])
            run = match.group()
            # One character on a Latin word is a particle (``Docker的``); beside nothing but
            # punctuation or an operator (``书*``, ``书?``) it is the word searched for.
            if len(run) > 1 or not WORD.search(raw[: match.start()] + raw[match.end() :]):
                words, singles = cjk_words(run)
                pieces.extend(words)
                left_out += singles
            at = match.end()
        if at < len(raw):
            pieces.append(raw[at:])
    return (pieces, left_out) if pieces else (text.split(), 0)


CJK_STOPWORDS = frozenset(
    """怎么样 怎么办 怎么 怎样 如何 什么 为什么 为何 哪个 哪些 哪里 哪儿 是否 有没有 没有 可以 能否
    能不能 一下 一个 一些 这个 那个 这些 那些 我们 你们 他们 自己 应该 需要 还是 或者 以及 然后 就是
    但是 所以 因为 正在 到底 咋办 什麼 怎麼 如果 请问 的 了 吗 呢 吧 啊 呀 么 嘛 啥 咋 谁 哪 把 被 给
    都 也 就 还 又 我 你 他 她 它 这 那 是 和 与 及 或 很 太 再 得 地 着 过 请 让 要 想 能 会 在 有
    何 方法 場合 どう なに なん を は が の に で と も へ や か から まで より です ます ですか
    ください""".split()
)
"""Question words, particles and pronouns of Chinese and Japanese, dropped from a CJK run of a
query when other words remain: they occur on most pages (or on none as a character pair with
their neighbours), so left in, an all-words query fails and an any-word one favours long
pages. Japanese particles are listed for queries that space them off (``ファイル を 圧縮``);
inside a run, every hiragana stretch is dropped."""


def _script(character: str) -> str:
    point = ord(character)
    if 0x3040 <= point <= 0x309F:
        return "hiragana"
    if 0x30A0 <= point <= 0x30FF or 0xFF66 <= point <= 0xFF9F:
        return "katakana"
    if 0xAC00 <= point <= 0xD7AF or 0x1100 <= point <= 0x11FF or 0x3130 <= point <= 0x318F:
        return "hangul"
    return "han"


def cjk_words(run: str) -> tuple[list[str], int]:
    """The words of one CJK run of a query, for an all-words query that can match, and how
    many single characters it leaves out beside longer words.

    A run has no spaces, and as one phrase of its character pairs (``列出正在运行的进程``) it
    matches only a page holding that exact sentence. So it is cut where the script changes
    (Japanese: kanji, katakana, hiragana), hiragana runs (particles, inflections) and the
    question words, particles and pronouns of :data:`CJK_STOPWORDS` are dropped, and what
    is left of the Han text is searched as its character pairs, each a word of the query
    (``列出 运行 进程``); katakana words and Korean words (spaced already) stay whole phrases.
    Korean particles are left on: stripping them (``파일을`` → ``파일``) measured no better
    on the judged Korean questions. A run with nothing else left is searched as it is."""
    if len(run) < 2:
        return ([] if run in CJK_STOPWORDS else [run]), 0
    pieces: list[tuple[str, str]] = []
    for character in run:
        script = _script(character)
        if pieces and pieces[-1][0] == script:
            pieces[-1] = (script, pieces[-1][1] + character)
        else:
            pieces.append((script, character))
    words: list[str] = []
    for script, piece in pieces:
        if script == "hiragana" and (len(pieces) > 1 or piece in CJK_STOPWORDS):
            continue
        if script in ("katakana", "hangul"):  # loanwords; a Korean word: one phrase
            words.append(piece)
        else:
            words.extend(pair for word in _without_stopwords(piece) for pair in _pairs(word))
    longer = [w for w in words if len(w) > 1]
    return (longer, len(words) - len(longer)) if longer else (words, 0)


def _without_stopwords(piece: str) -> list[str]:
    """``piece`` cut at its stopwords (the longest one at each position), which are dropped."""
    words: list[str] = []
    start = at = 0
    while at < len(piece):
        for size in (3, 2, 1):
            if piece[at : at + size] in CJK_STOPWORDS:
                if at > start:
                    words.append(piece[start:at])
                at += size
                start = at
                break
        else:
            at += 1
    if start < len(piece):
        words.append(piece[start:])
    return words


def _pairs(word: str) -> list[str]:
    if len(word) <= 2:
        return [word]
    return [word[i : i + 2] for i in range(len(word) - 1)]


SNIPPET_CHARS = 240
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.MULTILINE)


def _stems(terms: tuple[str, ...]) -> tuple[str, ...]:
    return tuple({t[: max(3, len(t) - 2)] for t in terms if t})


def _word_starts(flat: str, stems: tuple[str, ...]) -> list[int]:
    """Offsets where a word starting with one of ``stems`` begins (case-insensitive).

    ``str.find`` per stem over a lower-cased copy: a C-level scan, where testing every word
    in Python made snippets 90% of a 100-result search."""
    low = flat.lower()
    if len(low) != len(flat):  # a rare character changed length when lower-cased
        low = "".join(ch.lower()[:1] or ch for ch in flat)
    found = set()
    for stem in stems:
        at = low.find(stem)
        while at >= 0:
            if at == 0 or not low[at - 1].isalnum():
                found.add(at)
            at = low.find(stem, at + 1)
    return sorted(found)


def make_snippet(text: str, terms: tuple[str, ...], *, width: int = SNIPPET_CHARS) -> str:
    """The ``width``-character window of ``text`` holding the most query-term matches.

    Terms match by prefix of a word (``rotat`` for ``rotate`` also hits ``rotating``), a cheap
    stand-in for the stemmer. Headings are dropped when there is body text to show instead.
    """
    body = _HEADING_LINE.sub(" ", text) if "#" in text else text
    flat = " ".join((body if body.strip() else text).split())  # str.split: 5× a regex here
    if len(flat) <= width:
        return flat
    hits = _word_starts(flat, _stems(terms))
    start = 0
    if hits:
        best, best_count, right = hits[0], 0, 0
        for left, pos in enumerate(hits):
            while right < len(hits) and hits[right] < pos + width - 40:
                right += 1
            if right - left > best_count:
                best, best_count = pos, right - left
        start = max(0, best - 40)
        if start:
            space = flat.find(" ", start)
            start = space + 1 if 0 <= space < best else start
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.rfind(" ", start + width // 2, end)
        end = space if space > 0 else end
    return ("…" if start else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")
