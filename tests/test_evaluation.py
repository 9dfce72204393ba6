"""The evaluation harness end to end: a tiny BEIR folder and a golden file, the real engine,
metric values that are known for this set, typed errors for bad input, and the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run_cli
from vaultseek import open_index
from vaultseek.errors import ConfigError
from vaultseek.evaluation.harness import chunk_list, configurations, evaluate_beir, evaluate_golden
from vaultseek.evaluation.judged_sets import load_beir, load_golden
from vaultseek.evaluation.scratch_index import note_names
from vaultseek.evaluation.tables import CHUNK_HEADING, render_table

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
    assert bm25.scores == {
        "nDCG@10": 1.0, "Recall@10": 1.0, "Recall@100": 1.0, "Answer@10": 1.0, "MRR@10": 1.0, "nDCG@5": 1.0, "Hit@1": 1.0,
    }  # fmt: skip
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
        # Only the page judged to also answer holds these words: a hit at 1, not an answer.
        {"id": "g5", "query": "revoke refresh token", "relevant": {"cooking/bread.md": 2, "security/oauth.md": 1}},
    ]
    golden.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    with open_index(sample_vault, create=True) as index:
        index.sync()
        report = evaluate_golden(index, golden)
    assert (report.queries, report.skipped_queries, report.documents) == (4, 1, 4)
    bm25 = by_label(report, "bm25")
    assert bm25.per_query_ndcg["g1"] == 1.0
    assert bm25.per_query_ndcg["g2"] == 1.0
    assert bm25.per_query_ndcg["g4"] == pytest.approx(1 / (1 + 1 / 1.5849625007211563))  # 1 of 2
    assert bm25.scores["Hit@1"] == 1.0 and bm25.scores["Answer@10"] == 0.75
    assert bm25.scores["nDCG@5"] == pytest.approx(bm25.scores["nDCG@10"])  # nothing relevant below 5
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
    lines = table.stdout.splitlines()
    rows = [line.split()[0] for line in lines[2 : lines.index("", 2)]]
    assert rows == ["configuration", "bm25", "hybrid", "hybrid:convex"]
    chunk_rows = lines[lines.index(f"{CHUNK_HEADING}:") + 1 :]
    assert [line.split()[0] for line in chunk_rows] == ["configuration", "bm25", "hybrid", "hybrid:convex"]
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
    """``python -m benchmarks.quality`` rewrites the tables but carries over everything
    from its marker on (the write-up of tuning attempts), and nothing when there is none."""
    from benchmarks import quality

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


# -- golden files with kinds and splits ------------------------------------------------------
KIND_NOTES = {
    "outdoors/glacier.md": "# Glacier hiking\n\nRope teams, crampons and crevasse rescue practice make glacier travel safer.\n",
    "cooking/bread.md": "# Sourdough\n\nFeed the sourdough starter with flour and water twice a day.\n",
    "cooking/espresso.md": "# Espresso\n\nGrind size and dose decide how an espresso shot extracts.\n",
    "bikes/chain.md": "# Bicycle chain\n\nClean and lubricate the bicycle chain every few hundred kilometres.\n",
}
KIND_LINES = [
    {"id": "i1", "kind": "identifier", "split": "tune", "query": "crevasse", "relevant": {"outdoors/glacier.md": 1}},
    {"id": "i2", "kind": "identifier", "split": "tune", "query": "espresso", "relevant": {"cooking/espresso.md": 1}},
    # No word of p1 is in any note, so BM25 finds nothing; p2's words are in the bread note only.
    {"id": "p1", "kind": "paraphrase", "split": "tune", "query": "zqxv wvyk", "relevant": {"cooking/bread.md": 1}},
    {"id": "p2", "kind": "paraphrase", "split": "tune", "query": "sourdough flour", "relevant": {"cooking/bread.md": 1}},
    {"id": "n1", "split": "tune", "query": "lubricate", "relevant": {"bikes/chain.md": 1}},
    {"id": "t1", "kind": "topic", "split": "test", "query": "bicycle", "relevant": {"bikes/chain.md": 1}},
]


def write_golden(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def kind_vault(tmp_path: Path) -> Path:
    """A tiny real vault, indexed by the real engine into its default database."""
    vault = tmp_path / "kinds"
    for rel, text in KIND_NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    with open_index(vault, create=True) as index:
        index.sync(remember=False)
    return vault


def test_golden_split_selects_lines(tmp_path: Path) -> None:
    golden = write_golden(tmp_path / "g.jsonl", KIND_LINES)
    assert [q.id for q in load_golden(golden)[0]] == ["i1", "i2", "p1", "p2", "n1", "t1"]
    tune, skipped = load_golden(golden, "tune")
    assert [q.id for q in tune] == ["i1", "i2", "p1", "p2", "n1"] and skipped == 0
    assert [(q.id, q.kind) for q in load_golden(golden, "test")[0]] == [("t1", "topic")]
    assert tune[4].kind is None


def test_golden_unknown_split_is_a_clear_error(tmp_path: Path) -> None:
    golden = write_golden(tmp_path / "g.jsonl", KIND_LINES)
    with pytest.raises(ConfigError, match="no line in the split 'dev'") as caught:
        load_golden(golden, "dev")
    assert caught.value.hint == "splits there: test, tune"
    plain = write_golden(tmp_path / "plain.jsonl", [{"query": "x", "relevant": {"a.md": 1}}])
    with pytest.raises(ConfigError, match="no line in the split 'tune'") as caught:
        load_golden(plain, "tune")
    assert caught.value.hint is not None and "none" in caught.value.hint
    bad = write_golden(tmp_path / "bad.jsonl", [{"query": "x", "split": 3, "relevant": {"a.md": 1}}])
    with pytest.raises(ConfigError, match='line 1: "split" must be a non-empty string'):
        load_golden(bad)


def test_golden_scores_by_kind(kind_vault: Path, tmp_path: Path) -> None:
    golden = write_golden(tmp_path / "g.jsonl", KIND_LINES)
    with open_index(kind_vault) as index:
        report = evaluate_golden(index, golden, split="tune", chosen=configurations(["bm25", "vector"], []))
    assert (report.split, report.queries) == ("tune", 5)
    bm25 = by_label(report, "bm25")
    assert list(bm25.by_kind) == ["(none)", "identifier", "paraphrase"]  # t1 is in the test split
    assert {k: s.queries for k, s in bm25.by_kind.items()} == {"(none)": 1, "identifier": 2, "paraphrase": 2}
    names = ("nDCG@10", "Recall@10", "Answer@10", "MRR@10", "nDCG@5", "Hit@1")
    assert bm25.by_kind["identifier"].scores == dict.fromkeys(names, 1.0)
    assert bm25.by_kind["paraphrase"].scores == dict.fromkeys(names, 0.5)
    assert bm25.scores["Recall@10"] == pytest.approx(0.8)
    for result in report.results:  # every kind's nDCG@10 is the mean over that kind's queries
        ids = {"identifier": ["i1", "i2"], "paraphrase": ["p1", "p2"], "(none)": ["n1"]}
        for kind, members in ids.items():
            expected = sum(result.per_query_ndcg[q] for q in members) / len(members)
            assert result.by_kind[kind].scores["nDCG@10"] == pytest.approx(expected)
    data = report.to_dict()
    assert data["split"] == "tune"
    assert data["results"][0]["by_kind"]["paraphrase"] == {"queries": 2} | {name.lower(): 0.5 for name in names}
    lines = render_table(report).splitlines()
    assert lines[0].startswith("g.jsonl (tune split): 5 queries")
    at = lines.index(next(line for line in lines if line.startswith("configuration") and "kind" in line))
    assert lines[at].split() == ["configuration", "kind", "queries", *names]
    assert lines[at + 3].split() == ["bm25", "paraphrase", "2", *["0.500"] * 6]
    assert lines[at + 7 : at + 9] == ["", f"{CHUNK_HEADING}:"]  # three kinds for each of the two configurations
    assert [line.split()[0] for line in lines[at + 9 :]] == ["configuration", "bm25", "vector"]
    assert data["results"][0]["chunk_list"]["by_kind"]["paraphrase"]["queries"] == 2


def test_golden_without_kinds_reports_as_before(kind_vault: Path, tmp_path: Path) -> None:
    plain = [{k: v for k, v in line.items() if k not in ("kind", "split")} for line in KIND_LINES]
    golden = write_golden(tmp_path / "plain.jsonl", plain)
    with open_index(kind_vault) as index:
        report = evaluate_golden(index, golden, chosen=configurations(["bm25", "hybrid"], []))
    assert report.split is None and all(r.by_kind == {} for r in report.results)
    result_keys = {
        "configuration", "mode", "fusion", "ndcg@10", "recall@10", "recall@100", "answer@10", "mrr@10", "ndcg@5", "hit@1",
        "latency_ms", "chunk_list",
    }  # fmt: skip
    assert all(set(r) == result_keys for r in report.to_dict()["results"])
    assert all("by_kind" not in r["chunk_list"] for r in report.to_dict()["results"])
    lines = render_table(report).splitlines()
    assert lines[0] == (
        "plain.jsonl: 6 queries, 4 documents; k = candidates = 100; hybrid = "
        f"{report.default_fusion} (the configured default)"
    )
    assert lines[1] == "" and lines[2].split()[0] == "configuration"
    assert [line.split()[0] for line in lines[3:5]] == ["bm25", "hybrid"]  # no kind rows, no notes
    assert lines[5:7] == ["", f"{CHUNK_HEADING}:"] and [line.split()[0] for line in lines[8:]] == ["bm25", "hybrid"]


def test_cli_eval_golden_split_and_kinds(kind_vault: Path, tmp_path: Path) -> None:
    golden = str(write_golden(tmp_path / "g.jsonl", KIND_LINES))
    vault = str(kind_vault)
    as_json = run_cli("eval", "--golden", golden, "--vault", vault, "--split", "tune", "--modes", "bm25", "--json")
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert data["split"] == "tune" and data["queries"] == 5
    assert data["results"][0]["by_kind"]["identifier"]["recall@10"] == 1.0
    table = run_cli("eval", "--golden", golden, "--vault", vault, "--split", "test", "--modes", "bm25")
    assert table.returncode == 0, table.stderr
    assert "(test split): 1 queries" in table.stdout and "topic" in table.stdout
    unknown = run_cli("eval", "--golden", golden, "--vault", vault, "--split", "dev")
    assert unknown.returncode == 2 and "no line in the split 'dev'" in unknown.stderr
    assert "test, tune" in unknown.stderr and "Traceback" not in unknown.stderr
    workdir = run_cli("eval", "--golden", golden, "--vault", vault, "--workdir", str(tmp_path / "w"))
    assert workdir.returncode == 2 and "--workdir goes with a BEIR folder" in workdir.stderr


def test_bench_golden_on_a_tiny_tldr_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m benchmarks.golden`` end to end: a fake data folder laid out like tldr, a
    golden set beside it, a second run reusing the index, the Markdown and JSON outputs."""
    from benchmarks import golden as bench

    pages = tmp_path / "data" / "tldr" / "pages.xx" / "common"
    pages.mkdir(parents=True)
    for rel, text in KIND_NOTES.items():
        (pages / Path(rel).name).write_text(text, encoding="utf-8")
    sets = tmp_path / "sets"
    sets.mkdir()
    lines = [{**line, "relevant": {f"common/{Path(p).name}": g for p, g in line["relevant"].items()}} for line in KIND_LINES]
    write_golden(sets / "tldr-xx.jsonl", lines)
    write_golden(sets / "unrelated.jsonl", [{"id": "u1", "query": "banana bread", "kind": "general"}])  # not a judged set
    work, out, raw = tmp_path / "work", tmp_path / "section.md", tmp_path / "raw.json"
    args = ["--data", str(tmp_path / "data"), "--split", "tune", "--golden-dir", str(sets), "--workdir", str(work)]
    assert bench.main([*args, "--out", str(out), "--json", str(raw)]) == 0
    first = capsys.readouterr()
    rows = [re.split(r"\s{2,}", line.strip()) for line in first.out.splitlines()]
    assert rows[0][:5] == ["set", "mode", "pages", "queries", "Recall@10"]
    assert "R@10 paraphrase" in rows[0] and "R@10 identifier" in rows[0]
    modes = ("bm25", "bm25 · chunks", "vector", "vector · chunks", "hybrid", "hybrid · chunks")
    assert [row[:4] for row in rows[1:]] == [["tldr-xx", m, "4", "5"] for m in modes]
    assert rows[1][4] == "0.800"  # bm25 over the tune split, as in test_golden_scores_by_kind
    assert "Answer@10" in rows[0] and rows[0][-4:] == ["A@10 paraphrase", "nDCG@10", "nDCG@5", "Hit@1"]
    assert rows[1][-4] == "0.500"  # one of the two paraphrase questions finds its page
    assert rows[1][-1] == "0.800"  # and four of the five tune questions find theirs first
    assert (work / "xx.db").is_file() and "indexed in" in first.err
    text = out.read_text("utf-8")
    assert text.startswith("## Judged sets (tune split)\n\n```\npython -m benchmarks.golden --data ")
    assert "| tldr-xx | bm25 | 4 | 5 | 0.800 |" in text and "Hit@1" in text
    assert json.loads(raw.read_text("utf-8"))["tldr-xx"]["results"][0]["by_kind"]["identifier"]["queries"] == 2
    assert bench.main([*args, "--sets", "xx"]) == 0  # a bare language is the tldr set; the index is found
    assert "index reused" in capsys.readouterr().err
    assert bench.main([*args, "--sets", "yy"]) == 2
    assert "no golden set for yy" in capsys.readouterr().err
    assert bench.main([*args, "--golden-dir", str(tmp_path / "absent")]) == 2
    assert "no golden sets folder" in capsys.readouterr().err


def test_bench_golden_psdocs_sets_share_one_english_vault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The psdocs sets of every language are judged against the one English docs folder, kept
    in one index; every set runs by default, tldr first; a missing vault is one line."""
    from benchmarks import golden as bench

    data = tmp_path / "data"
    docs = data / "powershell-docs" / "reference" / "docs-conceptual"
    tldr = data / "tldr" / "pages" / "common"
    for folder in (docs, tldr):
        for rel, text in KIND_NOTES.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text, encoding="utf-8")
    sets = tmp_path / "sets"
    sets.mkdir()
    write_golden(sets / "psdocs-en.jsonl", KIND_LINES)
    write_golden(sets / "psdocs-de.jsonl", [{**line, "query": line["query"].upper()} for line in KIND_LINES])
    write_golden(sets / "tldr-en.jsonl", [{**line, "relevant": {f"common/{p}": g for p, g in line["relevant"].items()}} for line in KIND_LINES])
    work = tmp_path / "work"
    args = ["--data", str(data), "--split", "tune", "--golden-dir", str(sets), "--workdir", str(work), "--modes", "bm25"]
    assert bench.main(args) == 0
    run = capsys.readouterr()
    assert [line.split()[:4] for line in run.out.splitlines()[1:] if "· chunks" not in line] == [
        ["tldr-en", "bm25", "4", "5"], ["psdocs-en", "bm25", "4", "5"], ["psdocs-de", "bm25", "4", "5"],
    ]  # fmt: skip
    assert sorted(p.name for p in work.glob("*.db")) == ["en.db", "psdocs.db"]
    assert "psdocs-en: 4 pages, 5 queries; indexed in" in run.err
    assert "psdocs-de: 4 pages, 5 queries; index reused" in run.err
    assert bench.vault_of(data, "psdocs-ja") == (docs, "psdocs")
    assert bench.vault_of(data, "tldr-en") == (data / "tldr" / "pages", "en")
    assert bench.main([*args, "--data", str(tmp_path / "nowhere"), "--sets", "psdocs-en"]) == 2
    assert "no vault" in capsys.readouterr().err


def test_chunk_lists_count_a_notes_second_section_as_nothing(vault: Path, write, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A note's two sections ahead of the relevant note: in the notes it is second, in the raw
    chunk list third — the chunk-level figures show what the repeat costs."""
    write("pies.md", "# Pies\n\n## Apple pie\n\nApple pie: apple, apple, apple and sugar.\n\n"
                     "## Apple crumble\n\nApple crumble: apple, apple, apple and oats.\n")  # fmt: skip
    write("orchard.md", "# Orchard\n\n## Trees\n\nThe orchard has an apple tree among the pear trees and the plums.\n")
    golden = write_golden(tmp_path / "g.jsonl", [{"id": "q", "query": "apple", "relevant": {"orchard.md": 1}}])
    with open_index(vault, create=True) as index:
        index.sync()
        listed = [r.path for r in index.search("apple", mode="bm25", view="chunks", k=3).results]
        assert listed == ["pies.md", "pies.md", "orchard.md"]  # the premise
        report = evaluate_golden(index, golden, chosen=configurations(["bm25"], []))
    bm25 = by_label(report, "bm25")
    assert bm25.scores["MRR@10"] == pytest.approx(1 / 2) and bm25.chunk_scores["MRR@10"] == pytest.approx(1 / 3)
    assert bm25.chunk_scores["nDCG@10"] < bm25.scores["nDCG@10"]
    assert bm25.chunk_scores["Recall@10"] == bm25.scores["Recall@10"] == 1.0
    assert report.to_dict()["results"][0]["chunk_list"]["mrr@10"] == pytest.approx(1 / 3, abs=1e-6)
    assert chunk_list(["a", "a", "b", "a"])[2] == "b" and len(set(chunk_list(["a", "a", "b", "a"]))) == 4


# -- quality by region of the map -------------------------------------------------------------
def test_region_scores_attribute_each_relevant_document_to_its_notes_region() -> None:
    """Known numbers: q1's two relevant documents lie in a core and a bridge note, only the core
    one is in its first ten; q2's one (a bridge note) is found; q3's is not on the map."""
    from vaultseek.evaluation.regions import MIN_JUDGED, MapRegions, region_scores
    from vaultseek.reports import MapCluster

    def cluster(number: int, size: int, thin: bool) -> MapCluster:
        return MapCluster(number, f"words {number}", (), (), size, 0.0, 0.0, 0.2 if thin else 0.6, thin)

    regions = MapRegions(
        "static", 40, cluster_of={"a": 0, "b": 1, "c": 1, "d": 0}, role_of={"a": "core", "b": "bridge", "c": "bridge", "d": "island"},
        clusters={0: cluster(0, 30, False), 1: cluster(1, 10, True)}, role_sizes={"core": 20, "member": 12, "bridge": 6, "island": 2},
    )  # fmt: skip
    judgments = [{"a": 1, "b": 2, "d": 0}, {"c": 1}, {"zzz": 1}]
    far = [f"x{n}" for n in range(20)]
    rankings = [["a", *far[:9], "b"], ["x", "x2", "c"], ["zzz"]]  # b is 11th: past the tenth
    scores = region_scores(regions, judgments, rankings)
    roles = {s.region: s for s in scores.roles}
    assert [s.region for s in scores.roles] == ["core", "member", "bridge", "island"]
    assert (roles["core"].recall, roles["core"].judged, roles["core"].queries, roles["core"].notes) == (1.0, 1, 1, 20)
    assert (roles["bridge"].recall, roles["bridge"].judged, roles["bridge"].queries) == (0.5, 2, 2)  # q1: 0, q2: 1
    assert roles["bridge"].recall_100 == 1.0  # b is found by the 100th
    assert roles["bridge"].per_query == ((0, 0.0), (1, 1.0))  # what the benchmark's bootstrap resamples
    assert roles["island"].queries == 0 and roles["member"].judged == 0  # d is judged not relevant
    density = {s.region: s for s in scores.density}
    assert (density["dense clusters"].recall, density["dense clusters"].notes) == (1.0, 30)
    assert (density["thin clusters"].recall, density["thin clusters"].notes) == (0.5, 10)
    assert scores.off_map == 1 and scores.clusters == ()  # no cluster holds MIN_JUDGED pairs
    many = region_scores(regions, [{"a": 1}] * MIN_JUDGED, [["a"]] * MIN_JUDGED)
    assert [(s.region, s.label, s.judged, s.recall) for s in many.clusters] == [("cluster 0", "words 0", MIN_JUDGED, 1.0)]
    assert scores.to_dict()["roles"]["bridge"] == {
        "region": "bridge", "notes": 6, "judged": 2, "queries": 2, "recall@10": 0.5, "recall@100": 1.0,
    }  # fmt: skip


TOPICS = {
    "bread": ("sourdough starter", "rye flour", "bread dough", "oven steam", "banneton proofing", "crust"),
    "auth": ("refresh token", "oauth client", "access token", "pkce flow", "token revocation", "login session"),
    "bikes": ("bicycle chain", "derailleur gears", "tyre pressure", "brake pads", "wheel spokes", "saddle height"),
}


def write_region_beir(folder: Path) -> tuple[Path, int]:
    """Three topics of twelve documents, each query judging one document relevant (a third of
    the queries vague: a dozen documents match them as well)."""
    folder.mkdir(parents=True)
    docs, queries, qrels = [], [], ["query-id\tcorpus-id\tscore"]
    for topic, words in TOPICS.items():
        for n in range(12):
            first, second = words[n % len(words)], words[(n * 5 + 1) % len(words)]
            text = f"Notes on {first} and {second}, part {n}: how the {first} relates to the {second} in {topic}."
            docs.append(json.dumps({"_id": f"{topic}{n}", "title": f"{first} {n}", "text": text}))
            if n % 2 == 0:
                vague = f"how it relates in {topic}" if n % 4 == 0 else f"{first} with {second}"
                queries.append(json.dumps({"_id": f"q-{topic}{n}", "text": vague}))
                qrels.append(f"q-{topic}{n}\t{topic}{n}\t1")
    (folder / "corpus.jsonl").write_text("\n".join(docs) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    (folder / "qrels.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    return folder, len(queries)


def test_eval_by_region_reports_recall_per_role_and_cluster_of_the_scratch_indexs_map(tmp_path: Path) -> None:
    folder, queries = write_region_beir(tmp_path / "topics")
    work = str(tmp_path / "work")
    found = run_cli("eval", str(folder), "--workdir", work, "--modes", "bm25,hybrid", "--fusion", "", "--by-region", "--json")
    assert found.returncode == 0, found.stderr
    data = json.loads(found.stdout)
    assert data["map"]["notes"] == 36 and sum(data["map"]["roles"].values()) == 36 and data["map"]["clusters"] >= 2
    for result in data["results"]:
        regions = result["by_region"]
        assert list(regions["roles"]) == ["core", "member", "bridge", "island"] and regions["off_map"] == 0
        for group in ("roles", "density"):  # every relevant pair counts once in each grouping
            assert sum(r["judged"] for r in regions[group].values()) == queries
            # one relevant document a query: region recalls weighted by queries make the whole
            weighted = sum(r["recall@10"] * r["queries"] for r in regions[group].values()) / queries
            assert weighted == pytest.approx(result["recall@10"], abs=1e-5)
        assert {r["notes"] for r in regions["roles"].values()} == {data["map"]["roles"][role] for role in regions["roles"]}
        for cluster in regions["clusters"]:
            assert cluster["judged"] >= 10 and " · " in cluster["label"] and 0 <= cluster["recall@10"] <= 1
    table = run_cli("eval", str(folder), "--workdir", work, "--modes", "hybrid", "--fusion", "", "--by-region")
    assert table.returncode == 0, table.stderr
    assert "Recall@10 by region of the map (static vectors, 36 notes" in table.stdout
    row = next(line for line in table.stdout.splitlines() if line.startswith("hybrid ") and "(" in line)
    assert len(re.findall(r"\d\.\d{3} \(\d+\)|  -", row)) == 6  # four roles, dense and thin clusters
    plain = run_cli("eval", str(folder), "--workdir", work, "--modes", "bm25", "--fusion", "", "--json")
    unmapped = json.loads(plain.stdout)
    assert "map" not in unmapped and "by_region" not in unmapped["results"][0]


def test_eval_by_region_of_too_few_notes_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "two"
    folder.mkdir()
    docs = [json.dumps({"_id": f"d{n}", "title": "t", "text": f"document {n} about kayaks"}) for n in (1, 2)]
    (folder / "corpus.jsonl").write_text("\n".join(docs) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q", "text": "kayaks"}) + "\n", encoding="utf-8")
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq\td1\t1\n", encoding="utf-8")
    found = run_cli("eval", str(folder), "--workdir", str(tmp_path / "work"), "--modes", "bm25", "--by-region")
    assert found.returncode == 1 and found.stderr.startswith("error: a map needs at least 3 notes")
    assert "Traceback" not in found.stderr


def test_the_regions_benchmark_measures_bridge_against_core_with_intervals(tmp_path: Path) -> None:
    import subprocess
    import sys

    from conftest import REPO

    write_region_beir(tmp_path / "data" / "ir" / "topics")
    out = tmp_path / "regions.md"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.regions", "--data", str(tmp_path / "data"), "--beir", "topics", "--golden", "",
         "--workdir", str(tmp_path / "work"), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    table = out.read_text("utf-8").splitlines()
    assert table[0].startswith("| set | notes | clusters | queries | Recall@10 | core |") and "bridge − core" in table[0]
    row = table[2].split(" | ")
    assert row[0] == "| topics" and row[1:4] == ["36", row[2], "18"]
    interval = r"[+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]|–"  # "–": a region holds nothing
    assert all(re.fullmatch(interval, cell.removesuffix(" |")) for cell in row[-3:]), row
    assert all(re.fullmatch(r"[01]\.\d{3} \(\d+\)|–", cell) for cell in row[5:8]), row  # a recall (pairs), or none

    from benchmarks.regions import difference

    from vaultseek.evaluation.regions import RegionScore

    def region(values: list[tuple[int, float]]) -> RegionScore:
        recall = sum(v for _q, v in values) / len(values)
        return RegionScore("r", 1, len(values), len(values), recall, recall, per_query=tuple(values))

    found = region([(q, 1.0) for q in range(40)])
    missed = region([(q, 0.0 if q % 4 else 1.0) for q in range(40, 80)])  # a quarter found
    value, low, high = difference(missed, found, 80)
    assert value == pytest.approx(-0.75) and low < -0.75 < high < 0  # told apart from zero
    same = region([(q, float(q % 2)) for q in range(80)])
    value, low, high = difference(same, same, 80)
    assert value == 0.0 and low == high == 0.0
