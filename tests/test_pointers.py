"""Pointer sections (``search/pointers.py``): a section that only points at another note ranks
after that note when the note is a candidate too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from vaultseek import open_index
from vaultseek.search.fusion import Fused
from vaultseek.search.pointers import LinkNames, follow_pointers, pointed

FILLER = "\n\n".join(
    f"## Part {i}\n\nThe shell reads each script block, checks its parameters and writes the output "
    f"objects to the pipeline; part {i} shows the details with examples and their results."
    for i in range(6)
)


@pytest.fixture
def index_vault(vault: Path, write: Callable[..., Path]) -> Path:
    """An index page of topics (linked headings, a line each), a map of content (a list of wiki
    links with a gloss), and the long notes they point at."""
    write(
        "reference/About.md",
        "# About topics\n\n"
        "### [about_Type_Accelerators](about_Type_Accelerators.md)\n\n"
        "Describes the type accelerators available for .NET framework classes.\n\n"
        "### [about_Splatting](about_Splatting.md)\n\n"
        "Describes how to use splatting to pass parameters to commands.\n\n"
        "### [about_Member_Enumeration](about_Member_Enumeration.md)\n\n"
        "Describes member enumeration on collections.\n",
    )
    write(
        "reference/about_Type_Accelerators.md",
        "# about_Type_Accelerators\n\n## Long description\n\nA short name stands for a full .NET "
        "class name: [int] for System.Int32, [xml] for System.Xml.XmlDocument, and so on for many "
        "more classes; these accelerators save typing in scripts, and each type of them resolves "
        "when the script is parsed, before any of its commands run.\n\n" + FILLER,
    )
    write(
        "reference/about_Splatting.md",
        "# about_Splatting\n\nPass a hashtable of parameters with @ instead of $.\n\n" + FILLER,
    )
    write(
        "reference/about_Member_Enumeration.md",
        "# about_Member_Enumeration\n\nA property of a collection reads the property of each item.\n\n"
        + FILLER,
    )
    write(
        "maps/Shell MOC.md",
        "# Shell MOC\n\n## Ideas\n\n"
        "- [[Pipeline binding]] — how pipeline input binds to parameters by value and by name\n"
        "- [[Script blocks]] — anonymous functions\n",
    )
    write(
        "notes/Pipeline binding.md",
        "# Pipeline binding\n\nA command's parameters accept objects from the pipeline. " + FILLER,
    )
    write("notes/Script blocks.md", "# Script blocks\n\nCode in braces, run later.\n\n" + FILLER)
    return vault


@pytest.mark.parametrize(
    ("query", "target"),
    [
        ("type accelerators", "reference/about_Type_Accelerators.md"),
        ("pipeline input binds parameters by value", "notes/Pipeline binding.md"),
    ],
)
def test_a_note_ranks_above_the_index_section_that_points_at_it(index_vault: Path, query: str, target: str) -> None:
    with open_index(index_vault, create=True) as index:
        index.sync()
        for view in ("notes", "chunks"):
            found = index.search(query, k=5, view=view, title_match=False).results
            paths = [r.path for r in found]
            assert paths[0] == target, (view, paths)
            pointer = "reference/About.md" if target.startswith("reference/") else "maps/Shell MOC.md"
            assert pointer in paths  # the pointer follows; it is not dropped
            assert "pointer" in found[0].signals


def test_a_pointer_whose_note_is_not_a_candidate_keeps_its_place(index_vault: Path) -> None:
    with open_index(index_vault, create=True) as index:
        index.sync()
        found = index.search("type accelerators", k=5, title_match=False, filters={"folders": ["reference"]})
        assert found.results[0].path == "reference/about_Type_Accelerators.md"
        # The note pointed at is outside the scope: the index page is the best way to it.
        alone = index.search("type accelerators", k=5, title_match=False, filters={"paths": ["reference/About.md"]})
        assert [r.path for r in alone.results] == ["reference/About.md"]
        assert not alone.results[0].signals


def test_a_vault_without_pointer_sections_ranks_as_before(vault: Path, write: Callable[..., Path]) -> None:
    write("a.md", "# Alpha\n\nType accelerators shorten class names; see [[b]] for more.\n")
    write("b.md", "# Beta\n\nType accelerators: [int], [xml], [regex] and others.\n" + FILLER)
    write("c.md", "# Gamma\n\nNothing about it, only [[a]] and [[b]] are linked here.\n")
    with open_index(vault, create=True) as index:
        index.sync()
        found = index.search("type accelerators", k=5, view="chunks", title_match=False).results
        assert found and all("pointer" not in r.signals for r in found)
        # The step itself hands back the very list it was given, with the rows it read.
        ids = [c.id for path in ("a.md", "b.md", "c.md") for c in index.store.chunks_of_file(path)]
        fused = [Fused(item, 1.0 - n / 100, {}) for n, item in enumerate(reversed(ids))]
        kept, rows = follow_pointers(index.store, fused, {})
        assert kept is fused
        assert set(rows) == set(ids) and {row.path for row in rows.values()} == {"a.md", "b.md", "c.md"}


def test_what_counts_as_a_pointer() -> None:
    names = LinkNames.of({"about splatting": "s.md", "pipeline binding": "p.md", "script blocks": "b.md"})
    # A linked heading over a line of description; over a long body it is a section of its own.
    assert pointed("### about_Splatting\n\nPass parameters with @.", names) == ["s.md"]
    long_body = "### about_Splatting\n\n" + "word " * 60
    assert pointed(long_body, names) == []
    # A list whose lines mostly begin with a link: a map of content, in either marker style.
    moc = "## Ideas\n\n- Pipeline binding — how input binds\n* Script blocks: anonymous functions\nSee also."
    assert pointed(moc, names) == ["p.md", "b.md"]
    # A bare list of links closing a page ("Related links") is no index: the page is an answer.
    assert pointed("## Related links\n\n- Pipeline binding\n- Script blocks", names) == []
    # A heading that names a link over code is a section of its own.
    code = "## about_Splatting\n\nSee about_Splatting.\n\n```powershell\nGet-Item @args\n```"
    assert pointed(code, names) == []
    # Prose that mentions a link is not a pointer.
    prose = "## Ideas\n\nWe saw that Pipeline binding matters.\nIt is subtle.\nIt is everywhere."
    assert pointed(prose, names) == []
