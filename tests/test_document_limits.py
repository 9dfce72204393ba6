"""Hostile documents through `vaultseek index`, as a user meets them: Office files that would
inflate past the limits are skipped with the reason while the notes beside them are indexed,
text past the cap is dropped with a notice, and a panic in the tokenizer's thread pool does not
end the run. The files are real archives written with zipfile (benchmarks/hostile.py), scaled
down by setting the limits lower through the environment."""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from benchmarks import hostile
from tests.support import docgen

from conftest import run_cli
from vaultseek import open_index
from vaultseek.documents.chunks import CHUNK_CHARS

NOTE = "# Harbour cranes\n\nThe harbour cranes are inspected every spring by the mooring crew.\n"


def index(vault: Path, db: Path, **env: str) -> dict[str, Any]:
    """`vaultseek index --json`: exit 0 and its report."""
    result = run_cli("index", str(vault), "--db", str(db), "--json", env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def found(vault: Path, db: Path, query: str, *, mode: str = "bm25") -> list[str]:
    result = run_cli("search", query, "--vault", str(vault), "--db", str(db), "--mode", mode, "--json", "--no-daemon")
    assert result.returncode == 0, result.stderr[-2000:]
    return list(dict.fromkeys(hit["path"] for hit in json.loads(result.stdout)["results"]))  # files, in rank order


def skips(report: dict[str, Any]) -> dict[str, str]:
    return {item["path"]: item["reason"] for item in report["skipped"]}


def test_office_zip_bombs_are_skipped_with_the_reason_and_the_notes_beside_them_indexed(vault: Path, tmp_path: Path) -> None:
    (vault / "harbour.md").write_text(NOTE)
    hostile.docx_inflating(vault / "log.docx", inflated_mb=6)  # about 290:1
    hostile.pptx_inflating(vault / "deck.pptx", inflated_mb=6)
    docgen.docx_file(vault / "memo.docx", [("h1", "Memo"), ("p", "The mooring mast bolts were torqued to spec.")])
    report = index(vault, tmp_path / "index.db")
    reasons = skips(report)
    assert set(reasons) == {"log.docx", "deck.pptx"}
    assert reasons["log.docx"].startswith("zip bomb: DOCX part word/document.xml inflates ")
    assert reasons["deck.pptx"].startswith("zip bomb: PPTX part ppt/slides/slide1.xml inflates ")
    assert report["added"] == 2  # the note and the ordinary DOCX
    assert found(vault, tmp_path / "index.db", "cranes") == ["harbour.md"]
    assert found(vault, tmp_path / "index.db", "torqued") == ["memo.docx"]
    status = json.loads(run_cli("status", "--json", "--vault", str(vault), "--db", str(tmp_path / "index.db")).stdout)
    assert {d["path"] for d in status["failed_documents"]} == {"log.docx", "deck.pptx"}


def test_a_docx_past_max_inflated_mb_is_skipped_before_it_is_opened(vault: Path, tmp_path: Path) -> None:
    """3.8 MB of XML (the paragraphs, and python-docx's own styles) counts as 30 MB: the tree
    python-docx would build of it."""
    (vault / "harbour.md").write_text(NOTE)
    hostile.docx_inflating(vault / "log.docx", inflated_mb=3)  # under the 4 MB the ratio is held to
    report = index(vault, tmp_path / "index.db", VAULTSEEK_MAX_INFLATED_MB="5")
    reason = skips(report)["log.docx"]
    assert reason.startswith("DOCX too large to read: 3.8 MB of XML, parsed into a tree about 8 times its size, ")
    assert reason.endswith(" need about 30 MB, over max_inflated_mb (5.0 MB)")
    assert len(report["skipped"]) == 1 and report["added"] == 1
    assert found(vault, tmp_path / "index.db", "cranes") == ["harbour.md"]
    report = index(vault, tmp_path / "index.db")  # at the default it is within the limits
    assert report["skipped"] == [] and report["updated"] == 1  # tried again, and read
    assert found(vault, tmp_path / "index.db", "hangar") == ["log.docx"]


def test_a_workbook_with_oversized_shared_strings_is_skipped_and_an_ordinary_one_read(vault: Path, tmp_path: Path) -> None:
    (vault / "harbour.md").write_text(NOTE)
    hostile.xlsx_shared_strings(vault / "parts.xlsx", inflated_mb=3)  # unique strings: not a bomb
    docgen.xlsx_file(vault / "costs.xlsx", {"Costs": [["item", "cost"], ["turbine bearing", 40]]})
    report = index(vault, tmp_path / "index.db", VAULTSEEK_MAX_INFLATED_MB="8")
    reason = skips(report)["parts.xlsx"]
    assert reason.startswith("XLSX too large to read: 3.") and reason.endswith("over max_inflated_mb (8.0 MB)")
    assert set(skips(report)) == {"parts.xlsx"} and report["added"] == 2
    assert found(vault, tmp_path / "index.db", "turbine") == ["costs.xlsx"]


def test_a_workbook_claiming_the_whole_grid_is_read_in_seconds(vault: Path, tmp_path: Path) -> None:
    """Its dimension says A1:XFD1048576: trusted, every row would be padded to 16,384 cells."""
    hostile.xlsx_claimed_grid(vault / "grid.xlsx")
    report = index(vault, tmp_path / "index.db")
    assert report["skipped"] == [] and report["added"] == 1
    with open_index(vault, db=tmp_path / "index.db") as opened:
        (chunk,) = opened.get_note("grid.xlsx")
    assert chunk.text.splitlines()[1:] == ["part | count", "mooring mast bolt | 42", "1"]
    assert chunk.location is not None and (chunk.location.row_start, chunk.location.row_end) == (2, 1_048_576)


def test_one_enormous_line_of_text_is_capped_with_a_notice(vault: Path, tmp_path: Path) -> None:
    filler = "the mooring crew checked every bolt on the mast and wrote it in the ledger " * 40_000  # 3 MB
    (vault / "export.txt").write_text(f"albatross {filler} cormorant")  # one line, no line break
    (vault / "harbour.md").write_text(NOTE)
    report = index(vault, tmp_path / "index.db", VAULTSEEK_MAX_DOCUMENT_TEXT_MB="0.5")
    assert report["skipped"] == [] and report["added"] == 2
    assert "export.txt: only its first 512 KB of text was indexed (max_document_text_mb); the rest was dropped" in report["notices"]
    with open_index(vault, db=tmp_path / "index.db") as opened:
        chunks = opened.get_note("export.txt")
    assert sum(len(c.text) for c in chunks) <= 512 * 1024 * 1.15  # the cap, plus the chunks' overlap
    assert max(len(c.text) for c in chunks) <= CHUNK_CHARS * 1.1  # the line was cut like running text
    assert found(vault, tmp_path / "index.db", "albatross") == ["export.txt"]
    assert found(vault, tmp_path / "index.db", "cormorant") == []  # past the cap


def _understate(path: Path, member: str, claimed: int) -> None:
    """Rewrite ``member``'s uncompressed size in the archive's local header and central
    directory as ``claimed`` bytes (the archive must not use zip64)."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    central = data.find(b"PK\x01\x02")
    while central != -1:
        length = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46 : central + 46 + length] == name:
            struct.pack_into("<I", data, central + 24, claimed)
            local = struct.unpack_from("<I", data, central + 42)[0]
            struct.pack_into("<I", data, local + 22, claimed)
            path.write_bytes(bytes(data))
            return
        central = data.find(b"PK\x01\x02", central + 4)
    raise AssertionError(f"{member} not in {path}")


def test_a_docx_understating_its_size_is_read_no_further_and_reported_corrupt(vault: Path, tmp_path: Path) -> None:
    """The directory says 2 KB; the part inflates to 5 MB at 290:1. zipfile stops at the
    declared size and fails the CRC check: nothing past 2 KB is ever inflated."""
    bomb = hostile.docx_inflating(tmp_path / "log.docx", inflated_mb=5)
    plain = vault / "log.docx"
    with zipfile.ZipFile(bomb) as source, zipfile.ZipFile(plain, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():  # rewritten without zip64, so the sizes sit in the headers
            target.writestr(info.filename, source.read(info.filename))
    _understate(plain, "word/document.xml", 2048)
    assert zipfile.ZipFile(plain).getinfo("word/document.xml").file_size == 2048
    (vault / "harbour.md").write_text(NOTE)
    report = index(vault, tmp_path / "index.db")
    assert skips(report)["log.docx"].startswith("corrupt DOCX")
    assert report["added"] == 1


def test_a_panic_in_the_tokenizers_thread_pool_does_not_end_the_run(vault: Path, tmp_path: Path) -> None:
    """Near a memory cap the tokenizer's thread pool cannot start its threads, and the Rust
    panic reaches Python as pyo3_runtime.PanicException, a BaseException: reproduced here with
    an address-space cap and pool threads that ask for more stack than fits under it. The run
    goes on encoding one text at a time, so everything is still embedded."""
    (vault / "harbour.md").write_text(NOTE)
    (vault / "bolts.txt").write_text("Mooring mast bolts are torqued to spec each month by the crew.")
    docgen.docx_file(vault / "memo.docx", [("h1", "Memo"), ("p", "The zeppelin envelope fabric was patched.")])
    # Non-ASCII text is tokenized by the tokenizers library (short ASCII text is not).
    (vault / "kran.md").write_text("# Kräne\n\nDie Kranprüfung im Frühling übernimmt die Nachtschicht.")
    cap = 2 * 1024**3

    def limit() -> None:  # in the child, before it starts
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    # Each pool thread asks for a stack twice the cap (RUST_MIN_STACK), so the pool's first
    # thread cannot start and no thread ever runs: the panic comes the same way on every run.
    db = tmp_path / "index.db"
    result = subprocess.run(
        [sys.executable, "-m", "vaultseek.cli.launcher", "index", str(vault), "--db", str(db), "--json"],
        capture_output=True, text=True, timeout=120, check=False, preexec_fn=limit,
        env={**os.environ, "RAYON_NUM_THREADS": "4", "RUST_MIN_STACK": str(2 * cap), "RUST_BACKTRACE": "0"},
    )  # fmt: skip
    assert "The global thread pool has not been initialized" in result.stderr  # the panic happened
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["skipped"] == [] and report["added"] == 4
    assert found(vault, db, "crane inspection in spring", mode="vector")[0] == "harbour.md"
    assert found(vault, db, "bolts torqued", mode="vector")[0] == "bolts.txt"
    assert found(vault, db, "zeppelin envelope", mode="vector")[0] == "memo.docx"
    assert found(vault, db, "Kranprüfung Frühling", mode="vector")[0] == "kran.md"
