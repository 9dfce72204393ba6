"""Documents beside notes: every reader on real files written with the same libraries, OCR of
an image-only page, failures reported, citations, change detection, status."""

from __future__ import annotations

import json
import os
import shutil
from itertools import pairwise
from pathlib import Path

import pytest
from tests.support import docgen

from conftest import run_cli
from vaultseek import open_index
from vaultseek.documents import ExtractContext, Extracted, document_chunks, extract
from vaultseek.documents.splitting import split_text

SCAN_LINES = [
    "Quarterly maintenance log for the airship hangar",
    "The flamingo turbine was serviced on Tuesday morning.",
    "Inspector Ramsbottom signed the checklist afterwards.",
    "All bearings were greased and the air filters replaced.",
]
COVER = "Cover page. This maintenance binder belongs to the hangar crew. " * 3


def needs_tesseract() -> None:
    if shutil.which("tesseract") is None:
        if os.environ.get("CI"):
            pytest.fail("tesseract is missing in CI: .ci/run should have installed it")
        pytest.skip("tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-deu)")


@pytest.fixture(scope="session")
def scanned_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A text page, then an image-only 300-dpi page that has to be OCRed."""
    return docgen.scanned_pdf(tmp_path_factory.mktemp("pdf") / "scan.pdf", [COVER, SCAN_LINES])


def read(path: Path) -> Extracted:
    return extract(path.name, path.read_bytes(), ExtractContext(path=path.name))


# -- readers --------------------------------------------------------------------------------
def test_text_pdf_gives_one_segment_per_page(tmp_path: Path) -> None:
    pdf = docgen.text_pdf(tmp_path / "r.pdf", ["Hangar beams are inspected yearly. " * 5, "Mooring mast bolts. " * 8])
    result = read(pdf)
    assert result.pages == 2 and result.pages_ocred == 0
    assert [s.location.page for s in result.segments] == [1, 2]
    assert "Mooring mast bolts" in result.segments[1].text


def test_docx_keeps_order_headings_and_table_rows(tmp_path: Path) -> None:
    path = docgen.docx_file(tmp_path / "spec.docx", [
        ("title", "Widget spec"),
        ("p", "This specification covers the widget housing and its materials in detail."),
        ("h1", "Scope"),
        ("p", "The widget must withstand a pressure of 40 bar for ten minutes."),
        ("h2", "Materials"),
        ("table", [["Part", "Material"], ["Housing", "Titanium grade 5"]]),
        ("p", "Seals are made of FKM rubber."),
        ("h1", "Testing"),
        ("p", "Every tenth widget is pressure tested."),
    ])  # fmt: skip
    segments = read(path).segments
    assert [s.heading for s in segments] == [
        ("Widget spec",), ("Widget spec", "Scope"), ("Widget spec", "Scope", "Materials"), ("Widget spec", "Testing"),
    ]  # fmt: skip
    materials = segments[2].text
    assert materials.index("Housing | Titanium grade 5") < materials.index("Seals are made of FKM")
    drafts = document_chunks(segments, title="spec", kind="docx")
    assert all(d.section == d.heading_context.rsplit(" > ", 1)[-1] for d in drafts)


def test_pptx_one_chunk_per_slide_with_notes(tmp_path: Path) -> None:
    path = docgen.pptx_file(tmp_path / "deck.pptx", [
        ("Roadmap", "Ship the gizmo in Q3", "Remember to thank the marmot team"),
        ("Budget", "Costs are up four percent", ""),
    ])  # fmt: skip
    drafts = document_chunks(read(path).segments, title="deck", kind="pptx")
    assert [d.location.slide for d in drafts] == [1, 2]
    assert "Ship the gizmo" in drafts[0].text and "Speaker notes: Remember to thank the marmot team" in drafts[0].text
    assert drafts[1].section == "Budget" and drafts[1].heading_context == "deck | pptx | deck > slide 2 > Budget"


def test_xlsx_header_plus_batches_of_20_rows_per_sheet(tmp_path: Path) -> None:
    rows = [["Item", "Cost"], *([f"item{i}", i] for i in range(45))]
    path = docgen.xlsx_file(tmp_path / "budget.xlsx", {"Q1": rows, "Q2": [["Item", "Cost"], ["glue", 2.5]]})
    drafts = document_chunks(read(path).segments, title="budget", kind="xlsx")
    spans = [(d.location.sheet, d.location.row_start, d.location.row_end) for d in drafts]
    assert spans == [("Q1", 2, 21), ("Q1", 22, 41), ("Q1", 42, 46), ("Q2", 2, 2)]
    assert all(d.text.startswith(f"[Sheet: {d.location.sheet}]\nItem | Cost\n") for d in drafts)
    assert "item20 | 20" in drafts[1].text and "glue | 2.5" in drafts[3].text


@pytest.mark.parametrize(("encoding", "delimiter"), [("cp1252", ";"), ("utf-16", "\t"), ("utf-8", ",")])
def test_csv_dialect_and_encoding_are_sniffed(tmp_path: Path, encoding: str, delimiter: str) -> None:
    rows = [["Name", "Stadt"], *([f"Müller {i}", "Köln"] for i in range(25))]
    path = docgen.csv_file(tmp_path / "people.csv", rows, encoding=encoding, delimiter=delimiter)
    segments = read(path).segments
    assert segments[0].text.startswith("Name | Stadt\nMüller 0 | Köln\n")
    assert [(s.location.row_start, s.location.row_end) for s in segments] == [(2, 21), (22, 26)]


def test_html_main_text_without_boilerplate(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>Widget guide</title></head><body>"
        "<nav><a href='/'>Home</a> <a href='/shop'>Shop now</a> <a href='/about'>About us</a></nav>"
        "<article><h1>Widget guide</h1><p>" + "The flux capacitor needs 1.21 gigawatts to start. " * 8 + "</p>"
        "<p>Calibrate the widget every morning before use.</p></article>"
        "<footer>Copyright 2024 ACME Corporation. All rights reserved.</footer></body></html>"
    )
    result = read(page)
    text = "\n".join(s.text for s in result.segments)
    assert "flux capacitor" in text and "Calibrate the widget" in text
    assert "Shop now" not in text and "All rights reserved" not in text
    assert result.title == "Widget guide"


def test_txt_recursive_splitter_about_1000_with_overlap() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "Words about quokkas and their sanctuary. " * 6 for i in range(40))
    pieces = split_text(text, size=1000, overlap=100)
    assert len(pieces) > 5 and all(len(p) <= 1000 for p in pieces)
    assert all(len(p) >= 100 for p in pieces)
    overlapping = sum(1 for a, b in pairwise(pieces) if b[:40] in a)
    assert overlapping >= len(pieces) // 2  # neighbours share text at the cut
    for paragraph in text.split("\n\n"):
        assert any(paragraph.strip() in p for p in pieces)  # nothing lost


def test_json_and_yaml_flattened_to_key_paths(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"servers": [{"host": "db.internal", "port": 5432}], "debug": True}))
    (tmp_path / "c.yaml").write_text("app:\n  name: gizmo\n  owners: [ana, bo]\n---\nextra: 1\n")
    assert read(tmp_path / "c.json").segments[0].text == "servers[0].host: db.internal\nservers[0].port: 5432\ndebug: true"
    assert read(tmp_path / "c.yaml").segments[0].text == "app.name: gizmo\napp.owners[0]: ana\napp.owners[1]: bo\nextra: 1"


def test_short_pieces_follow_the_minimums(tmp_path: Path) -> None:
    from vaultseek.documents import Segment

    segments = [
        Segment("tiny running text, under a hundred characters"),
        Segment("x" * 150),
        Segment("a | b | c | d e f g", structured=True, whole=True),  # 19 characters
        Segment("a | b | c | d e f g h", structured=True, whole=True),  # 21 characters
    ]
    drafts = document_chunks(segments, title="t", kind="txt")
    assert [len(d.text) for d in drafts] == [150, 21]
    assert document_chunks([Segment("Call Bob re: invoice")], title="t", kind="txt")[0].text == "Call Bob re: invoice"


def test_a_short_section_of_a_word_file_is_found(vault: Path) -> None:
    """A section under a heading of its own is a section, however short: a one-line decision in
    the minutes (under 100 characters) is indexed and found, under its heading, as a note's
    short section is; a heading with nothing under it adds no chunk."""
    docgen.docx_file(vault / "minutes.docx", [
        ("title", "Board minutes, rowing club"),
        ("p", "The board met on 3 May. The treasurer reported that the roof repair costs 12,400 pounds."),
        ("h2", "Regatta"),
        ("p", "The summer regatta moves to the second weekend of July; volunteers sign up with the secretary."),
        ("h2", "Membership"),
        ("p", "Junior membership fees rise by ten percent from September."),
        ("h2", "Any other business"),
    ])  # fmt: skip
    with open_index(vault, create=True) as index:
        index.sync()
        hits = index.search("junior membership fees", mode="bm25", view="chunks").results
        sections = [row.section for row in index.get_note("minutes.docx")]
    assert hits and hits[0].path == "minutes.docx" and hits[0].section == "Membership"
    assert sections == ["Board minutes, rowing club", "Regatta", "Membership"]


# -- the index ------------------------------------------------------------------------------
def test_image_only_page_is_ocred_and_found_by_a_word_on_it(vault: Path, scanned_pdf: Path) -> None:
    needs_tesseract()
    shutil.copy(scanned_pdf, vault / "scan.pdf")
    (vault / "note.md").write_text("# Hangar\n\nA note about the hangar doors and their hinges.")
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert report.pages_extracted == 2 and report.pages_ocred == 1 and report.pages_resumed == 0
        hit = index.search("Ramsbottom", mode="bm25").results[0]
        assert hit.path == "scan.pdf" and hit.location is not None and hit.location.page == 2
        assert hit.heading_context == "scan | pdf | scan > page 2"
        assert index.search("flamingo turbine serviced").results[0].location.page == 2
        status = index.status()
        assert status.documents == {"pdf": 1} and status.files == 2
        assert status.ocr_pages == 1 and status.ocr_pending == 0
        assert index.conn.execute("SELECT count(*) FROM ocr_checkpoints").fetchall()[0][0] == 0

        # Touched but unchanged: never re-extracted, never re-OCRed.
        os.utime(vault / "scan.pdf", ns=(1, 2_000_000_000_000_000_000))
        again = index.sync()
        assert again.touched == 1 and again.documents_extracted == 0 and again.pages_ocred == 0
        assert index.sync().unchanged == 2


def test_missing_language_pack_degrades_then_recovers(vault: Path, scanned_pdf: Path) -> None:
    needs_tesseract()
    shutil.copy(scanned_pdf, vault / "scan.pdf")
    (vault / ".vaultseek.toml").write_text('ocr_languages = "klingon"\n')
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert report.pages_ocred == 0 and any("klingon" in n for n in report.notices)
        assert index.status().ocr_pending == 1
        assert index.search("Ramsbottom", mode="bm25").results == ()
        again = index.sync()  # OCR still cannot run: the waiting PDF is not read again
        assert again.documents_extracted == 0 and again.unchanged == 1
        os.utime(vault / "scan.pdf")  # nor when it is merely touched
        touched = index.sync()
        assert touched.documents_extracted == 0 and touched.touched == 1
        assert index.status().ocr_pending == 1
    (vault / ".vaultseek.toml").write_text('ocr_languages = "eng+klingon"\n')
    with open_index(vault) as index:
        report = index.sync()  # the file did not change, but its page was waiting for OCR
        assert report.pages_ocred == 1 and any("klingon" in n and "eng" in n for n in report.notices)
        assert index.status().ocr_pending == 0
        assert index.search("Ramsbottom", mode="bm25").results[0].location.page == 2


def test_bad_documents_are_reported_and_the_rest_indexed(vault: Path) -> None:
    docgen.encrypted_pdf(vault / "locked.pdf", "Secret merger plans for the zeppelin company.")
    (vault / "broken.docx").write_bytes(b"PK\x03\x04 this is not really a Word file")
    (vault / "broken.pdf").write_bytes(b"%PDF-1.7\n garbage that is no PDF")
    (vault / "legacy.doc").write_bytes(b"\xd0\xcf\x11\xe0 an old binary Word file")
    (vault / "bad.json").write_text('{"unterminated": ')
    (vault / "big.pdf").write_bytes(b"%PDF-1.7\n" + os.urandom(200_000))
    docgen.docx_file(vault / "ok.docx", [("p", "The okapi enclosure needs a new gate before the summer season starts.")])
    (vault / ".vaultseek.toml").write_text(
        'include = ["*.md", "*.pdf", "*.docx", "*.doc", "*.json"]\nmax_document_mb = 0.1\n'
    )
    with open_index(vault, create=True) as index:
        report = index.sync()
        reasons = {s.path: s.reason for s in report.skipped}
        assert reasons["locked.pdf"] == "encrypted PDF (needs a password)"
        assert reasons["broken.docx"].startswith("corrupt DOCX")
        assert reasons["broken.pdf"].startswith("corrupt PDF")
        assert reasons["legacy.doc"] == "unsupported document type .doc; save it as .docx"
        assert reasons["bad.json"].startswith("not valid JSON")
        assert reasons["big.pdf"].startswith("too large") and "max_document_mb" in reasons["big.pdf"]
        assert index.search("okapi enclosure gate").results[0].path == "ok.docx"
        status = index.status()
        assert {s.path for s in status.failed_documents} == set(reasons)
        assert status.documents == {"docx": 1}
    text = run_cli("status", "--vault", str(vault)).stdout
    assert "failed documents:" in text and "locked.pdf: encrypted PDF (needs a password)" in text
    assert "documents:    1 indexed (docx 1), 6 failed" in text
    data = json.loads(run_cli("status", "--json", "--vault", str(vault)).stdout)
    assert data["documents"] == {"docx": 1} and len(data["failed_documents"]) == 6


def test_documents_with_no_text_are_named_until_they_have_some(vault: Path) -> None:
    docgen.docx_file(vault / "blank.docx", [])
    docgen.pptx_file(vault / "deck.pptx", [("", "", "")])
    docgen.docx_file(vault / "ok.docx", [("p", "The okapi enclosure needs a new gate before the summer season starts.")])
    (vault / "empty.md").write_text("")  # an empty note is an ordinary thing: not named
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert not report.skipped
        [notice] = [n for n in report.notices if "no text" in n]
        assert notice.startswith("2 documents have no text to search") and "blank.docx" in notice and "deck.pptx" in notice
        assert index.status().textless_documents == ("blank.docx", "deck.pptx")
    text = run_cli("status", "--vault", str(vault)).stdout
    assert "3 indexed (docx 2, pptx 1), 0 failed, 2 with no text" in text
    assert "documents with no text:\n  blank.docx: no text found in it" in text
    docgen.docx_file(vault / "blank.docx", [("p", "Minutes of the zoo board: the okapi gate is approved.")])
    with open_index(vault) as index:
        assert not [n for n in index.sync().notices if "no text" in n]
        assert index.status().textless_documents == ("deck.pptx",)
        assert json.loads(run_cli("status", "--json", "--vault", str(vault)).stdout)["textless_documents"] == ["deck.pptx"]


def test_huge_csv_in_batches_of_20_rows(vault: Path) -> None:
    rows = [["id", "sku", "warehouse"], *([i, f"SKU-{i:05d}-X", f"hall {i % 7}"] for i in range(50_000))]
    docgen.csv_file(vault / "inventory.csv", rows)
    with open_index(vault, create=True) as index:
        index.sync()
        assert index.status().chunks == 2_500
        hit = index.search("SKU-31337-X", mode="bm25").results[0]
        # Row 1 is the header; item i is on row i + 2; batches of 20 start at rows 2, 22, …
        assert (hit.location.row_start, hit.location.row_end) == (31_322, 31_341)
        assert hit.location.sheet is None and "SKU-31337-X" in hit.text


def test_changed_document_replaces_its_chunks_atomically(vault: Path) -> None:
    docgen.text_pdf(vault / "memo.pdf", ["The walrus budget was approved by the board. " * 4] * 3)
    with open_index(vault, create=True) as index:
        index.sync()
        assert len(index.get_note("memo.pdf")) == 3
        docgen.text_pdf(vault / "memo.pdf", ["The narwhal budget was rejected by the board. " * 4] * 2)
        report = index.sync()
        assert report.updated == 1 and report.documents_extracted == 1
        rows = index.get_note("memo.pdf")
        assert [r.location.page for r in rows] == [1, 2]
        assert all("narwhal" in r.text and "walrus" not in r.text for r in rows)
        assert index.search("walrus", mode="bm25").results == ()
        assert index.search("narwhal", mode="bm25").results[0].path == "memo.pdf"
        assert index.store.integrity_problems() == []


def test_citations_in_search_output(vault: Path, scanned_pdf: Path) -> None:
    needs_tesseract()
    shutil.copy(scanned_pdf, vault / "scan.pdf")
    docgen.pptx_file(vault / "deck.pptx", [("Roadmap", "Ship the gizmo in the third quarter", "Thank the marmot team")])
    assert run_cli("index", str(vault), "--quiet").returncode == 0
    found = run_cli("search", "Ramsbottom", "--json", "--mode", "bm25", "--vault", str(vault))
    assert json.loads(found.stdout)["results"][0]["sections"][0]["location"] == {"page": 2}
    slide = run_cli("search", "marmot team", "--json", "--vault", str(vault))
    assert json.loads(slide.stdout)["results"][0]["sections"][0]["location"] == {"slide": 1}
    human = run_cli("search", "Ramsbottom", "--mode", "bm25", "--vault", str(vault)).stdout.splitlines()
    assert human[0].startswith(" 1. scan.pdf") and human[1].startswith("    › p. 2  bm25 #1")
    sections = run_cli("search", "Ramsbottom", "--mode", "bm25", "--view", "chunks", "--vault", str(vault))
    assert sections.stdout.splitlines()[0].startswith(" 1. scan.pdf · p. 2")
    status = run_cli("status", "--vault", str(vault)).stdout
    assert "OCR:          1 pages OCRed" in status and "pdf 1, pptx 1" in status


def test_credentials_in_documents_are_scrubbed(vault: Path) -> None:
    key = "AKIA" + "Z7Q3XK2M9PLW4RTB"
    (vault / "creds.txt").write_text(f"Deploy notes for the staging cluster.\naws_access_key_id = {key}\n" * 5)
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert report.redactions
        assert key not in "".join(r.text for r in index.get_note("creds.txt"))


def test_markdown_only_vault_never_imports_document_libraries(sample_vault: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    heavy = ("pypdfium2", "pytesseract", "docx", "pptx", "openpyxl", "trafilatura", "charset_normalizer", "PIL", "lxml")
    code = (
        "import sys; from vaultseek import open_index\n"
        f"with open_index({str(sample_vault)!r}, db={str(tmp_path / 'x.db')!r}, create=True) as i:\n"
        "    r = i.sync(remember=False)\n"
        "    assert r.added == 4, r\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
