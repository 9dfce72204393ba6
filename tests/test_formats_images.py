"""Images in the vault: read by OCR only with ``ocr_images``, found by the words on them;
blank, damaged and oversized images handled without an empty chunk or a traceback."""

from __future__ import annotations

import itertools
import os
import shutil
import struct
import zlib
from pathlib import Path

import pytest
from tests.support import docgen

from vaultseek import open_index

LINES = [
    "Router settings: wireless channel 11",
    "Guest network name FlamingoHangar",
    "Firmware update postponed until Friday",
]
OCR_ON = 'ocr_images = true\nocr_engine = "tesseract"\nocr_languages = "eng"\n'


def needs_tesseract() -> None:
    if shutil.which("tesseract") is None:
        if os.environ.get("CI"):
            pytest.fail("tesseract is missing in CI: .ci/run should have installed it")
        pytest.skip("tesseract is not installed (apt-get install tesseract-ocr)")


def png(width: int, height: int) -> bytes:
    """A valid grey PNG of ``width`` × ``height`` white pixels, compressed as far as zlib goes."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = zlib.compress((b"\x00" + b"\xff" * width) * height, 9)
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def test_images_are_left_out_unless_ocr_images_is_on(vault: Path) -> None:
    docgen.text_image(vault / "Attachments" / "router.png", LINES)
    (vault / "note.md").write_text("# Note\n\n![[router.png]]\n")
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert report.scanned == 1 and report.skipped == ()
        assert index.status().documents == {}


def test_screenshot_text_is_found_and_cited(vault: Path) -> None:
    needs_tesseract()
    docgen.text_image(vault / "Attachments" / "router.png", LINES)
    docgen.text_image(vault / "Attachments" / "SHOT.JPG", ["Boarding gate moved to pier seven"])
    docgen.text_image(vault / "clear.webp", ["Okapi feeding schedule pinned here"], transparent=True)
    (vault / "note.md").write_text("# Network\n\nThe router, as configured: ![[router.png]]\n")
    (vault / ".vaultseek.toml").write_text(OCR_ON)
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert report.skipped == () and report.pages_ocred == 3
        hit = index.search("what is the guest network called", mode="bm25").results[0]
        assert hit.path == "Attachments/router.png"
        assert hit.heading_context == "router | image | router"
        assert "FlamingoHangar" in hit.snippet
        assert index.search("which pier is the boarding gate", mode="bm25").results[0].path == "Attachments/SHOT.JPG"
        assert index.search("okapi feeding", mode="bm25").results[0].path == "clear.webp"
        assert index.status().documents == {"image": 3}
        # The note's embed now resolves to the image, which lists the note as a backlink.
        assert [link.path for link in index.links("note.md").outgoing] == ["Attachments/router.png"]
        assert [link.source for link in index.links("Attachments/router.png").backlinks] == ["note.md"]

        # Touched but unchanged: not OCRed again; changed: OCRed again.
        os.utime(vault / "Attachments" / "router.png", ns=(1, 2_000_000_000_000_000_000))
        again = index.sync()
        assert again.touched == 1 and again.pages_ocred == 0
        docgen.text_image(vault / "Attachments" / "router.png", ["Router moved to the zeppelin shed"])
        changed = index.sync()
        assert changed.updated == 1 and changed.pages_ocred == 1
        assert index.search("FlamingoHangar", mode="bm25").results == ()
        assert index.search("zeppelin shed", mode="bm25").results[0].path == "Attachments/router.png"

    # Switched off again: the images leave the index.
    (vault / ".vaultseek.toml").write_text('ocr_images = false\n')
    with open_index(vault) as index:
        assert index.sync().deleted == 3
        assert index.status().documents == {}


def test_images_without_text_and_bad_images_never_fail_the_run(vault: Path) -> None:
    needs_tesseract()
    from PIL import Image

    Image.new("RGB", (1200, 800), (255, 255, 255)).save(vault / "blank.png")
    Image.effect_noise((400, 300), 40).convert("RGB").save(vault / "photo.jpg")
    Image.new("RGB", (8, 8), (0, 0, 0)).save(vault / "icon.gif")
    (vault / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 50)
    (vault / "fake.jpg").write_text("this is a note, not a JPEG")
    (vault / "bomb.png").write_bytes(png(9_000, 9_000))  # 81 million pixels, 80 KB on disk
    (vault / "note.md").write_text("# Note\n\nThe walrus enclosure needs a new fence.\n")
    (vault / ".vaultseek.toml").write_text(OCR_ON)
    with open_index(vault, create=True) as index:
        report = index.sync()
        reasons = {s.path: s.reason for s in report.skipped}
        assert reasons == {
            "broken.png": "not a readable image (unknown format or damaged header)",
            "fake.jpg": "not a readable image (unknown format or damaged header)",
            "bomb.png": "image too large to read (9,000 × 9,000 pixels, over 50 million)",
        }
        assert index.status().documents == {"image": 3}
        rows = index.conn.execute(
            "SELECT f.path, count(c.id) FROM files f LEFT JOIN chunks c ON c.file_id = f.id "
            "WHERE f.kind = 'image' AND f.status = 'indexed' GROUP BY f.path ORDER BY f.path"
        ).fetchall()
        assert [tuple(row) for row in rows] == [("blank.png", 0), ("icon.gif", 0), ("photo.jpg", 0)]
        assert index.search("walrus fence", mode="bm25").results[0].path == "note.md"
        assert index.sync().unchanged == 4  # nothing read again


def test_images_wait_for_an_ocr_engine_and_are_read_once_one_can(vault: Path) -> None:
    needs_tesseract()
    docgen.text_image(vault / "router.png", LINES)
    (vault / ".vaultseek.toml").write_text('ocr_images = true\nocr_engine = "tesseract"\nocr_languages = "klingon"\n')
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert report.skipped == () and report.pages_ocred == 0
        assert any("klingon" in notice for notice in report.notices)
        assert index.status().ocr_pending == 1
        assert index.sync().documents_extracted == 0  # still no engine: not read again
    (vault / ".vaultseek.toml").write_text(OCR_ON)
    with open_index(vault) as index:
        report = index.sync()  # unchanged, but it was waiting for OCR
        assert report.pages_ocred == 1 and index.status().ocr_pending == 0
        assert index.search("FlamingoHangar", mode="bm25").results[0].path == "router.png"


def tall_screenshot(path: Path, lines: dict[int, str], size: tuple[int, int] = (900, 9_000)) -> Path:
    """A full-page screenshot: ``lines`` of 20-pixel text at their heights, the rest blank."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", size, 248)
    draw = ImageDraw.Draw(image)
    try:
        font: object = ImageFont.truetype("DejaVuSans.ttf", 20)
    except OSError:
        font = ImageFont.load_default(size=20)
    for y, line in lines.items():
        draw.text((24, y), line, fill=15, font=font)
    image.save(path)
    return path


def test_a_tall_image_is_read_in_strips_cut_between_lines_of_text(tmp_path: Path) -> None:
    from PIL import Image

    from vaultseek.documents.picture import STRIP_ASPECT, strip_bounds, strips

    lines = {60 + i * 30: f"Line {i} of the long page" for i in range(290)}  # text all the way down
    with Image.open(tall_screenshot(tmp_path / "page.png", lines)) as page:
        page.load()
        bounds = strip_bounds(page)
        assert len(bounds) > 1 and bounds[0][0] == 0 and bounds[-1][1] == page.height
        assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))  # no row lost
        for top, bottom in bounds:
            assert bottom - top <= page.width * STRIP_ASPECT
            if bottom < page.height:  # every cut is a blank row: no line of text is split
                low, high = page.crop((0, bottom, page.width, bottom + 1)).getextrema()
                assert high - low <= 10, bottom
        assert {s.size for s in strips(page)} == {(900, int(900 * STRIP_ASPECT))}
    blank = Image.new("L", (900, 9_000), 248)
    assert list(strips(blank)) == []
    short = Image.new("L", (1280, 720), 248)
    assert list(strips(short)) == [short]


def test_a_full_page_screenshot_is_read_to_its_end_by_rapidocr(vault: Path) -> None:
    pytest.importorskip("rapidocr", reason="RapidOCR comes with the documents extra")
    tall_screenshot(vault / "page.png", {80: "Harbour crane inspection starts Monday",
                                         4_500: "Zeppelin mooring moved to the north mast",
                                         8_850: "Invoice number walrus seventeen is overdue"})
    (vault / ".vaultseek.toml").write_text('ocr_images = true\nocr_engine = "rapidocr"\nocr_languages = "eng"\n')
    with open_index(vault, create=True) as index:
        assert index.sync().pages_ocred == 1
        for question in ("when does the crane inspection start", "where is the zeppelin moored",
                         "which invoice is overdue"):
            assert index.search(question, mode="bm25").results[0].path == "page.png", question
