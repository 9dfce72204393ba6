"""EPUB books and ODT documents: found, cited by chapter and heading, and hostile or damaged
files skipped with their reason."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from tests.support import docgen

from vaultseek import open_index

STORM = (
    "<h1>The Storm</h1><p>Lightning struck the envelope twice over the Bay of Biscay, and "
    "Captain Ramsbottom ordered the crew to vent the forward gas cells&nbsp;at once.</p>"
    "<h2>Landfall</h2><p>They came down in a turnip field near Bordeaux &mdash; the farmer "
    "charged forty francs for the damage to his crop and a bottle of cognac.</p>"
)
MOORING = (
    "<p>A mooring mast holds the airship by its nose, so it can swing with the wind like a "
    "weathervane; the ground crew never needs more than twelve people.</p>"
    "<script>var hidden = 'javascript only';</script>"
)


def rewrite(path: Path, member: str, data: bytes) -> None:
    """Replace one member of a zip archive."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info, data if info.filename == member else source.read(info))
    path.write_bytes(buffer.getvalue())


@pytest.mark.parametrize("version", [3, 2])
def test_epub_chapters_found_and_cited_by_chapter_and_heading(vault: Path, version: int) -> None:
    docgen.epub_file(vault / "airship.epub", "Voyages of the Flamingo",
                     [("Chapter 1: Mooring", MOORING), ("Chapter 2: Weather", STORM)], version=version)  # fmt: skip
    with open_index(vault, create=True) as index:
        assert index.sync().skipped == ()
        hit = index.search("who paid for the damaged turnip field", mode="bm25").results[0]
        assert hit.path == "airship.epub"
        assert hit.section == "Landfall"
        assert hit.heading_context == (
            "Voyages of the Flamingo | epub | Voyages of the Flamingo > Chapter 2: Weather > The Storm > Landfall"
        )
        first = index.search("how many people does a mooring mast need", mode="bm25").results[0]
        assert (first.path, first.section) == ("airship.epub", "Chapter 1: Mooring")
        assert index.search("forward gas cells at once", mode="bm25").results[0].section == "The Storm"
        assert index.search("javascript", mode="bm25").results == ()
        assert index.status().documents == {"epub": 1}


def test_odt_sections_lists_and_tables(vault: Path) -> None:
    docgen.odt_file(vault / "spec.odt", [
        ("h1", "Widget specification"),
        ("p", "This specification covers the widget housing, its seals and how every batch is tested."),
        ("h2", "Materials"),
        ("list", ["Housing of titanium grade 5, anodised", "Seals of FKM rubber rated to 200 degrees"]),
        ("table", [["Part", "Supplier"], ["Housing", "Okapi Metals of Rotterdam"]]),
        ("xml", ("<text:p>Deleted words stay out<text:tracked-changes><text:changed-region><text:deletion>"
                 "<text:p>the narwhal clause</text:p></text:deletion></text:changed-region></text:tracked-changes></text:p>")),
        ("h2", "Testing"),
        ("p", "Every tenth widget is pressure tested at forty bar for ten minutes before it ships to a customer."),
    ])  # fmt: skip
    with open_index(vault, create=True) as index:
        assert index.sync().skipped == ()
        hit = index.search("who supplies the housing", mode="bm25").results[0]
        assert (hit.path, hit.section) == ("spec.odt", "Materials")
        assert hit.heading_context == "spec | odt | spec > Widget specification > Materials"
        assert "- Seals of FKM rubber" in hit.snippet or "Okapi Metals" in hit.snippet
        assert index.search("pressure tested forty bar", mode="bm25").results[0].section == "Testing"
        assert index.search("narwhal", mode="bm25").results == ()
        assert index.status().documents == {"odt": 1}


def test_hostile_and_damaged_books_are_skipped_with_their_reason(vault: Path) -> None:
    chapters = [("One", "<p>" + "The okapi enclosure gate was painted green on Monday. " * 3 + "</p>")]
    # Entities declared in a chapter (a "billion laughs") are refused, never expanded.
    laughs = docgen.epub_file(vault / "laughs.epub", "L", chapters)
    rewrite(laughs, "OEBPS/text/chapter1.xhtml", (
        b'<?xml version="1.0"?><!DOCTYPE html [<!ENTITY a "hahahahaha"><!ENTITY b "&a;&a;&a;&a;&a;'
        b'&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
        b'<html xmlns="http://www.w3.org/1999/xhtml"><body><p>&c;</p></body></html>'
    ))  # fmt: skip
    # An external entity (XXE) would read a file from this machine.
    xxe = docgen.odt_file(vault / "xxe.odt", [("p", "x")])
    rewrite(xxe, "content.xml", (
        b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
        b'<office:document-content ' + docgen.ODT_NAMESPACES.encode() + b'><office:body><office:text>'
        b"<text:p>&secret;</text:p></office:text></office:body></office:document-content>"
    ))  # fmt: skip
    # A zip bomb: one member inflating 1,000:1.
    with zipfile.ZipFile(vault / "bomb.odt", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text", compress_type=zipfile.ZIP_STORED)
        archive.writestr("content.xml", b"<a>" + b" " * (60 * 1024 * 1024) + b"</a>")
    # DRM: chapters encrypted.
    locked = docgen.epub_file(vault / "locked.epub", "D", chapters)
    with zipfile.ZipFile(locked, "a") as archive:
        archive.writestr("META-INF/encryption.xml", (
            '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
            'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
            '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
            '<enc:CipherData><enc:CipherReference URI="OEBPS/text/chapter1.xhtml"/></enc:CipherData>'
            "</enc:EncryptedData></encryption>"
        ))  # fmt: skip
    (vault / "notzip.epub").write_bytes(b"this is not an e-book")
    broken = docgen.odt_file(vault / "broken.odt", [("p", "x")])
    rewrite(broken, "content.xml", b"<office:document-content><unclosed>")
    calc = docgen.odt_file(vault / "sheet.odt", [("p", "x")])
    rewrite(calc, "mimetype", b"application/vnd.oasis.opendocument.spreadsheet")
    locked_odt = docgen.odt_file(vault / "password.odt", [("p", "x")])
    rewrite(locked_odt, "META-INF/manifest.xml", (
        b'<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        b'<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">'
        b'<manifest:encryption-data manifest:checksum-type="SHA1/1K" manifest:checksum="x"/>'
        b"</manifest:file-entry></manifest:manifest>"
    ))  # fmt: skip
    docgen.epub_file(vault / "good.epub", "Good", chapters)
    with open_index(vault, create=True) as index:
        reasons = {s.path: s.reason for s in index.sync().skipped}
        assert reasons == {
            "laughs.epub": "EPUB part OEBPS/text/chapter1.xhtml declares XML entities, which are not read",
            "xxe.odt": "ODT part content.xml declares XML entities, which are not read",
            "bomb.odt": reasons["bomb.odt"],
            "locked.epub": "DRM-protected EPUB (its chapters are encrypted); only DRM-free books can be read",
            "notzip.epub": "corrupt EPUB (not a readable zip archive: File is not a zip file)",
            "broken.odt": reasons["broken.odt"],
            "sheet.odt": "not an OpenDocument text (its type is application/vnd.oasis.opendocument.spreadsheet)",
            "password.odt": "encrypted ODT (saved with a password)",
        }
        assert reasons["bomb.odt"].startswith("zip bomb: ODT part content.xml inflates")
        assert reasons["broken.odt"].startswith("corrupt ODT: content.xml is not well-formed XML")
        assert index.search("okapi enclosure gate", mode="bm25").results[0].path == "good.epub"
        assert index.search("hahahaha", mode="bm25").results == ()
