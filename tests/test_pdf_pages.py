"""A PDF's chunks cite the page their text is on: a document of short pages is not one chunk
cited as "p. 1", and a short page next to long ones joins the chunk before it, which cites
both pages — through search, the CLI and the chunk's stored location."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.hostile_pdf import short_pages_pdf

from conftest import run_cli
from vaultseek import open_index

SHORT = [
    "Minutes of the harbour board, spring meeting.",
    "Present: the harbour master and two pilots.",
    "Apologies from the customs office.",
    "Decided: the mooring fee rises to 42 crowns.",
    "Next meeting in June.",
]
LONG = " ".join(f"Line {n}: the cranes on the north quay were inspected and oiled." for n in range(12))


def test_a_fact_on_page_4_of_five_short_pages_is_cited_as_page_4(vault: Path) -> None:
    short_pages_pdf(vault / "minutes.pdf", SHORT)
    with open_index(vault, create=True) as index:
        index.sync()
        hit = index.search("mooring fee", mode="bm25").results[0]
        assert hit.path == "minutes.pdf" and hit.location is not None
        assert hit.location.page == 4 and hit.location.label() == "p. 4"
        assert [r.location.page for r in index.get_note("minutes.pdf") if r.location] == [1, 2, 3, 4, 5]
    shown = json.loads(run_cli("search", "mooring fee", "--mode", "bm25", "--json", "--vault", str(vault)).stdout)
    section = shown["results"][0]["sections"][0]
    assert (section["label"], section["location"]) == ("p. 4", {"page": 4})


def test_a_short_page_after_a_long_one_is_found_and_cited_with_both_pages(vault: Path) -> None:
    short_pages_pdf(vault / "quay.pdf", [LONG, "Decided: the mooring fee rises to 42 crowns.", LONG])
    with open_index(vault, create=True) as index:
        index.sync()
        hit = index.search("mooring fee", mode="bm25").results[0]
        assert hit.path == "quay.pdf" and hit.location is not None
        assert (hit.location.page, hit.location.page_end, hit.location.label()) == (1, 2, "pp. 1–2")
    shown = run_cli("search", "mooring fee", "--mode", "bm25", "--vault", str(vault))
    assert "pp. 1–2" in shown.stdout, shown.stdout


def test_a_short_first_page_opens_the_chunk_after_it_and_is_cited_with_it(vault: Path) -> None:
    short_pages_pdf(vault / "report.pdf", ["Harbour board report, draft for the walrus committee.", LONG, LONG])
    with open_index(vault, create=True) as index:
        index.sync()
        hit = index.search("walrus committee", mode="bm25").results[0]
        assert hit.path == "report.pdf" and hit.location is not None
        assert (hit.location.page, hit.location.page_end, hit.location.label()) == (1, 2, "pp. 1–2")
        assert [r.location.label() for r in index.get_note("report.pdf") if r.location] == ["pp. 1–2", "p. 3"]
