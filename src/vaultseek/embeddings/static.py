"""Static (Model2Vec) text embeddings: a token-vector lookup and a mean, no neural network.

This module owns ``tokenizers``, ``safetensors`` and ``huggingface_hub``. It reads the
Model2Vec folder format (``model.safetensors`` with an ``embeddings`` matrix and optional
``weights``/``mapping``, ``tokenizer.json``, ``config.json``) directly instead of going through
the ``model2vec`` package: that package's import and ``from_pretrained`` cost ~1.1 s, which a
shell user or an agent hook would pay on every search. The arithmetic follows Model2Vec's
``StaticModel.encode`` (a test checks our vectors against it): tokenize without special tokens,
drop the unknown token, truncate, look up (remapped, weighted) token vectors, average, normalise.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import ModelError
from . import wordpiece

if TYPE_CHECKING:
    from tokenizers import Tokenizer

BUNDLED_MODEL = "bundled"
"""The model spec that names the model shipped inside the package."""
BUNDLED_MODEL_DIR = Path(__file__).parent / "model_data" / "minilm-l6-v2-m2v256"
BUNDLED_MODEL_NAME = "vaultseek/minilm-l6-v2-m2v256"
_BATCH = 256
_PYTHON_CHARS = 2_000
"""Texts up to this many characters in all are tokenized in Python (``wordpiece``) when they
can be: a query's length, where building the ``tokenizers`` tokenizer would cost more."""


@dataclass(frozen=True, slots=True)
class ModelFiles:
    """Where a model lives on disk and the name the index records for it."""

    name: str
    folder: Path


def resolve_model(spec: str | None) -> ModelFiles:
    """Turn a configured model spec into local files.

    ``None`` / ``"bundled"`` is the model inside the package; an existing folder is used as it
    is; anything else is taken as a Hugging Face hub id (``minishlab/potion-base-8M``) and
    downloaded once into the hub cache, which needs a network this machine may not have.
    """
    if spec is None or spec in ("", BUNDLED_MODEL, BUNDLED_MODEL_NAME):
        return ModelFiles(BUNDLED_MODEL_NAME, BUNDLED_MODEL_DIR)
    folder = Path(spec).expanduser()
    if folder.is_dir():
        return ModelFiles(str(folder.resolve()), folder.resolve())
    if folder.exists() or spec.startswith((".", "/", "~")) or spec.count("/") != 1:
        raise ModelError(
            f"embedding model {spec!r} is neither a model folder nor a hub id",
            hint="set `model` to a Model2Vec folder, a hub id such as minishlab/potion-base-8M, "
            "or 'bundled'",
        )
    try:
        from huggingface_hub import snapshot_download

        local = snapshot_download(spec, allow_patterns=["*.json", "*.safetensors"])
    except Exception as exc:  # the hub client raises many unrelated types; all mean "not here"
        raise ModelError(
            f"could not download embedding model {spec!r}: {exc.__class__.__name__}",
            hint="this needs internet once; offline, use the bundled model (model = 'bundled') "
            "or a local Model2Vec folder",
        ) from exc
    return ModelFiles(spec, Path(local))


class StaticEmbedder:
    """A loaded Model2Vec model. ``embed`` returns L2-normalised float32 rows."""

    def __init__(self, files: ModelFiles) -> None:
        self.name = files.name
        self.folder = files.folder
        try:
            self._load()
        except ModelError:
            raise
        except Exception as exc:
            raise ModelError(
                f"cannot load embedding model from {files.folder}: {exc}",
                hint="the folder must hold model.safetensors, tokenizer.json and config.json",
            ) from exc

    def _load(self) -> None:
        config_path = self.folder / "config.json"
        self.config: dict[str, Any] = (
            json.loads(config_path.read_text("utf-8")) if config_path.exists() else {}
        )
        tensors = _read_tensors(self.folder / "model.safetensors")
        name = "embeddings" if "embeddings" in tensors else "embedding.weight"
        self.matrix: np.ndarray = tensors[name]
        self.weights = tensors.get("weights")
        self.mapping = tensors.get("mapping")
        if self.matrix.dtype == np.int8:  # vocabulary-quantized models carry float scales elsewhere
            self.matrix = self.matrix.astype(np.float32)
        tokenizer_text = (self.folder / "tokenizer.json").read_text("utf-8")
        self.max_length: int | None = self.config.get("max_length", 512)
        self.normalize = bool(self.config.get("normalize", True))
        self.dim = int(self.matrix.shape[1])
        self._tokenizer_text = tokenizer_text
        self._tokenizer: Tokenizer | None = None
        # A BERT WordPiece tokenizer's vocabulary tokenizes a short ASCII text (a query) in
        # Python: the ``tokenizers`` library is then built only for other texts (~20 ms less
        # for a fresh search). Other tokenizers are built here and now.
        parsed = json.loads(tokenizer_text)
        self._wordpiece = wordpiece.from_json(parsed)
        if self._wordpiece is not None:
            self.unk_id: int | None = self._wordpiece.unk_id
        else:
            self.unk_id = _unknown_token_id(self.tokenizer, parsed)
        self._median_token_chars: int | None = None
        """Characters per token (:func:`_median_token_length`), worked out on the first text
        long enough to need it: ~40 ms of a fresh process that only embeds a query."""
        self.fingerprint = _fingerprint(tokenizer_text, self.config, self.matrix)
        self._table32: np.ndarray | None = None
        self._words: tuple[list[str], np.ndarray, np.ndarray] | None = None
        self._spellings: dict[str, tuple[str, ...]] | None = None
        self._serial = False
        """Encode one text at a time: the thread pool batch encoding needs could not start."""

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's ``tokenizers`` tokenizer, built on first use."""
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            try:
                tokenizer = Tokenizer.from_str(self._tokenizer_text)
            except Exception as exc:
                raise ModelError(f"cannot load the tokenizer of {self.folder}: {exc}") from exc
            if self.max_length is not None:
                tokenizer.enable_truncation(max_length=self.max_length)
            tokenizer.no_padding()
            self._tokenizer = tokenizer
        return self._tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into a (len(texts), dim) float32 matrix of unit rows (zeros if empty)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            out[start : start + _BATCH] = self._embed_batch(texts[start : start + _BATCH])
        return out

    def _float32_table(self) -> np.ndarray:
        """The matrix as float32, made once: float16 rows convert slowly on every gather."""
        if self._table32 is None:
            self._table32 = self.matrix.astype(np.float32)
        return self._table32

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def kin(self, word: str, limit: int = 5) -> list[tuple[str, float]]:
        """The ``limit`` words of the model's vocabulary whose vectors are nearest ``word``'s,
        with their cosines, best first (*nap* → *asleep*, *sleeping*, *sleep*), when the model
        knows ``word`` as a whole word (one token of its WordPiece vocabulary); else none. A
        word of pieces (*xylophonic*, most words of another language than the model's) has no
        vector of its own to read."""
        if self._wordpiece is None:
            return []
        token = self._wordpiece.vocab.get(word.lower())
        words, rows_of, unit = self._whole_words()
        row = int(rows_of[token]) if token is not None else -1
        if row < 0 or len(words) <= limit:
            return []
        scores = unit @ unit[row]
        scores[row] = -1.0
        best = np.argpartition(-scores, limit)[:limit]
        best = best[np.argsort(-scores[best])]
        return [(words[i], float(scores[i])) for i in best]

    def spellings(self) -> Mapping[str, tuple[str, ...]]:
        """The vocabulary's whole words (as :meth:`kin` reads them) by first letter: the words
        of the model's language as they are written, which a typo is corrected against where
        the index holds only stems (``search/vocabulary.py``). Made on the first call (6–11 ms);
        empty for a tokenizer that is not WordPiece."""
        if self._spellings is None:
            vocab = self._wordpiece.vocab if self._wordpiece is not None else {}
            by_letter: dict[str, list[str]] = {}
            for token in filter(_whole_word, vocab):
                by_letter.setdefault(token[0], []).append(token)
            self._spellings = {letter: tuple(words) for letter, words in by_letter.items()}
        return self._spellings

    def _whole_words(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The vocabulary's whole-word tokens (:func:`_whole_word`), each token id's row among
        them (-1 for the others) and their vectors as unit rows: made on the first :meth:`kin`
        (~50 ms, 20 MB for the bundled model's 21k words)."""
        if self._words is None:
            assert self._wordpiece is not None
            vocab = self._wordpiece.vocab
            words = list(filter(_whole_word, vocab))
            ids = np.fromiter((vocab[t] for t in words), dtype=np.int64, count=len(words))
            rows = self.matrix.take(self.mapping[ids] if self.mapping is not None else ids, axis=0).astype(np.float32)
            rows /= np.sqrt(np.einsum("ij,ij->i", rows, rows))[:, None] + 1e-32
            rows_of = np.full(max(vocab.values()) + 1, -1, dtype=np.int64)
            rows_of[ids] = np.arange(len(ids))
            self._words = (words, rows_of, rows)
        return self._words

    def legible_share(self, text: str) -> float:
        """The share of ``text``'s known tokens that carry a learned meaning (1.0 when it
        has none): tokens other than the unknown one (dropped before the mean, so they do not
        count) that are not a letter of a Hangul syllable. An English WordPiece vocabulary
        (the bundled model's) takes each Korean syllable apart into letters and has vectors
        for those letters only, so a Korean query's vector is close to noise; search weighs
        the vector list by this share (``combine.list_weights``)."""
        if not _HANGUL.search(text):  # only Hangul gives Hangul letters: 1.0, without tokenizing
            return 1.0
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        known = [i for i in ids if i != self.unk_id]
        if not known:
            return 1.0
        legible = sum(1 for i in known if not _hangul_letters(self.tokenizer.id_to_token(i) or ""))
        return legible / len(known)

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per text: batch-encoded on the tokenizer's thread pool, or one text at a
        time in this thread once that pool has failed. The pool starts on first use; when it
        cannot (threads refused near a memory cap), ``tokenizers`` raises a Rust panic, which
        reaches Python as ``pyo3_runtime.PanicException`` — a ``BaseException``, not an
        ``Exception`` — and keeps doing so on every later batch. A few short ASCII texts (a
        query) go through the Python WordPiece when the model has one: the same ids."""
        if self._wordpiece is not None and sum(len(t) for t in texts) <= _PYTHON_CHARS:
            wordpiece_ids = [self._wordpiece.ids(t, self.max_length) for t in texts]
            if all(ids is not None for ids in wordpiece_ids):
                return cast("list[list[int]]", wordpiece_ids)
        if not self._serial:
            try:
                encodings = self.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
                return [e.ids for e in encodings]
            except BaseException as exc:
                if type(exc).__name__ != "PanicException":
                    raise
                self._serial = True
        return [self.tokenizer.encode(t, add_special_tokens=False).ids for t in texts]

    def _embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if self.max_length is not None and any(len(t) > self.max_length for t in texts):
            # The limit is never below max_length characters (a token is at least one), so
            # when no text is longer than that, cutting changes nothing.
            if self._median_token_chars is None:
                self._median_token_chars = _median_token_length(self.tokenizer)
            limit = self.max_length * self._median_token_chars
            texts = [t[:limit] for t in texts]
        id_lists = self._token_ids(texts)
        if self.unk_id is not None:
            unk = self.unk_id
            id_lists = [[i for i in ids if i != unk] if unk in ids else ids for ids in id_lists]
        table = self._float32_table() if len(id_lists) > 8 else self.matrix
        out = np.zeros((len(id_lists), self.dim), dtype=np.float32)
        # One small gather per text: its rows stay in cache, which on this class of machine is
        # ~10x faster than one huge gather followed by a segmented sum.
        for row, ids in enumerate(id_lists):
            if not ids:
                continue
            picked = table.take(self.mapping[ids] if self.mapping is not None else ids, axis=0)
            if self.weights is not None:
                total = self.weights[ids].astype(np.float32) @ picked.astype(np.float32)
            else:
                total = picked.sum(axis=0, dtype=np.float32)
            out[row] = total / len(ids)
        if self.normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= norms + 1e-32
        return out


_JAMO = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\ud7b0-\ud7ff"
"""The Unicode blocks of Hangul letters (jamo): what a syllable is taken apart into."""
_HANGUL = re.compile(f"[{_JAMO}\uac00-\ud7a3]")
_ONLY_JAMO = re.compile(f"(?:##)?[{_JAMO}]+")


def _whole_word(token: str) -> bool:
    """A WordPiece token that is a whole word: three ASCII letters or more, lower case (no
    ``##`` piece, no digit or sign)."""
    return len(token) >= 3 and token.isascii() and token.isalpha() and token.islower()


def _hangul_letters(token: str) -> bool:
    """True for a piece made only of Hangul jamo (a syllable taken apart), ``##`` aside."""
    return _ONLY_JAMO.fullmatch(token) is not None


def load_embedder(spec: str | None = None) -> StaticEmbedder:
    """Load the configured model (see :func:`resolve_model`)."""
    files = resolve_model(spec)
    if not (files.folder / "model.safetensors").exists():
        raise ModelError(
            f"no model.safetensors in {files.folder}",
            hint="reinstall vaultseek, or point `model` at a Model2Vec folder",
        )
    return StaticEmbedder(files)


_SAFETENSORS_DTYPES = {
    "F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8, "U8": np.uint8,
    "I16": np.int16, "I32": np.int32, "I64": np.int64,
}  # fmt: skip


def _read_tensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file, memory-mapped read-only: a query touches a few
    of the matrix's rows, so a fresh process reads those pages instead of copying the whole
    file (15 MB for the bundled model: ~10 ms). The format is an 8-byte little-endian header
    length, a JSON header (name → dtype, shape, byte offsets into the data that follows) and
    the data; a dtype numpy lacks (``BF16``) goes through the ``safetensors`` package."""
    with path.open("rb") as file:
        size = int.from_bytes(file.read(8), "little")
        header = json.loads(file.read(size))
    header.pop("__metadata__", None)
    if any(meta["dtype"] not in _SAFETENSORS_DTYPES for meta in header.values()):
        from safetensors.numpy import load_file

        return load_file(str(path))
    tensors: dict[str, np.ndarray] = {}
    for name, meta in header.items():
        begin, end = meta["data_offsets"]
        dtype = np.dtype(_SAFETENSORS_DTYPES[meta["dtype"]]).newbyteorder("<")
        shape = tuple(int(n) for n in meta["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        if end - begin != count * dtype.itemsize:
            raise ModelError(f"{path.name}: tensor {name!r} does not fill its bytes")
        if count == 0:
            tensors[name] = np.zeros(shape, dtype=dtype)
            continue
        tensors[name] = np.memmap(path, dtype=dtype, mode="r", offset=8 + size + begin, shape=shape)
    return tensors


def _unknown_token_id(tokenizer: Tokenizer, tokenizer_json: dict[str, Any]) -> int | None:
    """The id of the model's unknown token, or None. WordPiece, BPE and WordLevel models name
    their unknown token, whose id the vocabulary gives; for the others, the tokenizer's JSON."""
    if hasattr(tokenizer.model, "unk_token"):
        unk: str | None = tokenizer.model.unk_token
        return None if unk is None else tokenizer.token_to_id(unk)
    return _unknown_token_id_in(tokenizer_json)


def _unknown_token_id_in(tokenizer_json: dict[str, Any]) -> int | None:
    model = tokenizer_json.get("model", {})
    unk = model.get("unk_token")
    vocab = model.get("vocab")
    if unk is None or vocab is None:
        return None
    if isinstance(vocab, dict):
        return vocab.get(unk)
    if isinstance(vocab, list):  # Unigram: [[piece, score], ...] and unk_id is an index
        return model.get("unk_id")
    return None


def _median_token_length(tokenizer: Tokenizer) -> int:
    """Characters per token, as Model2Vec estimates it to pre-truncate long strings cheaply."""
    lengths = sorted(len(t) for t in tokenizer.get_vocab())
    return max(1, lengths[len(lengths) // 2]) if lengths else 1


def _fingerprint(tokenizer_text: str, config: dict[str, Any], matrix: np.ndarray) -> str:
    """A cheap content fingerprint: tokenizer, config, shape, and 64 evenly spaced rows.

    Hashing the whole matrix would cost ~15 ms per process start; sampled rows catch any
    re-distillation or different model while staying well under a millisecond.
    """
    digest = hashlib.sha256()
    digest.update(tokenizer_text.encode("utf-8"))
    digest.update(json.dumps(config, sort_keys=True).encode("utf-8"))
    digest.update(repr((matrix.shape, str(matrix.dtype))).encode())
    picks = np.linspace(0, matrix.shape[0] - 1, num=min(64, matrix.shape[0]), dtype=np.int64)
    digest.update(np.ascontiguousarray(matrix[picks]).tobytes())
    return digest.hexdigest()[:16]

