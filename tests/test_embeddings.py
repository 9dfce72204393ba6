"""Our fast Model2Vec reader against the model2vec package itself, on the bundled model."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from vaultseek.embeddings.static import BUNDLED_MODEL_NAME, load_embedder
from vaultseek.errors import ModelError

TEXTS = [
    "how to handle authentication failures",
    "login error recovery",
    "Die Kündigungsfrist beträgt drei Monate.",
    "",
    "🙂",
    "def _rrf_fuse(lists, k=60): return sorted(lists)",
    "word " * 3000,
]


def test_matches_model2vec_reference() -> None:
    model2vec = pytest.importorskip("model2vec")
    ours = load_embedder(None)
    reference = model2vec.StaticModel.from_pretrained(str(ours.folder))
    expected = reference.encode(TEXTS)
    got = ours.embed(TEXTS)
    assert got.shape == (len(TEXTS), 256)
    np.testing.assert_allclose(got, expected, atol=2e-3)  # float16 weights


def test_vectors_are_unit_length_and_meaningful() -> None:
    model = load_embedder("bundled")
    assert model.name == BUNDLED_MODEL_NAME
    vectors = model.embed(["how to handle authentication failures", "login error recovery", "sourdough bread recipe"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.15
    assert not model.embed([""]).any()  # nothing to embed → a zero vector, not NaN


def test_fingerprint_is_stable() -> None:
    assert load_embedder(None).fingerprint == load_embedder(None).fingerprint


@pytest.mark.parametrize("spec", ["/no/such/folder", "./relative/missing", "not a hub id"])
def test_bad_model_specs_are_model_errors(spec: str) -> None:
    with pytest.raises(ModelError):
        load_embedder(spec)


REPO = Path(__file__).resolve().parents[1]
TOKENIZER_EDGES = [
    "don't... stop!!", "a\tb\x00c\x7fd\x1fe\r\nf", "x" * 150, "antidisestablishmentarianism",
    "C++ / rust_lang @home #tag ~user {a:[1,2]}", "tar -xzvf file.tar.gz", "", "   ",
    "UPPER Case MiXeD", "q" * 100, "zzzzqqqxj", "word " * 700,
]  # fmt: skip


def test_a_short_ascii_text_is_tokenized_in_python_as_tokenizers_does() -> None:
    """The bundled model's WordPiece in Python (what a fresh search tokenizes a query with)
    gives the ids the ``tokenizers`` library gives, on every line of this repository's docs, on
    random ASCII and on edge cases (control characters, runs of punctuation, over-long words, a
    text past the 512-token limit); a text it cannot be sure of is left to the library."""
    model = load_embedder()
    assert model._wordpiece is not None
    lines = [
        line for path in sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
        for line in path.read_text("utf-8").splitlines()
    ]  # fmt: skip
    chance = random.Random(29)  # and random ASCII, control characters included
    noise = ["".join(chr(chance.randrange(128)) for _ in range(chance.randrange(1, 60))) for _ in range(2_000)]
    checked = 0
    for text in TOKENIZER_EDGES + lines + noise:
        ids = model._wordpiece.ids(text, model.max_length)
        if ids is None:
            assert not text.isascii() or "[" in text  # not ASCII, or may name an added token
            continue
        assert ids == model.tokenizer.encode(text, add_special_tokens=False).ids, text
        checked += 1
    assert checked > 1_000
    for text in ["Die Kündigungsfrist", "🙂", "an [UNK] token", "a [pad] token", "[P\x00AD]"]:
        assert model._wordpiece.ids(text, model.max_length) is None


def test_a_query_is_embedded_without_building_the_tokenizers_tokenizer() -> None:
    model = load_embedder()
    query = model.embed(["how do I rotate refresh tokens"])
    assert model._tokenizer is None
    assert (model.embed(["how do I rotate refresh tokens"] * 100)[0] == query[0]).all()  # batch path
    assert model._tokenizer is not None
