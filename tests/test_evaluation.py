"""The evaluation harness end to end: a tiny BEIR folder and a golden file, the real engine,
metric values that are known for this set, typed errors for bad input, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from vaultseek import open_index
from vaultseek.errors import ConfigError
from vaultseek.evaluation import (
    configurations,
    evaluate_beir,
    evaluate_golden,
    load_beir,
    note_names,
    render_table,
)

# The id of the finch document has characters no file name should carry as they are.
FINCH = "doc/7.a b"
DOCS = [
    ("d1", "Sourdough starter care", "Feed the sourdough starter with flour and water twice a day so the yeast stays active."),
    ("d2", "Rotating OAuth refresh tokens", "Issue a new refresh token on every use and revoke the old one after a grace window."),
    ("d3", "Glacier hiking safety", "Rope teams, crampons and crevasse rescue practice make glacier travel much safer."),
    ("d4", "Espresso extraction", "Grind size, dose and water temperature decide how an espresso shot extracts."),
    ("d5", "Tax deadlines", "Quarterly estimated tax payments are due in April, June, September and January."),
    ("d6", "Bicycle chain maintenance", "Clean and lubricate the bicycle chain every few hundred kilometres to stop wear."),
    (FINCH, "Zebra finch song learning", "Young zebra finches learn their song from a tutor during a sensitive period."),
    ("d8", "Bread baking temperature", "Bake sourdough bread at a high oven temperature with steam for a crisp crust."),
]
QUERIES = {
    "q1": "zebra finch tutor song",
    "q2": "sourdough",
    "q3": "crevasse crampons",
    "q4": "espresso grind",
    "t1": "refresh token revoke",
}
QRELS = [("q1", FINCH, 2), ("q2", "d1", 2), ("q2", "d8", 1), ("q3", "d3", 1), ("q4", "d4", 0)]


def write_beir(folder: Path, qrels: list[tuple[str, str, int]] = QRELS, header: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"_id": i, "title": t, "text": x}) for i, t, x in DOCS]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    queries = [json.dumps({"_id": q, "text": text}) for q, text in QUERIES.items()]
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    rows = (["query-id\tcorpus-id\tscore"] if header else []) + [f"{q}\t{d}\t{g}" for q, d, g in qrels]
    (folder / "qrels.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "qrels_train.tsv").write_text("query-id\tcorpus-id\tscore\nt1\td2\t1\n", encoding="utf-8")
    return folder


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "tiny")


def by_label(report, label: str):
    return next(r for r in report.results if r.configuration.label == label)


def test_beir_folder_end_to_end(beir: Path, tmp_path: Path) -> None:
    report = evaluate_beir(beir, workdir=tmp_path / "work")
    assert [r.configuration.label for r in report.results] == [
        "bm25", "vector", "hybrid", "hybrid:rrf", "hybrid:convex",
    ]  # fmt: skip
    assert (report.documents, report.queries, report.skipped_queries) == (8, 3, 1)  # q4: grade 0 only
    bm25 = by_label(report, "bm25")
    # q1 and q3: the only relevant document holds every query word, and no other does.
    assert bm25.per_query_ndcg["q1"] == 1.0  # also proves the unsafe id maps back
    assert bm25.per_query_ndcg["q3"] == 1.0
    # q2: both "sourdough" documents are found; the grade-2 one (title and text) ranks first.
    assert bm25.per_query_ndcg["q2"] == 1.0
    assert bm25.scores == {"nDCG@10": 1.0, "Recall@10": 1.0, "Recall@100": 1.0, "MRR@10": 1.0}
    for result in report.results:
        assert result.scores["Recall@100"] == 1.0  # 8 documents, 100 asked for: everything
        assert 0.0 <= result.scores["nDCG@10"] <= 1.0
        assert 0.0 < result.latency_p50_ms <= result.latency_p99_ms
    text = render_table(report)
    assert "nDCG@10" in text and "hybrid:convex" in text and "3 queries (1 left out" in text
    data = report.to_dict()
    assert data["k"] == data["candidates"] == 100
    assert data["results"][0]["ndcg@10"] == 1.0 and data["results"][0]["latency_ms"]["p50"] > 0


def test_split_files_and_progress(beir: Path, tmp_path: Path) -> None:
    events = []
    report = evaluate_beir(
        beir, split="train", workdir=tmp_path / "work", chosen=configurations(["bm25"], []),
        progress=events.append,
    )  # fmt: skip
    assert report.queries == 1 and report.split == "train"
    assert by_label(report, "bm25").per_query_ndcg == {"t1": 1.0}
    assert events[-1].phase == "done"
    assert any(e.phase == "index" and e.path == "searching: bm25" for e in events)
    assert len(load_beir(beir, "test").queries) == 3  # test falls back to qrels.tsv
    with pytest.raises(ConfigError, match="no qrels for the dev split"):
        load_beir(beir, "dev")


def test_scratch_index_is_reused_until_the_corpus_changes(beir: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    only_bm25 = configurations(["bm25"], [])
    evaluate_beir(beir, workdir=work, chosen=only_bm25)
    notes = sorted((work / "tiny" / "vault").iterdir())
    assert len(notes) == 8 and all(n.suffix == ".md" for n in notes)
    stamps = {n.name: n.stat().st_mtime_ns for n in notes}
    evaluate_beir(beir, workdir=work, chosen=only_bm25)
    assert {n.name: n.stat().st_mtime_ns for n in (work / "tiny" / "vault").iterdir()} == stamps
    with (beir / "corpus.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"_id": "d9", "title": "New", "text": "A ninth document about kayaks."}) + "\n")
    report = evaluate_beir(beir, workdir=work, chosen=only_bm25)
    assert report.documents == 9 and len(list((work / "tiny" / "vault").iterdir())) == 9


def test_note_names_are_safe_and_unique() -> None:
    names = note_names(["a/b", "../x", ".hidden", "A", "a", "CON", "é", "x" * 300, "plain-id_1"])
    assert names["a/b"] == "a%2Fb.md" and names["../x"] == "%2E%2E%2Fx.md"
    assert names[".hidden"] == "%2Ehidden.md" and names["é"] == "%C3%A9.md"
    assert names["A"] == "A.md" and names["a"] == "a~2.md"  # case-insensitive file systems
    assert names["CON"] == "~CON.md" and names["plain-id_1"] == "plain-id_1.md"
    assert len(names["x" * 300]) < 130
    assert len({n.casefold() for n in names.values()}) == len(names)
    assert all("/" not in n and not n.startswith(".") for n in names.values())


def test_golden_file_on_an_indexed_vault(sample_vault: Path, tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    lines = [
        {"id": "g1", "query": "_rrf_fuse", "relevant": {"code/fusion.md": 1}},
        {"id": "g2", "query": "sourdough starter", "relevant": {"./cooking/bread.md": 2, "security/oauth.md": 0}},
        {"id": "g3", "query": "nothing judged relevant", "relevant": {"code/fusion.md": 0}},
        {"id": "g4", "query": "Kündigungsfrist", "relevant": {"de/recht.md": 1, "missing/typo.md": 1}},
    ]
    golden.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    with open_index(sample_vault, create=True) as index:
        index.sync()
        report = evaluate_golden(index, golden)
    assert (report.queries, report.skipped_queries, report.documents) == (3, 1, 4)
    bm25 = by_label(report, "bm25")
    assert bm25.per_query_ndcg["g1"] == 1.0
    assert bm25.per_query_ndcg["g2"] == 1.0
    assert bm25.per_query_ndcg["g4"] == pytest.approx(1 / (1 + 1 / 1.5849625007211563))  # 1 of 2
    assert report.notices and "missing/typo.md" in report.notices[0]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda f: write_beir(f, header=False), "has no header line"),
        (lambda f: (f / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1 d1 1\n"), "line 2: expected 3"),
        (lambda f: (f / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\thigh\n"), "not a number"),
        (lambda f: (f / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n{oops\n'), "line 2: not valid JSON"),
        (lambda f: (f / "corpus.jsonl").unlink(), "has no corpus.jsonl"),
        (lambda f: (f / "corpus.jsonl").write_text('{"_id": "a"}\n{"_id": "a"}\n'), "line 2: the document"),
    ],
)
def test_bad_beir_input_is_a_config_error(beir: Path, tmp_path: Path, mutate, message: str) -> None:
    mutate(beir)
    with pytest.raises(ConfigError, match=message):
        evaluate_beir(beir, workdir=tmp_path / "work", chosen=configurations(["bm25"], []))


def test_bad_golden_and_configuration_are_config_errors(sample_vault: Path, tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": 1, "query": "x", "relevant": {"a.md": 1}}\n[1, 2]\n', encoding="utf-8")
    with open_index(sample_vault, create=True) as index:
        with pytest.raises(ConfigError, match="line 2: expected a JSON object"):
            evaluate_golden(index, golden)
        with pytest.raises(ConfigError, match="does not exist"):
            evaluate_golden(index, tmp_path / "absent.jsonl")
    with pytest.raises(ConfigError, match="unknown mode 'fast'"):
        configurations(["fast"])
    with pytest.raises(ConfigError, match="unknown fusion 'max'"):
        configurations(["hybrid"], ["max"])
    with pytest.raises(ConfigError, match="does not exist"):
        evaluate_beir(tmp_path / "nowhere")


def test_cli_eval_table_json_and_errors(beir: Path, tmp_path: Path) -> None:
    work = str(tmp_path / "work")
    table = run_cli("eval", str(beir), "--workdir", work, "--modes", "bm25,hybrid", "--fusion", "convex")
    assert table.returncode == 0, table.stderr
    rows = [line.split()[0] for line in table.stdout.splitlines()[2:] if line.strip()]
    assert rows == ["configuration", "bm25", "hybrid", "hybrid:convex"]
    terms = run_cli("eval", str(beir), "--workdir", work, "--json", "--modes", "hybrid", "--fusion", "", "--term-match")
    assert terms.returncode == 0, terms.stderr
    assert [(r["configuration"], r.get("options")) for r in json.loads(terms.stdout)["results"]] == [
        ("hybrid", None), ("hybrid+terms", {"term_match": 0.3}), ("hybrid-terms", {"term_match": 0.0})]
    lexical = run_cli("eval", str(beir), "--workdir", work, "--modes", "bm25", "--term-match")
    assert lexical.returncode == 2 and "include hybrid" in lexical.stderr
    as_json = run_cli("eval", str(beir), "--workdir", work, "--json", "--modes", "bm25", "--fusion", "")
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert [r["configuration"] for r in data["results"]] == ["bm25"] and data["results"][0]["ndcg@10"] == 1.0
    write_beir(beir, header=False)
    broken = run_cli("eval", str(beir), "--workdir", work)
    assert broken.returncode == 2 and "no header line" in broken.stderr and "Traceback" not in broken.stderr
    neither = run_cli("eval")
    assert neither.returncode == 2 and "give either a BEIR folder or --golden" in neither.stderr


def test_quality_table_keeps_the_hand_written_tail(tmp_path: Path) -> None:
    """``python -m vaultseek.bench.quality`` rewrites the tables but carries over everything
    from its marker on (the write-up of tuning attempts), and nothing when there is none."""
    from vaultseek.bench import quality

    beir = tmp_path / "ir" / "tiny"
    beir.mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in DOCS[:3]), "utf-8"
    )
    (beir / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "sourdough starter"}) + "\n", "utf-8")
    (beir / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", "utf-8")
    out = tmp_path / "quality.md"
    tail = f"{quality.KEPT_MARKER}\n\n## Attempts\n\nweighted RRF: 0.636\n"
    out.write_text("# old tables\n\n| stale |\n\n" + tail, "utf-8")
    args = ["--data", str(tmp_path / "ir"), "--workdir", str(tmp_path / "work"), "--out", str(out)]
    assert quality.main(args) == 0
    text = out.read_text("utf-8")
    assert "| stale |" not in text and "## tiny" in text
    assert text.endswith("\n" + tail) and text.count(quality.KEPT_MARKER) == 1
    assert quality.main(args) == 0  # a second run keeps it again, once
    assert out.read_text("utf-8").count("## Attempts") == 1
    assert quality.kept_tail("# only tables\n") == ""
