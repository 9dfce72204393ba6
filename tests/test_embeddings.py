"""Our fast Model2Vec reader against the model2vec package itself, on the bundled model."""

from __future__ import annotations

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
