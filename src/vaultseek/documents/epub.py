"""EPUB e-books: the chapters' text in reading order, cut at their headings.

An EPUB is a zip archive (checked as :func:`.package.open_package` says) of XHTML chapters. Its
``META-INF/container.xml`` names the package file, whose *spine* lists the chapters in reading
order and whose table of contents (an EPUB 3 ``nav`` page or an EPUB 2 ``.ncx``) names them.
Each chapter's ``<body>`` is streamed (no tree is built): ``h1``–``h6`` start sections, block
elements (paragraphs, list items, table cells, …) become lines, scripts and styles are dropped.
A section's heading path starts with the chapter's name in the table of contents, so a chunk
cites ``Chapter 3: The Storm > Landfall`` the way a note's cites its headings. The book's
``dc:title`` is the document's title.

A book whose chapters are encrypted (DRM) is refused with that reason; reading stops at the
text cap.
"""

from __future__ import annotations

import posixpath
import zipfile
from urllib.parse import unquote

from .extraction import DocumentError, ExtractContext, Extracted, Segment
from .limits import TextBudget
from .package import local, open_package, parse_small, read_small, stream_xml

LABEL = "EPUB"
_CHAPTER_TYPES = {"application/xhtml+xml", "text/html", "application/xml", "text/xml"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = {
    "p", "div", "li", "dt", "dd", "blockquote", "pre", "tr", "table", "section", "article",
    "aside", "figcaption", "header", "footer", "ul", "ol", "dl", "br", "hr",
}  # fmt: skip
_CELLS = {"td", "th"}
_HIDDEN = {"script", "style", "head", "title"}
_FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")


def read(data: bytes, context: ExtractContext) -> Extracted:
    with open_package(data, LABEL) as archive:
        package_path = _package_path(archive)
        book = _Package(posixpath.dirname(package_path))
        parse_small(read_small(archive, package_path, LABEL), book, LABEL, package_path)
        if not book.spine:
            raise DocumentError("corrupt EPUB (its package lists no chapters)")
        _refuse_drm(archive, book)
        names = _contents(archive, book)
        budget = TextBudget(context.limits.max_text_chars)
        segments: list[Segment] = []
        for chapter in book.spine:
            if budget.spent:
                break
            if chapter not in archive.NameToInfo:
                continue  # a spine entry without its file: the rest of the book is still read
            reader = _Chapter(names.get(chapter), budget)
            stream_xml(archive, chapter, reader, LABEL)
            reader.flush()
            segments.extend(reader.segments)
    return Extracted(segments=segments, title=book.title or None, truncated=budget.truncated)


def _package_path(archive: zipfile.ZipFile) -> str:
    container = _Container()
    parse_small(read_small(archive, "META-INF/container.xml", LABEL), container, LABEL, "META-INF/container.xml")
    if container.path is None:
        raise DocumentError("corrupt EPUB (META-INF/container.xml names no package file)")
    return container.path


def _href(base: str, href: str) -> str:
    """A manifest or table-of-contents reference as a member name (no ``#fragment``)."""
    return posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0]))).lstrip("/")


def _refuse_drm(archive: zipfile.ZipFile, book: _Package) -> None:
    if "META-INF/encryption.xml" not in archive.NameToInfo:
        return
    found = _Encryption()
    parse_small(read_small(archive, "META-INF/encryption.xml", LABEL), found, LABEL, "META-INF/encryption.xml")
    if found.encrypted & set(book.spine):
        raise DocumentError("DRM-protected EPUB (its chapters are encrypted); only DRM-free books can be read")


def _contents(archive: zipfile.ZipFile, book: _Package) -> dict[str, str]:
    """Chapter member → its name in the table of contents (the first entry pointing at it)."""
    path = book.nav or book.ncx
    if path is None or path not in archive.NameToInfo:
        return {}
    contents = _Contents(posixpath.dirname(path))
    try:
        parse_small(read_small(archive, path, LABEL), contents, LABEL, path)
    except DocumentError:
        return {}  # a damaged table of contents costs the chapter names, not the book
    return contents.names


class _Handler:
    done = False

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        pass

    def end(self, tag: str) -> None:
        pass

    def text(self, data: str) -> None:
        pass


class _Container(_Handler):
    def __init__(self) -> None:
        self.path: str | None = None

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        if local(tag) == "rootfile" and self.path is None:
            kind = attributes.get("media-type", "application/oebps-package+xml")
            if kind == "application/oebps-package+xml" and attributes.get("full-path"):
                self.path = _href("", attributes["full-path"])


class _Package(_Handler):
    """The package file: the manifest, the spine, the table of contents and the title."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.items: dict[str, tuple[str, str, str]] = {}  # id → (member, media type, properties)
        self.spine_ids: list[str] = []
        self.toc_id: str | None = None
        self.title = ""
        self._in_title = False

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        name = local(tag)
        if name == "item" and attributes.get("id") and attributes.get("href"):
            member = _href(self.base, attributes["href"])
            self.items[attributes["id"]] = (member, attributes.get("media-type", ""), attributes.get("properties", ""))
        elif name == "spine":
            self.toc_id = attributes.get("toc")
        elif name == "itemref" and attributes.get("idref"):
            self.spine_ids.append(attributes["idref"])
        elif name == "title" and tag.startswith("http://purl.org/dc/elements/1.1/") and not self.title:
            self._in_title = True

    def end(self, tag: str) -> None:
        self._in_title = False

    def text(self, data: str) -> None:
        if self._in_title:
            self.title = " ".join((self.title + data).split())[:200]

    @property
    def spine(self) -> list[str]:
        chapters = []
        for item_id in self.spine_ids:
            member, kind, _properties = self.items.get(item_id, ("", "", ""))
            if member and (kind in _CHAPTER_TYPES or not kind) and member not in chapters:
                chapters.append(member)
        return chapters

    @property
    def nav(self) -> str | None:
        return next((m for m, _k, props in self.items.values() if "nav" in props.split()), None)

    @property
    def ncx(self) -> str | None:
        if self.toc_id and self.toc_id in self.items:
            return self.items[self.toc_id][0]
        return next((m for m, kind, _p in self.items.values() if kind == "application/x-dtbncx+xml"), None)


class _Encryption(_Handler):
    def __init__(self) -> None:
        self.encrypted: set[str] = set()
        self._method = ""

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        name = local(tag)
        if name == "EncryptionMethod":
            self._method = attributes.get("Algorithm", "")
        elif name == "CipherReference" and attributes.get("URI") and self._method not in _FONT_OBFUSCATION:
            self.encrypted.add(_href("", attributes["URI"]))  # obfuscated fonts are no DRM


class _Contents(_Handler):
    """Chapter names from an EPUB 3 ``nav`` page (``<a href>``) or an EPUB 2 NCX
    (``navLabel`` text, then ``content src``)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.names: dict[str, str] = {}
        self._label: list[str] | None = None
        self._href: str | None = None

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        name = local(tag)
        if name == "a" and attributes.get("href"):
            self._label, self._href = [], attributes["href"]
        elif name == "navLabel":
            self._label, self._href = [], None
        elif name == "content" and attributes.get("src") and self._label is not None:
            self._name(attributes["src"])

    def end(self, tag: str) -> None:
        if local(tag) == "a" and self._href is not None:
            self._name(self._href)

    def text(self, data: str) -> None:
        if self._label is not None:
            self._label.append(data)

    def _name(self, href: str) -> None:
        label = " ".join("".join(self._label or ()).split())[:200]
        member = _href(self.base, href)
        if label and member not in self.names:
            self.names[member] = label
        self._label, self._href = None, None


class _Chapter(_Handler):
    """One chapter's body as sections: (heading path, lines)."""

    def __init__(self, name: str | None, budget: TextBudget) -> None:
        self.name, self.budget = name, budget
        self.segments: list[Segment] = []
        self.trail: list[tuple[int, str]] = []  # (level, heading) above the current section
        self.lines: list[str] = []
        self.line: list[str] = []
        self.heading: list[str] | None = None
        self.level = 0
        self.hidden = 0
        self.in_body = False

    @property
    def done(self) -> bool:  # type: ignore[override]
        return self.budget.spent

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        name = local(tag).lower()
        if name == "body":
            self.in_body = True
        elif name in _HIDDEN:
            self.hidden += 1
        elif name in _HEADINGS:
            self._end_line()
            self.heading, self.level = [], _HEADINGS[name]
        elif name in _BLOCKS:
            self._end_line()
        elif name in _CELLS and self.line:
            self.line.append(" | ")
        elif name == "img" and attributes.get("alt", "").strip():
            self.line.append(f" {attributes['alt'].strip()} ")

    def end(self, tag: str) -> None:
        name = local(tag).lower()
        if name in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif name in _HEADINGS and self.heading is not None:
            text = " ".join("".join(self.heading).split())
            self.heading = None
            if text:
                self.flush()
                while self.trail and self.trail[-1][0] >= self.level:
                    self.trail.pop()
                self.trail.append((self.level, text[:200]))
                self.lines.append(self.budget.take(text))
        elif name in _BLOCKS:
            self._end_line()

    def text(self, data: str) -> None:
        if not self.in_body or self.hidden:
            return
        (self.heading if self.heading is not None else self.line).append(data)

    def _end_line(self) -> None:
        text = " ".join("".join(self.line).split())
        self.line.clear()
        if text:
            self.lines.append(self.budget.take(text))

    def flush(self) -> None:
        """End the current section."""
        self._end_line()
        if any(self.lines):
            path = [heading for _level, heading in self.trail]
            if self.name and (not path or path[0] != self.name):
                path.insert(0, self.name)
            self.segments.append(Segment("\n\n".join(line for line in self.lines if line), heading=tuple(path)))
        self.lines.clear()
