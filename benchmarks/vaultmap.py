"""The vault map's figures (docs/map.md, "Measured"): speed, the methods against alternatives,
clusters against known groups, and missing links against hidden ones.

    python -m benchmarks.vaultmap speed   [--workdir DIR] [--files 16894]
    python -m benchmarks.vaultmap methods [--workdir DIR] [--files 16894]
    python -m benchmarks.vaultmap groups [--data DIR] [--workdir DIR] [--split S] [--deep-pages N]
    python -m benchmarks.vaultmap links   [--data ../shared/data] [--workdir DIR]

* **speed** — the benchmark vault (``benchmarks.vaultgen``, as ``python -m benchmarks``
  builds it) indexed with static vectors; the full map build step by step (gather, PCA, kNN,
  layout, clusters, names, regions, save), its peak memory, the kept map's answer, and an
  update after one edited note; each beside the same at a quarter of the vault, measured in
  the same run.
* **methods** — on the same notes' reduced vectors, each method in a fresh process (import
  time, run time, peak memory): our layout against a PCA projection, scikit-learn's t-SNE and
  umap-learn's UMAP (when installed), scored by neighbourhood preservation and
  trustworthiness; our spherical k-means against scikit-learn's HDBSCAN.
* **groups** — tldr pages as vaults whose groups are known: English pages by platform, and
  pages of several languages by language; adjusted Rand index and purity of our clusters and
  of HDBSCAN's, on the ``tune`` or ``test`` half of the platforms and languages.
* **links** — the PowerShell docs (7.5 reference and the conceptual docs) with 10% of their
  linked note pairs unlinked (fixed seed); how many of the hidden links each note's map
  suggestions recover in their top 10 and top 50, against ``related`` and random pairs.

Every part sets ``VAULTSEEK_DEEP_TIER=false`` and keeps its vaults and indexes under
``--workdir`` (a temporary folder when not given). scikit-learn (the ``bench`` extra) is
needed for t-SNE, HDBSCAN and the adjusted Rand index; umap-learn is used when installed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from benchmarks.vaultgen import VaultSpec, build_vault, edit_one_file

K_PRESERVED = 10
"""Neighbours compared between the reduced space and the map."""
REDUCTIONS = (48, 96, 128, 192)
"""Dimensions whose nearest notes the methods part compares with the full space's."""
TRUST_SAMPLE = 2_000
"""Notes whose neighbourhoods score trustworthiness (ranks are taken among every note)."""
HIDDEN_SHARE = 0.10
LINKS_SEED = 30


# -- shared ---------------------------------------------------------------------------------
def _indexed(vault: Path, db: Path) -> Any:
    """An open index of ``vault`` at ``db``, synced (static vectors only)."""
    from vaultseek.engine import open_index

    index = open_index(vault, db=db, create=True)
    index.sync(remember=False)
    return index


def _bench_vault(work: Path, files: int, seed: int = 7) -> tuple[Path, Path]:
    vault = work / f"vault-{files}"
    if not vault.exists():
        build_vault(vault, VaultSpec.scaled(files, seed=seed))
    return vault, work / f"index-{files}.db"


@contextmanager
def _timer(into: dict[str, float], name: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    into[name] = time.perf_counter() - start


# -- speed ----------------------------------------------------------------------------------
BUILD_STEPS = ("PCA", "kNN", "layout", "clusters", "names", "regions")
"""``making.build``'s steps, in the order its progress announces them."""


def build_steps(index: Any) -> dict[str, float]:
    """A full build of ``index``'s map, step by step (seconds): gathering the vectors, each
    step ``making.build`` announces, and saving."""
    from vaultseek.vaultmap import making

    store = index.store
    static, deep = index._graph.map_vectors()
    steps: dict[str, float] = {}
    with _timer(steps, "gather"):
        found = making.gather(store, static, deep)
    stamps: list[float] = []
    kept = making.build(store, found, clusters=None, progress=lambda _step: stamps.append(time.perf_counter()))
    stamps.append(time.perf_counter())
    steps.update({name: end - start for name, start, end in zip(BUILD_STEPS, stamps[:-1], stamps[1:], strict=True)})
    with _timer(steps, "save"):
        kept.save(store)
    steps["total"] = sum(steps.values())
    return steps


def speed_of(vault: Path, db: Path, *, edit_seed: int) -> dict[str, Any]:
    from vaultseek.reports import MapRequest

    out: dict[str, Any] = {}
    with _indexed(vault, db) as index:
        out["notes"] = index.status().files
        out["steps"] = build_steps(index)
        t = time.perf_counter()
        built = index.vault_map(MapRequest(rebuild=True))
        out["engine_build_s"] = time.perf_counter() - t
        out["clusters"] = len(built.clusters)
        tracemalloc.start()
        index.vault_map(MapRequest(rebuild=True))
        out["peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        kept_times = []
        for _ in range(3):
            t = time.perf_counter()
            answer = index.vault_map()
            kept_times.append(time.perf_counter() - t)
            assert answer.how == "kept", answer.how
        out["kept_s"] = min(kept_times)
        edited = edit_one_file(vault, seed=edit_seed)
        t = time.perf_counter()
        index.sync(remember=False)
        out["reindex_s"] = time.perf_counter() - t
        t, cpu = time.perf_counter(), time.process_time()
        updated = index.vault_map()
        out["update_s"], out["update_cpu_s"] = time.perf_counter() - t, time.process_time() - cpu
        out["update_how"], out["update_moved"] = updated.how, updated.moved
        out["edited"] = edited.name
    return out


def run_speed(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir)
    full = speed_of(*_bench_vault(work, args.files), edit_seed=args.seed)
    quarter = speed_of(*_bench_vault(work, args.files // 4), edit_seed=args.seed)
    return {"full": full, "quarter": quarter}


def render_speed(r: dict[str, Any]) -> str:
    full, base = r["full"], r["quarter"]
    lines = [
        f"| step | {full['notes']:,} notes | {base['notes']:,} notes (baseline) | ratio |",
        "|---|---:|---:|---:|",
    ]
    for step in full["steps"]:
        a, b = full["steps"][step], base["steps"][step]
        name = f"**{step}**" if step == "total" else step
        lines.append(f"| {name} | {a:.2f} s | {b:.2f} s | {a / max(b, 1e-9):.1f}× |")
    rows = [
        ("full build through `Index.vault_map(rebuild=True)`", "engine_build_s", "s"),
        ("peak memory allocated during that build (tracemalloc)", "peak_mb", "MB"),
        ("the kept map asked again (nothing changed)", "kept_s", "s"),
        ("one edited note re-indexed (`sync`)", "reindex_s", "s"),
        ("the map after that edit (`vault_map()`, updated)", "update_s", "s"),
        ("… its CPU time", "update_cpu_s", "s"),
    ]
    for label, key, unit in rows:
        a, b = full[key], base[key]
        lines.append(f"| {label} | {a:.2f} {unit} | {b:.2f} {unit} | {a / max(b, 1e-9):.1f}× |")
    lines.append(
        f"\nclusters: {full['clusters']} / {base['clusters']}; the update moved {full['update_moved']} note(s) "
        f"({full['update_how']}; edited {full['edited']})"
    )
    return "\n".join(lines)


# -- methods --------------------------------------------------------------------------------
METHODS = ("layout:ours", "layout:pca", "layout:tsne", "layout:umap", "cluster:ours", "cluster:hdbscan")
_IMPORTS = {
    "layout:ours": "vaultseek.vaultmap.layout",
    "layout:pca": "vaultseek.vaultmap.layout",
    "layout:tsne": "sklearn.manifold",
    "layout:umap": "umap",
    "cluster:ours": "vaultseek.vaultmap.clusters",
    "cluster:hdbscan": "sklearn.cluster",
}


def _peak_mb() -> float:
    """This process's peak resident memory (``VmHWM``: unlike ``ru_maxrss``, not inherited
    from the parent that started it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def import_seconds(module: str) -> float | None:
    """Seconds to import ``module`` in a fresh interpreter that has numpy loaded already
    (every method needs it); None when it is not installed."""
    code = f"import time, numpy; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    return float(done.stdout.strip()) if done.returncode == 0 else None


def run_method(method: str, vectors: np.ndarray, clusters: int | None = None) -> np.ndarray:
    """One method on the unit rows ``vectors``: positions (notes × 2) or cluster labels."""
    if method == "layout:ours":
        from vaultseek.vaultmap import features as feat
        from vaultseek.vaultmap import layout

        neighbours, sims = feat.nearest(vectors)
        return layout.lay_out(*layout.fuzzy_graph(neighbours, sims), layout.initial(vectors))
    if method == "layout:pca":
        from vaultseek.vaultmap import layout

        return layout.initial(vectors)
    if method == "layout:tsne":
        from sklearn.manifold import TSNE

        return np.asarray(TSNE(n_components=2, init="pca", metric="cosine", random_state=0).fit_transform(vectors))
    if method == "layout:umap":
        import umap

        return np.asarray(umap.UMAP(n_neighbors=15, metric="cosine", min_dist=0.1).fit_transform(vectors))
    if method == "cluster:ours":
        from vaultseek.vaultmap import clusters as clustering

        return clustering.k_means(vectors, clustering.cluster_count(len(vectors), clusters))[0]
    if method == "cluster:hdbscan":
        from sklearn.cluster import HDBSCAN

        return np.asarray(HDBSCAN(min_cluster_size=max(5, len(vectors) // 500), copy=True).fit_predict(vectors))
    raise ValueError(f"unknown method {method}")


def _child(argv: list[str]) -> int:
    """``_run METHOD IN.npy OUT.npy [CLUSTERS]``: one method in this fresh process; prints its
    import time, run time and memory as JSON."""
    method, source, target = argv[:3]
    clusters = int(argv[3]) if len(argv) > 3 and argv[3] != "-" else None
    vectors = np.load(source)
    before = _peak_mb()
    __import__(_IMPORTS[method])
    t = time.perf_counter()
    result = run_method(method, vectors, clusters)
    ran = time.perf_counter() - t
    np.save(target, result)
    print(json.dumps({"run_s": ran, "peak_mb": _peak_mb(), "base_mb": before}))
    return 0


def method_in_child(method: str, vectors: np.ndarray, work: Path, clusters: int | None = None) -> dict[str, Any] | None:
    """``method`` run in a fresh process: its figures and result; None without its library."""
    imported = import_seconds(_IMPORTS[method])
    if imported is None:
        return None
    import_seconds(_IMPORTS[method])  # the first import may compile (numba) or fill caches
    imported = import_seconds(_IMPORTS[method])
    source, target = work / "vectors.npy", work / f"{method.replace(':', '-')}.npy"
    np.save(source, vectors)
    command = [sys.executable, "-m", "benchmarks.vaultmap", "_run", method, str(source), str(target), str(clusters or "-")]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    figures["import_s"], figures["result"] = imported, np.load(target)
    return figures


def _knn(points: np.ndarray, queries: np.ndarray, k: int, *, cosine: bool) -> np.ndarray:
    """The ``k`` nearest rows of ``points`` to each of the rows ``queries`` (indices into
    ``points``), the query itself left out."""
    out = np.empty((len(queries), k), np.int64)
    for start in range(0, len(queries), 512):
        rows = queries[start : start + 512]
        if cosine:
            score = -(points[rows] @ points.T)
        else:
            score = ((points[rows][:, None, :] - points[None, :, :]) ** 2).sum(axis=2)
        score[np.arange(len(rows)), rows] = np.inf
        top = np.argpartition(score, k, axis=1)[:, :k]
        out[start : start + len(rows)] = top
    return out


def neighbourhoods(vectors: np.ndarray, xy: np.ndarray, k: int = K_PRESERVED, sample: int = TRUST_SAMPLE) -> dict[str, float]:
    """Neighbourhood preservation (the share of each note's ``k`` nearest in ``vectors`` that
    are among its ``k`` nearest on the map ``xy``) and trustworthiness (Venna & Kaski: map
    neighbours that are far in the vector space are penalised by their rank there), over
    ``sample`` notes drawn with a fixed seed, ranks taken among every note."""
    n = len(vectors)
    rows = np.random.default_rng(0).choice(n, size=min(sample, n), replace=False)
    high = _knn(vectors, rows, k, cosine=True)
    low = _knn(xy.astype(np.float64), rows, k, cosine=False)
    kept = np.mean([len(set(a) & set(b)) / k for a, b in zip(high, low, strict=True)])
    penalty = 0.0
    for i, row in enumerate(rows):
        sims = vectors @ vectors[row]
        sims[row] = np.inf  # itself ranks 0
        order = np.argsort(-sims, kind="stable")
        rank = np.empty(n, np.int64)
        rank[order] = np.arange(n)
        strangers = [j for j in low[i] if j not in set(high[i])]
        penalty += sum(int(rank[j]) - k for j in strangers)
    trust = 1.0 - 2.0 / (len(rows) * k * (2 * n - 3 * k - 1)) * penalty
    return {"preserved": float(kept), "trust": float(trust)}


def map_vectors(index: Any, *, full: bool = False) -> Any:
    """The notes' reduced unit vectors, as a map build makes them (with ``full``: and
    their unreduced features)."""
    from vaultseek.vaultmap import features as feat
    from vaultseek.vaultmap import making

    static, deep = index._graph.map_vectors()
    found = making.gather(index.store, static, deep)
    reduced = feat.fit_basis(found.full, found.space, found.centres).project(found.full)
    return (reduced, feat.unit_rows(found.full)) if full else reduced


def _projected(full: np.ndarray, dims: int) -> np.ndarray:
    """``full`` reduced by PCA to ``dims`` dimensions, as the map reduces its features."""
    from vaultseek.vaultmap import features as feat

    basis = feat.fit_basis(full, "static", feat.Centres(np.zeros(full.shape[1], np.float32)), dimensions=dims)
    return basis.project(full)


def reduction_agreement(reduced: np.ndarray, full: np.ndarray, k: int = K_PRESERVED) -> float:
    """The share of each note's ``k`` nearest in the full space that are among its ``k``
    nearest in the reduced one (``TRUST_SAMPLE`` notes, fixed seed)."""
    rows = np.random.default_rng(1).choice(len(full), size=min(TRUST_SAMPLE, len(full)), replace=False)
    near_full, near_reduced = _knn(full, rows, k, cosine=True), _knn(reduced, rows, k, cosine=True)
    return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(near_full, near_reduced, strict=True)]))


def run_methods(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir)
    vault, db = _bench_vault(work, args.files)
    with _indexed(vault, db) as index:
        vectors, full = map_vectors(index, full=True)
    out: dict[str, Any] = {"notes": len(vectors), "full_dim": full.shape[1], "dims": vectors.shape[1]}
    out["reduction_agreement"] = reduction_agreement(vectors, full)
    out["agreement_by_dimensions"] = {
        dims: reduction_agreement(_projected(full, dims), full) for dims in REDUCTIONS if dims < full.shape[1]
    }
    labels: dict[str, np.ndarray] = {}
    for method in args.methods.split(","):
        figures = method_in_child(method, vectors, work)
        if figures is None:
            out[method] = None
            continue
        result = figures.pop("result")
        if method.startswith("layout:"):
            figures.update(neighbourhoods(vectors, result))
        else:
            labels[method] = result
            figures["clusters"] = len(set(result.tolist()) - {-1})
            figures["noise"] = float(np.mean(result == -1))
        out[method] = figures
    if len(labels) == 2:
        out["agreement_ari"] = _ari(*labels.values())
    return out


def render_methods(r: dict[str, Any]) -> str:
    lines = [
        f"{r['notes']:,} notes, {r['dims']}-d vectors (the map's); each method in a fresh process",
        "",
        "| method | import | run | peak memory (process; before the run) | quality |",
        "|---|---:|---:|---:|---|",
    ]
    names = {
        "layout:ours": "layout: ours (kNN graph + UMAP-style forces, numpy)",
        "layout:pca": "layout: PCA projection (first two components)",
        "layout:tsne": "layout: t-SNE (scikit-learn, Barnes-Hut, cosine)",
        "layout:umap": "layout: UMAP (umap-learn, numba)",
        "cluster:ours": "clusters: spherical k-means (ours)",
        "cluster:hdbscan": "clusters: HDBSCAN (scikit-learn)",
    }
    for method in METHODS:
        if method not in r:
            continue
        f = r[method]
        if f is None:
            lines.append(f"| {names[method]} | not installed | | | |")
            continue
        if method.startswith("layout:"):
            quality = f"{f['preserved']:.1%} of 10 nearest kept; trustworthiness {f['trust']:.3f}"
        else:
            quality = f"{f['clusters']} clusters, {f['noise']:.0%} of notes unclustered"
        lines.append(
            f"| {names[method]} | {f['import_s']:.2f} s | {f['run_s']:.2f} s | {f['peak_mb']:.0f} MB "
            f"({f['base_mb']:.0f}) | {quality} |"
        )
    if "reduction_agreement" in r:
        lines.append(
            f"\nPCA to {r['dims']} dimensions (from {r['full_dim']}): {r['reduction_agreement']:.1%} of each note's "
            f"10 nearest in the full space are among its 10 nearest in the {r['dims']}"
        )
    if "agreement_by_dimensions" in r:
        shares = ", ".join(f"{dims}: {share:.1%}" for dims, share in r["agreement_by_dimensions"].items())
        lines.append(f"the same for other dimensions kept ({shares})")
    if "agreement_ari" in r:
        lines.append(f"\nadjusted Rand index between the two clusterings: {r['agreement_ari']:.3f}")
    return "\n".join(lines)


# -- groups ---------------------------------------------------------------------------------
PLATFORMS = ("android", "common", "freebsd", "linux", "netbsd", "openbsd", "osx", "sunos", "windows")
LANGUAGES = ("de", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt_BR", "ru", "tr", "zh")
PER_GROUP = 300
"""Pages drawn per language (fixed seed); the platform vault keeps every English page."""


def _halves(names: tuple[str, ...], split: str) -> list[str]:
    ordered = sorted(names)
    return ordered[0::2] if split == "tune" else ordered[1::2]


def group_vault(data: Path, kind: str, split: str, dest: Path, per_group: int = PER_GROUP) -> dict[str, str]:
    """Write the ``kind`` (platform | language) vault of ``split`` into ``dest``; path → group."""
    tldr = data / "tldr"
    groups: dict[str, str] = {}
    rng = random.Random(f"{kind}:{split}")
    if kind == "platform":
        for platform in _halves(PLATFORMS, split):
            for page in sorted((tldr / "pages" / platform).glob("*.md")):
                groups[f"{platform}/{page.name}"] = platform
    else:
        for language in _halves(LANGUAGES, split):
            pages = sorted((tldr / f"pages.{language}").rglob("*.md"))
            for page in rng.sample(pages, min(per_group, len(pages))):
                groups[f"{language}/{page.parent.name}/{page.name}"] = language
    if not dest.exists():
        for rel in groups:
            group, rest = rel.split("/", 1)
            folder = "pages" if kind == "platform" else f"pages.{group}"
            source = tldr / folder / (rel if kind == "platform" else rest)
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return groups


def _ari(a: np.ndarray, b: np.ndarray) -> float:
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(a, b))


def purity(labels: np.ndarray, truth: list[str]) -> float:
    """The share of notes whose cluster's commonest group is their own."""
    by_cluster: dict[int, Counter[str]] = defaultdict(Counter)
    for label, group in zip(labels.tolist(), truth, strict=True):
        by_cluster[label][group] += 1
    return sum(c.most_common(1)[0][1] for c in by_cluster.values()) / max(len(truth), 1)


def _reduced(index: Any, *, deep: bool) -> tuple[list[str], np.ndarray, str]:
    """The notes, their reduced vectors and their space, with or without the deep vectors."""
    from vaultseek.vaultmap import features as feat
    from vaultseek.vaultmap import making

    static, deep_vectors = index._graph.map_vectors()
    found = making.gather(index.store, static, deep_vectors if deep else None)
    return found.paths, feat.fit_basis(found.full, found.space, found.centres).project(found.full), found.space


def _scores(paths: list[str], vectors: np.ndarray, groups: dict[str, str]) -> dict[str, Any]:
    truth = [groups[p] for p in paths]
    count = len(set(truth))
    row: dict[str, Any] = {"notes": len(truth), "groups": count, "largest": Counter(truth).most_common(1)[0][1] / len(truth)}
    for method, clusters in (("cluster:ours", None), ("cluster:ours", count), ("cluster:hdbscan", None)):
        labels = run_method(method, vectors, clusters)
        name = method if clusters is None else f"{method} k={count}"
        row[name] = {
            "ari": _ari(np.array(truth), labels), "purity": purity(labels, truth),
            "clusters": len(set(labels.tolist()) - {-1}), "noise": float(np.mean(labels == -1)),
        }  # fmt: skip
    return row


def _deepened(vault: Path, db: Path) -> None:
    """Give every chunk of ``db`` its deep vector (``vaultseek deep``, in this process)."""
    from vaultseek.engine import open_index

    os.environ["VAULTSEEK_DEEP_TIER"] = "true"
    try:
        with open_index(vault, db=db) as index:
            while index.deepen() is None:
                time.sleep(1)
    finally:
        os.environ["VAULTSEEK_DEEP_TIER"] = "false"


def run_groups(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir)
    out: dict[str, Any] = {"split": args.split, "rows": {}}
    for kind in ("platform", "language"):
        vault = work / f"tldr-{kind}-{args.split}"
        groups = group_vault(Path(args.data), kind, args.split, vault)
        with _indexed(vault, work / f"tldr-{kind}-{args.split}.db") as index:
            paths, vectors, space = _reduced(index, deep=False)
        out["rows"][f"by {kind} ({space})"] = _scores(paths, vectors, groups)
    if args.deep_pages:
        vault = work / f"tldr-language-{args.split}-{args.deep_pages}"
        db = work / f"tldr-language-{args.split}-{args.deep_pages}.db"
        groups = group_vault(Path(args.data), "language", args.split, vault, per_group=args.deep_pages)
        with _indexed(vault, db):
            pass
        t = time.perf_counter()
        _deepened(vault, db)
        out["deep_s"] = time.perf_counter() - t
        with _indexed(vault, db) as index:
            for deep in (False, True):
                paths, vectors, space = _reduced(index, deep=deep)
                out["rows"][f"by language, {args.deep_pages} pages each ({space})"] = _scores(paths, vectors, groups)
            for weight in [float(w) for w in args.static_weights.split(",") if w]:
                out["rows"][f"by language, {args.deep_pages} pages each (static+deep, static weight {weight:g})"] = (
                    _weighted(index, groups, weight)
                )
    return out


def _weighted(index: Any, groups: dict[str, str], weight: float) -> dict[str, Any]:
    """:func:`_scores` with the static space weighted ``weight`` and the deep ``1 - weight``."""
    from vaultseek.vaultmap import features as feat

    kept = feat.STATIC_WEIGHT, feat.DEEP_WEIGHT
    feat.STATIC_WEIGHT, feat.DEEP_WEIGHT = weight, 1.0 - weight
    try:
        paths, vectors, _space = _reduced(index, deep=True)
        return _scores(paths, vectors, groups)
    finally:
        feat.STATIC_WEIGHT, feat.DEEP_WEIGHT = kept


def render_groups(r: dict[str, Any]) -> str:
    lines = [
        f"tldr pages, the {r['split']} half of the groups",
        "",
        "| vault | notes | groups (largest's share) | clustering | clusters | adjusted Rand index | purity |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    names = {"cluster:ours": "ours (count by the vault's size)", "cluster:hdbscan": "HDBSCAN"}
    for vault, row in r["rows"].items():
        for name, f in row.items():
            if not isinstance(f, dict):
                continue
            label = names.get(name, "ours (count = the groups')")
            if f["noise"]:
                label += f" ({f['noise']:.0%} unclustered)"
            lines.append(
                f"| {vault} | {row['notes']:,} | {row['groups']} ({row['largest']:.0%}) | {label} | {f['clusters']} | "
                f"{f['ari']:.3f} | {f['purity']:.3f} |"
            )
    if "deep_s" in r:
        lines.append(f"\ndeep vectors for the smaller vault made in {r['deep_s']:.0f} s")
    return "\n".join(lines)


# -- links ----------------------------------------------------------------------------------
_MD_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")


def _resolve(source: str, target: str, paths: set[str]) -> str | None:
    """The vault path a relative markdown link of ``source`` points at, if it is a note."""
    target = target.split("#", 1)[0]
    if not target or "://" in target or target.startswith(("/", "mailto:")):
        return None
    joined = os.path.normpath(str(PurePosixPath(source).parent / target)).replace(os.sep, "/")
    return joined if joined in paths else None


def links_vault(data: Path, dest: Path) -> tuple[int, int, list[tuple[str, str]]]:
    """Copy the PowerShell docs (7.5 reference, conceptual docs) to ``dest``, hide
    ``HIDDEN_SHARE`` of the linked note pairs (every link between the two, both ways, becomes
    its text). Returns the linked pairs, the hidden pairs and the hidden (source, target) links."""
    root = data / "powershell-docs" / "reference"
    texts: dict[str, str] = {}
    for folder in ("7.5", "docs-conceptual"):
        for page in sorted((root / folder).rglob("*.md")):
            texts[f"{folder}/{page.relative_to(root / folder).as_posix()}"] = page.read_text("utf-8", errors="replace")
    paths = set(texts)
    pairs: set[tuple[str, str]] = set()
    for source, text in texts.items():
        for match in _MD_LINK.finditer(text):
            target = _resolve(source, match.group(3), paths)
            if target and target != source and not match.group(1):
                pairs.add((min(source, target), max(source, target)))
    ordered = sorted(pairs)
    hidden_pairs = set(random.Random(LINKS_SEED).sample(ordered, round(HIDDEN_SHARE * len(ordered))))
    removed: Counter[tuple[str, str]] = Counter()

    def unlink(source: str) -> Callable[[re.Match[str]], str]:
        def replace(match: re.Match[str]) -> str:
            target = _resolve(source, match.group(3), paths)
            if target and not match.group(1) and (min(source, target), max(source, target)) in hidden_pairs:
                removed[(source, target)] += 1
                return match.group(2)
            return match.group(0)

        return replace

    for source, text in texts.items():
        texts[source] = _MD_LINK.sub(unlink(source), text)
    if not dest.exists():
        for rel, text in texts.items():
            written = dest / rel
            written.parent.mkdir(parents=True, exist_ok=True)
            written.write_text(text, "utf-8")
    return len(ordered), len(hidden_pairs), sorted(removed)


def run_links(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir)
    vault = work / "powershell-hidden"
    linked_pairs, hidden_pairs, hidden = links_vault(Path(args.data), vault)
    with _indexed(vault, work / "powershell-hidden.db") as index:
        still = {(a, b) for a, b in index.store.link_edges()}
        linked_either = still | {(b, a) for a, b in still}
        hidden = [(a, b) for a, b in hidden if (a, b) not in linked_either]
        t = time.perf_counter()
        built = index.vault_map()
        build_s = time.perf_counter() - t
        notes = [p.path for p in built.notes]
        sources = sorted({a for a, _b in hidden})
        suggested: dict[str, list[str]] = {}
        related: dict[str, list[str]] = {}
        meaning: dict[str, list[str]] = {}
        for source in sources:
            on_map = index.map_note(source, k=50)
            suggested[source] = [m.target for m in on_map.missing_links]
            near = index.map_note(source, k=50 + 20).neighbours
            meaning[source] = [n.path for n in near if not n.linked][:50]
            found = index.related(source, k=50 + 40).results
            related[source] = [r.path for r in found if (source, r.path) not in linked_either][:50]
        vault_wide = [(m.source, m.target) for m in index.missing_links(limit=500)]
        degree = Counter(a for a, _b in linked_either)
    out: dict[str, Any] = {
        "notes": len(notes), "linked_pairs": linked_pairs, "hidden_pairs": hidden_pairs,
        "hidden_links": len(hidden), "sources": len(sources), "build_s": build_s,
    }  # fmt: skip
    for name, lists in (("map", suggested), ("meaning", meaning), ("related", related)):
        for top in (10, 50):
            out[f"{name}@{top}"] = sum(b in lists[a][:top] for a, b in hidden) / max(len(hidden), 1)
    for top in (10, 50):  # a random unlinked note: top / (notes - 1 - its links) per hidden link
        out[f"random@{top}"] = float(np.mean([min(top / max(len(notes) - 1 - degree[a], 1), 1.0) for a, _b in hidden]))
    pairs = {(min(a, b), max(a, b)) for a, b in hidden}
    out["vault_wide_hits"] = sum((min(a, b), max(a, b)) in pairs for a, b in vault_wide)
    out["vault_wide_listed"] = len(vault_wide)
    unlinked_pairs = len(notes) * (len(notes) - 1) / 2 - len(still)
    out["vault_wide_random"] = len(vault_wide) * len(pairs) / max(unlinked_pairs, 1)
    return out


def render_links(r: dict[str, Any]) -> str:
    lines = [
        (f"PowerShell docs: {r['notes']:,} notes, {r['linked_pairs']:,} linked pairs, {r['hidden_pairs']:,} hidden "
         f"({r['hidden_links']:,} links from {r['sources']:,} notes); map built in {r['build_s']:.1f} s"),
        "",
        "| suggestions of each source note | hidden links recovered in the top 10 | in the top 50 |",
        "|---|---:|---:|",
        f"| the map's missing links (`map_note`, `missing_links(note)`) | {r['map@10']:.1%} | {r['map@50']:.1%} |",
        f"| the map's nearest notes by meaning alone, linked ones dropped | {r['meaning@10']:.1%} | {r['meaning@50']:.1%} |",
        f"| baseline: `related` (meaning + the remaining links), linked ones dropped | {r['related@10']:.1%} | {r['related@50']:.1%} |",
        f"| baseline: random unlinked notes (expected) | {r['random@10']:.2%} | {r['random@50']:.2%} |",
        "",
        (f"vault-wide list (`missing_links(limit={r['vault_wide_listed']})`): {r['vault_wide_hits']} hidden pairs "
         f"among {r['vault_wide_listed']} (random pairs: {r['vault_wide_random']:.2f} expected)"),
    ]  # fmt: skip
    return "\n".join(lines)


# -- main -----------------------------------------------------------------------------------
PARTS: dict[str, tuple[Callable[[argparse.Namespace], dict[str, Any]], Callable[[dict[str, Any]], str]]] = {
    "speed": (run_speed, render_speed),
    "methods": (run_methods, render_methods),
    "groups": (run_groups, render_groups),
    "links": (run_links, render_links),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_run"]:
        return _child(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vaultmap", description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", default=list(PARTS), help=f"any of {', '.join(PARTS)} (default: all)")
    parser.add_argument("--files", type=int, default=16_894, help="benchmark vault size (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", default="../shared/data", help="the folder holding tldr/ and powershell-docs/")
    parser.add_argument("--workdir", help="keep vaults and indexes here (reused when present)")
    parser.add_argument("--split", default="test", choices=("tune", "test"), help="groups: which half (default: test)")
    parser.add_argument("--methods", default=",".join(METHODS), help="methods: which (default: all)")
    parser.add_argument("--deep-pages", type=int, default=0, metavar="N",
                        help="groups: also a language vault of N pages each, static against static+deep (the "
                             "deep tier runs on it)")  # fmt: skip
    parser.add_argument("--static-weights", default="", metavar="LIST",
                        help="groups with --deep-pages: also these static weights (the deep one is 1 - w), "
                             "e.g. 0.2,0.4,0.6,0.8")  # fmt: skip
    parser.add_argument("--json", metavar="FILE", help="also write the raw numbers here")
    args = parser.parse_args(argv)
    unknown = [p for p in args.parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown part(s): {', '.join(unknown)}")
    os.environ["VAULTSEEK_DEEP_TIER"] = "false"
    os.environ.setdefault("VAULTSEEK_SHARED_DATA", str(Path(args.data).resolve()))
    temporary = args.workdir is None
    args.workdir = args.workdir or tempfile.mkdtemp(prefix="vaultseek-map-")
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    try:
        for part in args.parts:
            run, render = PARTS[part]
            results[part] = run(args)
            print(f"## {part}\n\n{render(results[part])}\n", flush=True)
    finally:
        if temporary:
            shutil.rmtree(args.workdir, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=float), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
