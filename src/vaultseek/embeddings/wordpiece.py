"""A query's token ids without loading the ``tokenizers`` library, for a BERT WordPiece model.

Building the bundled model's tokenizer (``Tokenizer.from_str``) takes ~15 ms and importing the
library ~5 ms: a third of what a fresh ``vaultseek search`` spends once its imports are done,
to tokenize one short query. For a tokenizer that is exactly BERT's (a ``BertNormalizer`` that
cleans text and lowercases, a ``BertPreTokenizer``, a ``WordPiece`` model, no post-processor),
this module gives the ids ``tokenizers`` gives for an ASCII text, from the vocabulary alone:

- normalise: drop control characters, turn tab and line breaks into spaces, lowercase (ASCII
  has no accents to strip and no Chinese characters to pad);
- split on spaces, each ASCII punctuation character a word of its own;
- per word, the longest vocabulary piece from the left, the rest ``##``-prefixed; a word with a
  part no piece matches, or longer than the model's limit, is the unknown token.

Any other text (non-ASCII, or holding one of the tokenizer's added tokens, which it matches
before normalising) returns None: the caller uses ``tokenizers``. A test checks the ids against
``tokenizers`` on real notes and on edge cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_DROPPED = "".join(chr(c) for c in [*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
"""ASCII control characters other than tab and line breaks: the normaliser removes them."""
_CLEAN = str.maketrans({"\t": " ", "\n": " ", "\r": " "} | dict.fromkeys(_DROPPED))
_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
"""ASCII punctuation, as ``string.punctuation`` (not imported for it): each its own word."""
_SPACED = str.maketrans({p: f" {p} " for p in _PUNCTUATION})


class WordPiece:
    """The vocabulary and settings of a BERT WordPiece tokenizer (see :func:`from_json`)."""

    def __init__(
        self, vocab: Mapping[str, int], unk_token: str, prefix: str, max_chars: int, added: list[str]
    ) -> None:
        self.vocab = vocab
        self.unk_id = vocab[unk_token]
        self.prefix = prefix
        self.max_chars = max_chars
        self.added = added

    def ids(self, text: str, max_length: int | None) -> list[int] | None:
        """Token ids of ``text`` (no special tokens, cut at ``max_length``), or None when this
        module cannot tell them for it."""
        if not text.isascii():
            return None
        cleaned = text.lower().translate(_CLEAN)
        # An added token is matched in the text as given or as normalised: either way, not here.
        if any(t in text or t.lower() in cleaned for t in self.added):
            return None
        out: list[int] = []
        for word in cleaned.translate(_SPACED).split():
            out.extend(self._pieces(word))
            if max_length is not None and len(out) >= max_length:
                return out[:max_length]
        return out

    def _pieces(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return [self.unk_id]
        vocab, pieces, start = self.vocab, [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    pieces.append(found)
                    start = end
                    break
            else:
                return [self.unk_id]
        return pieces


def from_json(tokenizer: Mapping[str, Any]) -> WordPiece | None:
    """The :class:`WordPiece` of a parsed ``tokenizer.json``, or None unless it is BERT's."""
    model, normalizer = tokenizer.get("model") or {}, tokenizer.get("normalizer") or {}
    # Accents and Chinese characters are not ASCII: those settings change nothing here.
    bert_normalizer = {"type": "BertNormalizer", "clean_text": True, "lowercase": True}
    if (
        model.get("type") != "WordPiece"
        or not isinstance(model.get("vocab"), dict)
        or model.get("unk_token") not in model["vocab"]
        or any(normalizer.get(key) != value for key, value in bert_normalizer.items())
        or (tokenizer.get("pre_tokenizer") or {}).get("type") != "BertPreTokenizer"
        or tokenizer.get("post_processor") is not None
    ):
        return None
    added = [str(token["content"]) for token in tokenizer.get("added_tokens") or []]
    return WordPiece(
        model["vocab"],
        model["unk_token"],
        str(model.get("continuing_subword_prefix", "##")),
        int(model.get("max_input_chars_per_word", 100)),
        added,
    )
