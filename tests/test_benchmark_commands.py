"""The benchmark commands the docs cite still run (their figures are not asserted: speed lives
in the benchmarks, not in timed tests). A small vault keeps each to a few seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.vaults import needs_deep_model

from conftest import REPO, SHARED_DATA


def test_the_core_benchmark_runs_every_variant(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--files", "300", "--queries", "5", "--runs", "1", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(out.read_text("utf-8"))
    assert figures["files"] == 300 and figures["chunks"] > 300
    for name in ("hybrid", "bm25", "vector", "interleaved_unfiltered", "signals", "term_match_off", "chunk_view"):
        assert figures[name]["n"] == 5, name
    assert len(figures["filtered"]) >= 5
    assert all(variant["n"] == 5 for variant in figures["filtered"].values())
    assert "warm hybrid query p50" in result.stdout


def test_the_study_benchmark_runs(tmp_path: Path) -> None:
    out = tmp_path / "study.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.study", "--files", "50", "--runs", "2", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(out.read_text("utf-8"))
    for name in ("chat_ttfb_ms", "page_http_ms", "search_server_ms", "engine_search_ms"):
        assert len(figures[name]) == 2, name
    assert "time to first byte of /api/chat" in result.stdout


def test_the_note_view_benchmark_runs(tmp_path: Path) -> None:
    pages = tmp_path / "data" / "powershell-docs" / "reference" / "docs-conceptual"
    pages.mkdir(parents=True)
    topics = ("arrays", "hashtables", "strings", "loops", "functions", "modules", "errors", "jobs")
    for topic in topics:
        sections = "".join(f"## {topic.title()} part {n}\n\nHow {topic} work in part {n}: {topic} and more {topic}.\n\n" for n in range(5))
        (pages / f"{topic}.md").write_text(f"---\ntitle: About {topic}\n---\n# About {topic}\n\n{sections}", "utf-8")
    out = tmp_path / "noteview.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.noteview", "--data", str(tmp_path / "data"), "--queries", "3", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(out.read_text("utf-8"))["results"]
    assert set(figures) == {"page titles", "section headings"}
    assert all(r["queries"] == 3 and r["distinct_in_top10"]["notes"] >= r["distinct_in_top10"]["chunks"] for r in figures.values())
    assert "| page titles | 3 |" in result.stdout


def test_the_embedding_server_benchmark_runs(tmp_path: Path) -> None:
    out = tmp_path / "embedserver.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.embedserver", "--texts", "4", "--queries", "2", "--rounds", "1",
         "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(out.read_text("utf-8"))
    assert figures["texts"] == 4 and figures["max_vector_difference"] < 1e-4
    assert "server / bundled" in result.stdout


def test_the_filter_benchmark_runs_each_filter_kept_and_at_first_use(tmp_path: Path) -> None:
    out = tmp_path / "filters.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--filters-only", "--files", "300", "--queries", "4",
         "--workdir", str(tmp_path / "work"), "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(out.read_text("utf-8"))
    assert len(figures["filtered"]) >= 5
    assert set(figures["first_use"]) == {"unfiltered", *figures["filtered"]}
    assert all(variant["n"] == figures["queries"] > 0 for variant in figures["first_use"].values())
    assert "first use of the filter" in result.stdout


def test_the_map_page_benchmark_runs(tmp_path: Path) -> None:
    pytest.importorskip("playwright")
    out = tmp_path / "mappage.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.mappage", "--points", "400", "--runs", "1", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(out.read_text("utf-8"))
    assert figures["measured"]["points"] == 400 and figures["baseline"]["points"] == 40
    run = figures["measured"]["runs"][0]
    assert run["first_paint_ms"] > 0 and len(run["frame_ms"]) > 10 and run["draw_ms"]
    assert "first paint (navigation → every point drawn)" in result.stdout


def test_a_small_vault_holds_its_questions_best_pages_and_fills_up_with_others() -> None:
    from benchmarks.smallvault import ANSWERS_SHARE, best_pages, draw_vault

    pages = [f"p{i:03}.md" for i in range(200)]
    lines = [{"query": f"q{i}", "relevant": {f"p{i:03}.md": 2, f"p{i + 100:03}.md": 1}} for i in range(40)]
    for seed in range(3):
        vault, asked = draw_vault(pages, lines, 12, seed)
        assert len(vault) == 12 and len(set(vault)) == 12
        answers = {p for line in asked for p in best_pages(line)}
        assert answers <= set(vault) and 1 <= len(answers) <= ANSWERS_SHARE * 12
        assert all(f"p{int(line['query'][1:]) + 100:03}.md" not in answers for line in asked)  # grade 1 pages are not brought
    assert draw_vault(pages, lines, 12, 0) == draw_vault(pages, lines, 12, 0)
    assert draw_vault(pages, lines, 12, 0)[0] != draw_vault(pages, lines, 12, 1)[0]


def _on_german_tldr(module: str, workdir: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m benchmarks.<module>`` on the shared German tldr pages (skipped without them)."""
    if not (SHARED_DATA / "tldr" / "pages.de").is_dir():
        pytest.skip(f"{SHARED_DATA / 'tldr'} is not available")
    return subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", "--data", str(SHARED_DATA), "--workdir", str(workdir),
         "--sets", "tldr-de", *args],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False, env={**os.environ, **(env or {})},
    )  # fmt: skip


@needs_deep_model
def test_the_small_vault_benchmark_runs(tmp_path: Path) -> None:
    kept = tmp_path / "kept.pkl"
    result = _on_german_tldr("smallvault", tmp_path, "--notes", "6", "--vaults", "1", "--examples", str(kept))
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line for line in result.stdout.splitlines() if line.startswith("| tldr-de, 6 notes")]
    assert [row.split(" | ")[1] for row in rows] == ["fast tiers", "deep tier complete"]
    assert len(list((tmp_path / "small" / "tldr-de-6-0" / "vault").rglob("*.md"))) == 6
    again = subprocess.run(
        [sys.executable, "-m", "benchmarks.smallvault", "--workdir", str(tmp_path), "--examples", str(kept)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert again.returncode == 0 and [r for r in again.stdout.splitlines() if r.startswith("| tldr-de")] == rows


def test_a_typo_is_one_slip_in_one_longer_word_and_the_same_each_run() -> None:
    import random

    from benchmarks.typos import neighbours, with_typo

    from vaultseek.search.vocabulary import osa_distance

    question = "How do I run the same command on several remote computers at once with Invoke-Command?"
    seen = set()
    for seed in range(40):
        typed = with_typo(question, random.Random(seed))
        assert typed is not None and typed != question
        changed = [(a, b) for a, b in zip(question.split(), typed.split(), strict=True) if a != b]
        assert len(changed) == 1  # one word, and never an identifier's
        word, slip = changed[0]
        assert len(word) >= 5 and word != "Invoke-Command?" and slip[0] == word[0]
        assert osa_distance(word, slip, 2) == 1
        seen.add(slip)
        assert with_typo(question, random.Random(seed)) == typed
    assert len(seen) > 10  # the draws differ
    assert with_typo("ls -la", random.Random(0)) is None  # no word to put a typo in
    assert neighbours("g") == "fh" and neighbours("q") == "w" and neighbours("ß") == ""


def test_the_typo_benchmark_runs(tmp_path: Path) -> None:
    examples = tmp_path / "examples.jsonl"
    result = _on_german_tldr("typos", tmp_path, "--examples", str(examples), env={"VAULTSEEK_DEEP_TIER": "false"})
    assert result.returncode == 0, result.stderr[-3000:]
    row = next(line for line in result.stdout.splitlines() if line.startswith("tldr-de "))
    lines = [json.loads(line) for line in examples.read_text("utf-8").splitlines()]
    assert int(row.split()[1]) == len(lines) > 10
    assert all(line["query"] != line["typo"] and len(line["ndcg@10"]) == 2 for line in lines)
    same = sum(abs(line["ndcg@10"][0] - line["ndcg@10"][1]) <= 0.005 for line in lines)
    assert "as typed" in result.stdout and float(row.split()[-1]) == round(same / len(lines), 2)
