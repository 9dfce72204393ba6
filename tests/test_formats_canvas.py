"""Obsidian canvases (JSON Canvas 1.0): cards found and cited, file cards as links, bad files
skipped with their reason."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import docgen

from vaultseek import open_index

PLAN = (
    "# Hangar lease\n"
    "The hangar lease for the airship costs 4,000 euros a month and runs until 2031; "
    "see [[Finance]] for the payment schedule.\n"
    "## Risks\n"
    "Helium prices may double next winter, which would ground the flamingo route."
)


def board(vault: Path) -> Path:
    return docgen.canvas_file(
        vault / "Boards" / "Launch.canvas",
        [
            {"id": "g", "type": "group", "x": -50, "y": -50, "width": 1000, "height": 600, "label": "Launch plan"},
            {"id": "card", "type": "text", "x": 0, "y": 0, "text": PLAN},
            {"id": "short", "type": "text", "x": 2000, "y": 0, "text": "Call Bob"},
            {"id": "file", "type": "file", "x": 300, "y": 300, "file": "Projects/Route.md", "subpath": "#Stops"},
            {"id": "web", "type": "link", "x": 2000, "y": 400, "url": "https://example.org/helium-market"},
        ],
        [{"id": "e", "fromNode": "card", "toNode": "file", "label": "pays for the gondola refit"}],
    )


def test_canvas_cards_are_found_and_cited_by_card_and_heading(vault: Path) -> None:
    board(vault)
    (vault / "Projects").mkdir()
    (vault / "Projects" / "Route.md").write_text("# Route\n\n## Stops\n\nLisbon, then Porto.\n")
    (vault / "Finance.md").write_text("# Finance\n\nPayments are due on the first of each month.\n")
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert report.skipped == ()
        hit = index.search("how much does the hangar lease cost", mode="bm25").results[0]
        assert hit.path == "Boards/Launch.canvas"
        assert hit.section == "card: Hangar lease"
        assert hit.heading_context == "Launch | canvas | Launch > Launch plan > card: Hangar lease"
        risk = index.search("helium prices winter", mode="bm25").results[0]
        assert (risk.path, risk.section) == ("Boards/Launch.canvas", "Risks")
        edge = index.search("gondola refit", mode="bm25").results[0]
        assert edge.path == "Boards/Launch.canvas" and edge.section == "canvas overview"
        assert index.search("Call Bob", mode="bm25").results[0].path == "Boards/Launch.canvas"
        assert index.search("helium-market", mode="bm25").results[0].path == "Boards/Launch.canvas"
        assert index.status().documents == {"canvas": 1}

        # The note on the canvas lists it as a backlink; the card's own link is stored too.
        backlinks = index.links("Projects/Route.md").backlinks
        assert [(link.source, link.heading, link.embed) for link in backlinks] == [
            ("Boards/Launch.canvas", "Stops", True)
        ]
        outgoing = {link.path for link in index.links("Boards/Launch.canvas").outgoing}
        assert outgoing == {"Finance.md", "Projects/Route.md"}
        assert index.search("hangar", filters={"kinds": ["canvas"]}, mode="bm25").results


def test_malformed_canvases_are_skipped_with_their_reason(vault: Path) -> None:
    (vault / "broken.canvas").write_text('{"nodes": [', "utf-8")
    (vault / "list.canvas").write_text("[1, 2, 3]", "utf-8")
    (vault / "nodes.canvas").write_text('{"nodes": {"a": 1}, "edges": []}', "utf-8")
    (vault / "deep.canvas").write_text('{"nodes": ' + "[" * 100_000 + "]" * 100_000 + "}", "utf-8")
    (vault / "odd.canvas").write_text(json.dumps({"nodes": [7, {"type": "text", "text": ["x"]},
                                                            {"type": "text", "x": "a", "text": "Zebra crossing near the hangar gate needs paint"}],
                                                  "edges": [{"fromNode": "missing", "label": 3}]}), "utf-8")  # fmt: skip
    (vault / "note.md").write_text("# Note\n\nThe walrus enclosure needs a new fence.\n")
    with open_index(vault, create=True) as index:
        report = index.sync()
        reasons = {s.path: s.reason for s in report.skipped}
        assert reasons["broken.canvas"].startswith("not a valid canvas: not JSON (line 1")
        assert reasons["list.canvas"] == "not a valid canvas: the file is not a JSON object with nodes and edges"
        assert reasons["nodes.canvas"] == "not a valid canvas: 'nodes' and 'edges' must be lists"
        assert reasons["deep.canvas"] == "too complex to read (RecursionError)"
        assert set(reasons) == {"broken.canvas", "list.canvas", "nodes.canvas", "deep.canvas"}
        # Bad nodes and edges are left out; the rest of that canvas is read.
        assert index.search("zebra crossing", mode="bm25").results[0].path == "odd.canvas"
        assert index.search("walrus fence", mode="bm25").results[0].path == "note.md"


def test_a_huge_canvas_is_read_up_to_its_bounds(vault: Path) -> None:
    nodes = [{"id": f"g{i}", "type": "group", "x": 0, "y": 0, "width": 10, "height": 10, "label": f"frame {i}"}
             for i in range(1_000)]  # fmt: skip
    nodes += [{"id": f"n{i}", "type": "text", "x": 1, "y": 1, "width": 5, "height": 5,
               "text": f"Card number {i} about the okapi enclosure"} for i in range(30_000)]  # fmt: skip
    docgen.canvas_file(vault / "huge.canvas", nodes)
    with open_index(vault, create=True) as index:
        report = index.sync()
        assert report.skipped == ()
        assert any("huge.canvas: only its first 20,000 cards" in n for n in report.notices)
        assert index.search('"card number 18500"', mode="bm25").results[0].path == "huge.canvas"
        assert index.search('"card number 25000"', mode="bm25").results == ()
