"""The knowledge base's list over HTTP on a real index of a few hundred files: paging, search
over path and title, sorting, filters, the folder and category tree; a status per file that
tells the truth (waiting for OCR, failed and why, skipped and why, being indexed); a re-upload
of a name that asks first (409, replace, keep both) and duplicates found by content."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.docgen import docx_file, scanned_pdf
from tests.support.standin_llm import StandinLLM

from study_fixtures import make_app
from vaultseek.reports import NO_TEXT

TOPICS = ("tenancy", "contract", "invoice", "sourdough", "garden", "budget", "protein", "enzyme", "treaty")
FOLDERS = ("Work/2023", "Work/2024", "Study/biology", "Study/history", "Kitchen")
FILES = 240


def _write_vault(root: Path) -> dict[str, str]:
    """FILES small notes in five folders (two nested), plus documents whose status is not
    plain ``indexed``; returns path → the text of each note."""
    rng = random.Random(7)
    vault = root / "vault"
    notes = {}
    for i in range(FILES):
        folder = FOLDERS[i % len(FOLDERS)]
        words = rng.sample(TOPICS, 3)
        path = f"{folder}/{' '.join(words).capitalize()} {i:03d}.md"
        text = f"# {words[0].title()} notes {i}\n\n" + " ".join(rng.choices(TOPICS, k=20 + i % 40)) + "\n"
        target = vault / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        notes[path] = text
    (vault / "Study/biology/Photosynthesis lecture.md").write_text(
        "---\ntitle: Chlorophyll and light\n---\n# Leaves\n\nLeaves turn light into sugar.\n", encoding="utf-8")  # fmt: skip
    scanned_pdf(vault / "Scans/receipt.pdf", [["RECEIPT 0042", "Total 19.99 EUR"]], dpi=100)
    (vault / "Scans/broken.pdf").write_bytes(b"%PDF-1.4 this is not really a PDF at all")
    docx_file(vault / "Scans/slides.docx", [])  # read without error, nothing in it to search
    (vault / "Archive/huge.md").parent.mkdir(parents=True)
    (vault / "Archive/huge.md").write_text("# Huge\n\n" + "big words " * 20_000, encoding="utf-8")
    return notes


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The app over that vault: OCR on, but for a language no engine reads (so the scanned
    page waits), notes capped at 100 KB (so the huge one is skipped)."""
    from starlette.testclient import TestClient

    root = tmp_path_factory.mktemp("library")
    _write_vault(root)
    with StandinLLM() as standin:
        app = make_app(root / "vault", root / "index.db", standin.url, ocr_languages="zzz", max_file_mb=0.1)
        try:
            with TestClient(app, base_url="http://127.0.0.1") as client:
                yield client
        finally:
            app.notebook.close()


def page(client: Any, **params: Any) -> dict[str, Any]:
    response = client.get("/api/documents", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_pages_cover_the_list_once_in_path_order(library: Any) -> None:
    first = page(library)
    total = FILES + 5
    assert (first["total"], first["offset"], first["limit"], len(first["items"])) == (total, 0, 50, 50)
    seen = []
    for offset in range(0, total, 200):
        body = page(library, offset=offset, limit=200)
        assert body["total"] == total
        seen += [item["path"] for item in body["items"]]
    assert len(seen) == total and len(set(seen)) == total
    assert seen == sorted(seen, key=lambda p: (p.casefold(), p))
    assert [item["path"] for item in first["items"]] == seen[:50]
    assert page(library, offset=total)["items"] == []
    item = first["items"][0]
    assert set(item) == {"path", "title", "kind", "size", "chunks", "status", "reason", "category", "indexed_at",
                         "deletable", "duplicate_of"}  # fmt: skip
    # Compact: a full page of 200 stays far under 100 KB, one of 50 is a few KB.
    assert len(json.dumps(page(library, limit=200))) < 100_000
    assert len(json.dumps(first)) < 50 * 400


@pytest.mark.parametrize(
    ("params", "fragment"),
    [({"limit": 0}, "limit"), ({"limit": 201}, "limit"), ({"offset": -1}, "offset"), ({"offset": "x"}, "offset"),
     ({"sort": "colour"}, "sort"), ({"order": "up"}, "order"), ({"status": "happy"}, "status"),
     ({"q": "x" * 201}, "q")],
)  # fmt: skip
def test_bad_parameters_are_refused_with_what_they_take(library: Any, params: dict[str, Any], fragment: str) -> None:
    response = library.get("/api/documents", params=params)
    assert response.status_code == 400
    assert fragment in response.json()["error"]["message"]


def test_search_matches_path_and_title_case_blind(library: Any) -> None:
    by_title = page(library, q="CHLOROPHYLL")
    assert [i["path"] for i in by_title["items"]] == ["Study/biology/Photosynthesis lecture.md"]
    by_path = page(library, q="photosynthesis", limit=200)
    assert by_path["total"] == 1
    both = page(library, q="tenancy 2024", limit=200)
    expected = [p for p in (i["path"] for i in page(library, folder="Work/2024", limit=200)["items"])
                if "tenancy" in p.casefold()]  # fmt: skip
    assert both["total"] == len(expected) > 0
    assert [i["path"] for i in both["items"]] == expected
    assert page(library, q="no such words anywhere")["total"] == 0


@pytest.mark.parametrize("sort", ["size", "chunks", "title", "kind", "indexed_at", "status", "path"])
def test_every_sort_orders_the_whole_list_both_ways(library: Any, sort: str) -> None:
    rows = [i for offset in (0, 200) for i in page(library, sort=sort, offset=offset, limit=200)["items"]]
    down = [i for offset in (0, 200) for i in page(library, sort=sort, order="desc", offset=offset, limit=200)["items"]]
    assert len(rows) == len(down) == FILES + 5

    def value(item: dict[str, Any]) -> Any:
        if sort == "status":
            return ["indexed", "ocr_pending", "indexing", "deleting", "failed", "skipped"].index(item["status"])
        if sort == "title":
            return item["title"].casefold() if item["title"] else None
        if sort == "path":
            return item["path"].casefold()
        return item[sort]

    valued = [value(i) for i in rows if value(i) is not None]
    assert valued == sorted(valued)
    assert [value(i) for i in down if value(i) is not None] == sorted(valued, reverse=True)
    if sort != "path":  # rows without the value come last either way
        assert all(value(i) is None for i in rows[len(valued):])
    if sort == "size":
        assert rows[-1]["size"] >= rows[0]["size"] and down[0]["size"] == max(valued)


def test_filters_by_folder_category_status_and_kind(library: Any) -> None:
    work = page(library, folder="Work", limit=200)
    assert work["total"] == sum(1 for i in range(FILES) if FOLDERS[i % 5].startswith("Work/"))
    assert all(i["path"].startswith("Work/") for i in work["items"])
    assert page(library, folder="Work/2024/")["total"] == FILES // 5
    assert page(library, folder="Wor")["total"] == 0  # a folder, not a prefix of a name
    chosen = [i["path"] for i in page(library, folder="Kitchen", limit=3)["items"]]
    for path in chosen:
        assert library.put(f"/api/documents/{path}/category", json={"category": "cooking"}).status_code == 200
    filed = page(library, category="cooking")
    assert [i["path"] for i in filed["items"]] == chosen and all(i["category"] == "cooking" for i in filed["items"])
    pdfs = page(library, kind="pdf")
    assert sorted(i["path"] for i in pdfs["items"]) == ["Scans/broken.pdf", "Scans/receipt.pdf"]
    assert page(library, kind="pdf,note", limit=1)["total"] == FILES + 4
    assert [i["path"] for i in page(library, status="failed,skipped")["items"]] == ["Archive/huge.md", "Scans/broken.pdf"]
    combined = page(library, folder="Study", q="lecture", status="indexed")
    assert [i["path"] for i in combined["items"]] == ["Study/biology/Photosynthesis lecture.md"]
    for path in chosen:
        library.put(f"/api/documents/{path}/category", json={"category": None})


def test_tree_counts_folders_at_every_depth_and_categories(library: Any) -> None:
    library.put("/api/documents/Scans/receipt.pdf/category", json={"category": "receipts"})
    try:
        response = library.get("/api/documents/tree")
        assert response.status_code == 200
        tree = response.json()
        folders = {f["path"]: f["files"] for f in tree["folders"]}
        per_folder = FILES // 5
        assert folders["Work"] == 2 * per_folder and folders["Work/2023"] == per_folder
        assert folders["Study"] == 2 * per_folder + 1 and folders["Study/biology"] == per_folder + 1
        assert folders["Scans"] == 3 and folders["Archive"] == 1 and folders["Kitchen"] == per_folder
        assert [f["path"] for f in tree["folders"]] == sorted(folders)
        assert {"name": "receipts", "documents": 1} in tree["categories"]
        assert tree["total"] == FILES + 5 == sum(tree["statuses"].values()) == sum(tree["kinds"].values())
        assert tree["statuses"] == {"indexed": FILES + 2, "ocr_pending": 1, "failed": 1, "skipped": 1}
        assert tree["kinds"]["pdf"] == 2
    finally:
        library.put("/api/documents/Scans/receipt.pdf/category", json={"category": None})


def test_status_tells_the_truth(library: Any) -> None:
    rows = {i["path"]: i for i in page(library, folder="Scans")["items"] + page(library, folder="Archive")["items"]}
    waiting = rows["Scans/receipt.pdf"]
    assert waiting["status"] == "ocr_pending"  # searchable in part, but not "indexed" in green
    assert waiting["reason"].startswith("1 page waits for OCR:") and "zzz" in waiting["reason"]
    broken = rows["Scans/broken.pdf"]
    assert broken["status"] == "failed" and "PDF" in broken["reason"] and broken["chunks"] == 0
    huge = rows["Archive/huge.md"]
    assert huge["status"] == "skipped" and huge["reason"].startswith("too large") and "max_file_mb" in huge["reason"]
    blank = rows["Scans/slides.docx"]
    assert blank["status"] == "indexed" and blank["chunks"] == 0 and blank["reason"] == NO_TEXT
    plain = page(library, q="photosynthesis")["items"][0]
    assert plain["status"] == "indexed" and plain["reason"] is None and plain["chunks"] == 1


def test_jobs_in_flight_are_laid_over_the_list() -> None:
    """A file being re-indexed says so; an upload the index does not hold yet is listed (and
    one that failed says why); the kept list itself is not changed."""
    from vaultseek.study.catalogue import DocumentQuery, Listing, ListingRow, build_entries

    rows = [ListingRow(f"n{i}.md", "note", "indexed", 10 + i, 1, f"N{i}", None, "2026-01-01T00:00:00+00:00",
                       0, 0, 0, f"h{i}") for i in range(3)]  # fmt: skip
    rows.append(ListingRow("copy.md", "note", "indexed", 10, 1, "Copy", None, "2026-01-01T00:00:00+00:00", 0, 0, 0, "h1"))
    base = Listing(build_entries(rows, categories={}, deletable=lambda p: False, ocr_blocker=lambda: "no OCR"))
    assert {e.path: e.duplicate_of for e in base.entries}["n1.md"] == "copy.md"  # the first by path keeps it
    jobs = {
        "n1.md": {"path": "n1.md", "status": "indexing", "steps": [{"step": "OCR", "detail": "page 2 of 9"}]},
        "uploads/new.pdf": {"path": "uploads/new.pdf", "status": "queued", "steps": [{"step": "queued", "detail": ""}]},
        "uploads/bad.pdf": {"path": "uploads/bad.pdf", "status": "failed", "error": "corrupt PDF", "steps": []},
        "n2.md": {"path": "n2.md", "status": "indexed", "steps": []},
    }
    shown = base.with_jobs(jobs, {"uploads/new.pdf": "law"}.get, lambda p: p.startswith("uploads/"))
    by_path = {e.path: e for e in shown.entries}
    assert (by_path["n1.md"].status, by_path["n1.md"].reason) == ("indexing", "OCR page 2 of 9")
    assert by_path["uploads/new.pdf"].status == "indexing" and by_path["uploads/new.pdf"].category == "law"
    assert (by_path["uploads/bad.pdf"].status, by_path["uploads/bad.pdf"].reason) == ("failed", "corrupt PDF")
    assert by_path["n2.md"].status == "indexed"
    assert shown.select(DocumentQuery(statuses=("indexing",)))[0] == 2
    assert [e.status for e in base.entries] == ["indexed"] * 4
    assert base.with_jobs({}, {}.get, lambda p: False) is base


@pytest.fixture
def uploads(tmp_path: Path) -> Iterator[tuple[Any, Path]]:
    from starlette.testclient import TestClient

    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes/kept.md").write_text("# Kept\n\nThe vault's own note about herons.\n", encoding="utf-8")
    with StandinLLM() as standin:
        app = make_app(vault, tmp_path / "index.db", standin.url)
        try:
            with TestClient(app, base_url="http://127.0.0.1") as client:
                yield client, vault
        finally:
            app.notebook.close()


def wait_for(client: Any, path: str, predicate: Any = None, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [i for i in page(client, q=path, limit=200)["items"] if i["path"] == path]
        if found and found[0]["status"] in ("indexed", "failed", "skipped") and (predicate is None or predicate(found[0])):
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"{path} did not settle")


def test_reupload_of_a_name_asks_then_replaces_or_keeps_both(uploads: tuple[Any, Path]) -> None:
    client, vault = uploads
    first = client.post("/api/documents", files={"file": ("plan.txt", b"The first plan: plant tomatoes in May.")})
    assert first.status_code == 201 and first.json()["uploaded"] == [{"path": "uploads/plan.txt", "status": "queued"}]
    wait_for(client, "uploads/plan.txt")
    asked = client.post("/api/documents", files={"file": ("plan.txt", b"The second plan: plant beans in June.")})
    assert asked.status_code == 409
    body = asked.json()
    assert body["error"]["code"] == "name_taken" and "on_conflict" in body["error"]["hint"]
    assert body["conflict"] == {"name": "plan.txt", "existing": "uploads/plan.txt"}
    assert (vault / "uploads/plan.txt").read_bytes().startswith(b"The first plan")
    assert sorted(p.name for p in (vault / "uploads").iterdir()) == ["plan.txt"]  # nothing half-stored
    assert client.post("/api/documents?on_conflict=sideways", files={"file": ("plan.txt", b"x y z")}).status_code == 400
    # Several files: the ones before the taken name are stored, indexed and said.
    mixed = client.post("/api/documents", files=[("file", ("beans.txt", b"Beans climb the poles.")),
                                                 ("file", ("plan.txt", b"Another plan."))])  # fmt: skip
    assert mixed.status_code == 409 and mixed.json()["uploaded"] == [{"path": "uploads/beans.txt", "status": "queued"}]
    wait_for(client, "uploads/beans.txt")
    # Keep both: stored beside it.
    both = client.post("/api/documents?on_conflict=keep_both", files={"file": ("plan.txt", b"The third plan: leeks.")})
    assert both.status_code == 201 and both.json()["uploaded"][0]["path"] == "uploads/plan (2).txt"
    # Replace: the new bytes take the name and are indexed in place of the old.
    replaced = client.post("/api/documents", data={"on_conflict": "replace"},
                           files={"file": ("plan.txt", b"The second plan: plant beans in June.")})  # fmt: skip
    assert replaced.status_code == 201 and replaced.json()["uploaded"] == [{"path": "uploads/plan.txt", "status": "queued"}]
    assert (vault / "uploads/plan.txt").read_bytes().startswith(b"The second plan")
    assert sorted(p.name for p in (vault / "uploads").iterdir()) == ["beans.txt", "plan (2).txt", "plan.txt"]
    deadline = time.monotonic() + 60
    while "beans" not in client.get("/api/documents/uploads/plan.txt/chunks").json()["chunks"][0]["text"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    chunks = client.get("/api/documents/uploads/plan.txt/chunks").json()["chunks"]
    assert not any("tomatoes" in c["text"] for c in chunks)  # the old text is gone from the index


def test_duplicates_by_content_are_said_and_not_indexed_twice(uploads: tuple[Any, Path]) -> None:
    client, vault = uploads
    note = (vault / "notes/kept.md").read_bytes()
    again = client.post("/api/documents?on_conflict=keep_both", files={"file": ("herons copy.md", note)})
    assert again.status_code == 409
    body = again.json()
    assert body["error"]["code"] == "duplicate" and body["duplicate_of"] == "notes/kept.md"
    assert body["duplicates"] == [{"name": "herons copy.md", "duplicate_of": "notes/kept.md"}]
    assert not (vault / "uploads/herons copy.md").exists()
    # Two copies in one upload: the first is stored, the second named as its duplicate, even
    # before the index holds the first.
    pair = client.post("/api/documents", files=[("file", ("a.txt", b"Egrets wade in shallow water.")),
                                                ("file", ("b.txt", b"Egrets wade in shallow water."))])  # fmt: skip
    assert pair.status_code == 201
    assert pair.json() == {"uploaded": [{"path": "uploads/a.txt", "status": "queued"}],
                           "duplicates": [{"name": "b.txt", "duplicate_of": "uploads/a.txt"}]}  # fmt: skip
    assert not (vault / "uploads/b.txt").exists()
    wait_for(client, "uploads/a.txt")
    later = client.post("/api/documents", files={"file": ("c.txt", b"Egrets wade in shallow water.")})
    assert later.status_code == 409 and later.json()["duplicate_of"] == "uploads/a.txt"
    # Replacing a file with its own bytes changes nothing and says so.
    same = client.post("/api/documents?on_conflict=replace", files={"file": ("a.txt", b"Egrets wade in shallow water.")})
    assert same.status_code == 409 and same.json()["duplicate_of"] == "uploads/a.txt"
    egrets = [r["path"] for r in client.get("/api/search", params={"q": "egrets wade"}).json()["results"]]
    assert egrets.count("uploads/a.txt") == 1 and not {"uploads/b.txt", "uploads/c.txt"} & set(egrets)
    # Copies already in the vault folder are indexed (they are the user's files) and marked.
    (vault / "notes/later copy.md").write_bytes(note)
    client.app.notebook.kb.ingest.sync("notes/later copy.md").wait(60)
    copy = wait_for(client, "notes/later copy.md")
    assert copy["duplicate_of"] == "notes/kept.md"
    assert page(client, q="notes/kept.md")["items"][0]["duplicate_of"] is None
