"""Links: parsing markdown links, resolving every link form to a file as Obsidian does, keeping
resolutions current through renames and deletions, backlinks, and the link-graph signals.

The resolver is tested on its own (a pure function of paths and aliases), then through the
real index: files on disk, ``Index.sync``, the stored resolutions."""

from __future__ import annotations

import json
import textwrap
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vaultseek import Index, QueryError, open_index
from vaultseek.links.linking import Resolver, link_key
from vaultseek.notes.markdown import parse_note
from vaultseek.records import Link


@contextmanager
def synced(vault: Path, write: Callable[..., Path], notes: dict[str, str]) -> Iterator[Index]:
    """``notes`` (vault-relative path → text) written into the vault, indexed."""
    for rel, text in notes.items():
        write(rel, text)
    with open_index(vault, create=True) as index:
        index.sync()
        yield index


def links_of(text: str) -> tuple[Link, ...]:
    return parse_note(text, path="n.md").links


# --------------------------------------------------------------------------- markdown links


def test_markdown_links_to_local_files_are_links_web_and_mail_links_are_not() -> None:
    found = links_of(
        "[a](other%20note.md) [b](../folder/x.md#Some%20Heading \"title\") [c](https://x.org/a.md) "
        "[d](mailto:me@x.org) [e](obsidian://open?vault=v) [f](//cdn.x/a.md) ![g](img/a%20b.png) "
        "[h](#local) [i](<with space.md>) [j](p.md?raw=1#h) [](bare.md) [k]() [[wiki]]"
    )
    assert found == (
        Link("other note.md", None, "a", False, "markdown"),
        Link("../folder/x.md", "Some Heading", "b", False, "markdown"),
        Link("img/a b.png", None, "g", True, "markdown"),
        Link("", "local", "h", False, "markdown"),
        Link("with space.md", None, "i", False, "markdown"),
        Link("p.md", "h", "j", False, "markdown"),
        Link("bare.md", None, None, False, "markdown"),
        Link("wiki"),
    )


def test_links_keep_document_order_across_both_syntaxes() -> None:
    assert [link.target for link in links_of("[[one]] [two](two.md) [[three]] [four](four.md)")] == [
        "one", "two.md", "three", "four.md",
    ]  # fmt: skip


def test_wiki_links_in_frontmatter_values_are_links() -> None:
    found = links_of('---\nup: "[[Projects MOC]]"\nrelated:\n  - "[[A#Goals|a]]"\n  - plain\n---\n[[A#Goals|a]] [[B]]\n')
    assert found == (Link("Projects MOC"), Link("A", "Goals", "a"), Link("B"))


def test_markdown_links_in_code_and_comments_are_not_links() -> None:
    found = links_of(
        "`[a](in-code.md)`\n```md\n[b](fenced.md)\n```\n%% [c](commented.md) %%\n[d](real.md)\n"
    )
    assert [link.target for link in found] == ["real.md"]


REFERENCE_NOTE = """\
# Plans

Full [the plan][Plan One], collapsed [Plan one][], shortcut [plan  ONE], a heading
[risks][r], an image ![diagram][img], spaced [spaced][s], and a title in parentheses [p][].
Not note links: [the web][web], [mail][m]. Not links at all: [nothing][nope], [x], [ ].

[plan one]: other%20note.md "The plan"
[R]: ../folder/x.md#Some%20Heading
[img]: <img/a b.png>
[s]:
  <with space.md> 'title'
[p]: sub/p.md (title)
[web]: https://x.org/a.md
[m]: mailto:me@x.org
[plan one]: second/definition.md
"""


def test_reference_links_in_every_form_are_links() -> None:
    assert links_of(REFERENCE_NOTE) == (
        Link("other note.md", None, "the plan", False, "markdown"),
        Link("other note.md", None, "Plan one", False, "markdown"),   # labels: case and spaces
        Link("other note.md", None, "plan  ONE", False, "markdown"),  # fold; the first wins
        Link("../folder/x.md", "Some Heading", "risks", False, "markdown"),
        Link("img/a b.png", None, "diagram", True, "markdown"),
        Link("with space.md", None, "spaced", False, "markdown"),    # destination on the next line
        Link("sub/p.md", None, "p", False, "markdown"),
    )


def test_reference_definitions_and_references_in_code_and_comments_are_not_links() -> None:
    found = links_of(
        "[a] [b] [c] [d] `[e]` %% [e] %%\n\n"
        "```md\n[a]: fenced.md\n```\n"
        "`[b]: inline-code.md`\n\n"
        "%% [c]: commented.md %%\n\n"
        "[d]: real.md\n[e]: e.md\n"
    )
    assert [link.target for link in found] == ["real.md"]


def test_what_is_not_a_reference_definition() -> None:
    found = links_of(
        "A paragraph line\n[a]: under-a-paragraph.md\n\n"          # cannot interrupt a paragraph
        "[b]: trailing.md words after it\n\n"                       # junk after the destination
        "    [c]: indented-four.md\n\n"                             # indented code, not a definition
        "[^d]: a footnote, not a link\n\n"
        "[Server01]: PS C:\\> Get-Process\n\n"                      # a console transcript
        "[a] [b] [c] [^d] [Server01] \\[e] [f][g] [g]\n\n"
        "## Heading\n[e]: e.md\n[g]: g.md\n"                        # after a heading, in a run
    )
    # `\[e]` is escaped; `[f][g]` links `f` to g.md; the last `[g]` too
    assert [(link.target, link.alias) for link in found] == [("g.md", "f"), ("g.md", "g")]
    # an HTML comment block ends on its `-->` line, so definitions may follow it directly
    found = links_of("- [Get-Item][07]\n\n<!-- link references -->\n[07]: Get-Item.md\n")
    assert found == (Link("Get-Item.md", None, "Get-Item", False, "markdown"),)
    assert links_of("Text with --> in it\n[07]: Get-Item.md\n\n[07]\n") == ()


# --------------------------------------------------------------------------- the resolver

FILES = [
    ("Home.md", ["Start", "CI/CD"]),
    ("My Note.md", []),
    ("projects/alpha/Plan.md", ["Alpha plan"]),
    ("projects/beta/Plan.md", []),
    ("projects/Plan.md", []),
    ("archive/2020/deep/old/Plan.md", []),
    ("people/Ann.md", ["Annie"]),
    ("person/Ann.md", []),
    ("docs/report.pdf", []),
    ("docs/sub/Spec.md", []),
    ("v1.2 notes.md", []),
    ("Straße.md", []),
]


@pytest.fixture(scope="module")
def resolver() -> Resolver:
    return Resolver(FILES)


@pytest.mark.parametrize(
    ("source", "target", "expected", "via"),
    [
        ("x.md", "My Note", "My Note.md", "path"),                  # from the vault root
        ("x.md", "my note", "My Note.md", "path"),                  # case
        ("x.md", "MY NOTE.MD", "My Note.md", "path"),               # case, with the suffix
        ("x.md", "Strasse", "Straße.md", "path"),                   # full case folding: ß = ss
        ("x.md", "v1.2 notes", "v1.2 notes.md", "path"),            # a dot is not an extension
        ("a/b/x.md", "Spec", "docs/sub/Spec.md", "name"),           # by name, anywhere
        ("a/x.md", "sub/Spec", "docs/sub/Spec.md", "name"),         # a folder-qualified name
        ("a/x.md", "docs/sub/Spec.md", "docs/sub/Spec.md", "path"),  # the full path
        ("a/x.md", "/docs/sub/Spec", "docs/sub/Spec.md", "path"),   # from the root, explicitly
        ("docs/x.md", "./sub/Spec", "docs/sub/Spec.md", "path"),    # relative, wiki syntax
        ("docs/sub/x.md", "../report.pdf", "docs/report.pdf", "path"),
        ("a/x.md", "report.pdf", "docs/report.pdf", "name"),        # an indexed document
        ("a/x.md", "Start", "Home.md", "alias"),                    # an alias
        ("a/x.md", "ci/cd", "Home.md", "alias"),                    # an alias with a slash
        ("a/x.md", "annie", "people/Ann.md", "alias"),
        ("a/x.md", "diagram.png", None, "none"),                    # not indexed: dangling
        ("a/x.md", "Nowhere", None, "none"),
        ("a/x.md", "beta/Nowhere", None, "none"),
        ("a/x.md", "gamma/Plan", None, "none"),                     # the folder must match
        ("a/x.md", "", "a/x.md", "self"),                           # [[#heading]]
    ],
)
def test_resolution(resolver: Resolver, source: str, target: str, expected: str | None, via: str) -> None:
    assert resolver.resolve(source, target) == (expected, via)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("projects/alpha/x.md", "projects/alpha/Plan.md"),   # the same folder wins
        ("projects/beta/y/x.md", "projects/beta/Plan.md"),   # one folder up
        ("projects/x.md", "projects/Plan.md"),
        ("x.md", "projects/Plan.md"),                        # fewest folder steps from the root
        ("archive/2020/x.md", "archive/2020/deep/old/Plan.md"),  # 2 steps down beats 3 across
        ("elsewhere/x.md", "projects/Plan.md"),              # tie on steps: the shortest path
        ("people/x.md", "people/Ann.md"),
        ("person/x.md", "person/Ann.md"),
        ("misc/x.md", "people/Ann.md"),                      # tie on steps and length: alphabetical
    ],
)
def test_duplicate_names_resolve_to_the_nearest_file(resolver: Resolver, source: str, expected: str) -> None:
    assert resolver.resolve(source, "Plan" if "Plan" in expected else "Ann") == (expected, "name")


def test_a_qualified_target_picks_its_file_among_duplicates(resolver: Resolver) -> None:
    assert resolver.resolve("projects/alpha/x.md", "beta/Plan") == ("projects/beta/Plan.md", "name")
    assert resolver.resolve("projects/alpha/x.md", "projects/Plan") == ("projects/Plan.md", "path")


def test_a_file_name_beats_an_alias(resolver: Resolver) -> None:
    with_alias = Resolver([*FILES, ("Other.md", ["My Note"])])
    assert with_alias.resolve("x.md", "My Note") == ("My Note.md", "path")
    assert with_alias.resolve("x.md", "Alpha plan") == ("projects/alpha/Plan.md", "alias")


def test_markdown_links_are_relative_to_the_linking_note_first() -> None:
    resolver = Resolver([("a/x.md", []), ("x.md", []), ("b/c/y.md", [])])
    assert resolver.resolve("a/n.md", "x.md", "markdown") == ("a/x.md", "path")   # beside the note
    assert resolver.resolve("a/n.md", "x.md", "wiki") == ("x.md", "path")         # from the root
    assert resolver.resolve("a/n.md", "../b/c/y.md", "markdown") == ("b/c/y.md", "path")
    # a relative path that leads nowhere is looked up by name, its folders still matching
    assert resolver.resolve("a/n.md", "../c/y.md", "markdown") == ("b/c/y.md", "name")
    assert resolver.resolve("a/n.md", "../../gone/y.md", "markdown") == (None, "none")
    assert resolver.resolve("a/n.md", "../../../outside.md", "markdown") == (None, "none")


def test_unicode_names_match_in_either_normal_form() -> None:
    nfd = unicodedata.normalize("NFD", "Café déjà vu.md")
    resolver = Resolver([(f"notes/{nfd}", ["Résumé"])])
    assert resolver.resolve("x.md", unicodedata.normalize("NFC", "café déjà vu")) == (f"notes/{nfd}", "name")
    assert resolver.resolve("x.md", unicodedata.normalize("NFD", "RÉSUMÉ")) == (f"notes/{nfd}", "alias")
    assert link_key(nfd) == link_key(unicodedata.normalize("NFC", "CAFÉ DÉJÀ VU"))


# --------------------------------------------------------------------------- the real index

LINKED_NOTES = {
    "Home.md": """
        ---
        aliases: [Start page]
        ---
        # Home

        See [[Projects/Alpha|the alpha project]], [[beta]], [[Missing note]] and [[#Home]].
        ![[diagram.png]] and [[report.pdf]].

        ```
        [[Not a link]] and [no](not-a-link.md)
        ```
        """,
    "Projects/Alpha.md": """
        # Alpha

        Back to [[home]]. Also [the beta plan](../Projects/Beta%20plan.md#Risks) and [[Start page]].
        """,
    "Projects/Beta plan.md": """
        ---
        aliases: [beta]
        ---
        # Beta plan

        ## Risks

        Linked from [[Alpha#Goals]].
        """,
}


@pytest.fixture
def linked_vault(vault: Path, write) -> Path:  # type: ignore[no-untyped-def]
    for rel, text in LINKED_NOTES.items():
        write(rel, text)
    from tests.support import docgen

    docgen.text_pdf(vault / "docs" / "report.pdf", ["Quarterly report: revenue grew in every region."])
    return vault


def outgoing(index, path: str) -> list[tuple[str, str | None, str]]:  # type: ignore[no-untyped-def]
    return [(link.target, link.path, link.via) for link in index.links(path).outgoing]


def backlinks(index, path: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [link.source for link in index.links(path).backlinks]


def test_links_and_backlinks_through_the_index(linked_vault: Path) -> None:
    with open_index(linked_vault, create=True) as index:
        index.sync()
        found = index.links("Home.md")
        assert [(link.target, link.path, link.via, link.embed) for link in found.outgoing] == [
            ("Projects/Alpha", "Projects/Alpha.md", "path", False),
            ("beta", "Projects/Beta plan.md", "alias", False),
            ("Missing note", None, "none", False),
            ("", "Home.md", "self", False),
            ("diagram.png", None, "none", True),
            ("report.pdf", "docs/report.pdf", "name", False),
        ]
        assert [link.target for link in found.unresolved] == ["Missing note", "diagram.png"]
        assert found.outgoing[0].alias == "the alpha project"
        # two links from Alpha (by name and by alias), none from Home itself ([[#Home]])
        assert backlinks(index, "Home.md") == ["Projects/Alpha.md", "Projects/Alpha.md"]
        beta = index.links("Projects/Beta plan.md")
        assert [(link.source, link.syntax, link.heading) for link in beta.backlinks] == [
            ("Home.md", "wiki", None), ("Projects/Alpha.md", "markdown", "Risks"),
        ]  # fmt: skip
        assert outgoing(index, "Projects/Beta plan.md") == [("Alpha", "Projects/Alpha.md", "name")]
        assert beta.outgoing[0].heading == "Goals" and beta.outgoing[0].heading_found is False
        assert beta.missing_headings == beta.outgoing  # Alpha has no "Goals" heading
        assert [link.heading_found for link in found.outgoing] == [None, None, None, True, None, None]
        assert index.links("Projects/Alpha.md").outgoing[1].heading_found is True  # ...#Risks
        assert backlinks(index, "docs/report.pdf") == ["Home.md"]
        assert not found.notices


def test_a_note_can_be_named_as_a_link_would_name_it(linked_vault: Path) -> None:
    with open_index(linked_vault, create=True) as index:
        index.sync()
        assert index.links("alpha").path == "Projects/Alpha.md"
        assert index.links("beta").path == "Projects/Beta plan.md"          # an alias
        assert index.links("/Projects/Alpha.md").path == "Projects/Alpha.md"  # from the vault root
        assert index.links(str(linked_vault / "Home.md")).path == "Home.md"  # a path in the vault
        with pytest.raises(QueryError) as caught:
            index.links("Nowhere")
        assert "not in the index" in caught.value.message and caught.value.hint
        with pytest.raises(QueryError):
            index.related("")


def test_links_follow_renames_deletions_and_new_files(linked_vault: Path) -> None:
    with open_index(linked_vault, create=True) as index:
        index.sync()
        # a new file of a dangling link's name resolves it
        (linked_vault / "Missing note.md").write_text("# Now here\n", "utf-8")
        index.sync()
        assert ("Missing note", "Missing note.md", "path") in outgoing(index, "Home.md")
        # rename the target: links by name follow it into another folder
        (linked_vault / "Archive").mkdir()
        (linked_vault / "Projects" / "Alpha.md").rename(linked_vault / "Archive" / "Alpha.md")
        index.sync()
        assert outgoing(index, "Home.md")[0] == ("Projects/Alpha", None, "none")  # path-qualified
        assert outgoing(index, "Projects/Beta plan.md") == [("Alpha", "Archive/Alpha.md", "name")]
        # a file of the same name nearer the linking note takes the link over
        (linked_vault / "Projects" / "alpha.md").write_text("# alpha again\n", "utf-8")
        index.sync()
        assert outgoing(index, "Projects/Beta plan.md") == [("Alpha", "Projects/alpha.md", "name")]
        # delete it: the link falls back to the other file of that name
        (linked_vault / "Projects" / "alpha.md").unlink()
        index.sync()
        assert outgoing(index, "Projects/Beta plan.md") == [("Alpha", "Archive/Alpha.md", "name")]
        # delete the last one: dangling, and its backlinks are gone with it
        (linked_vault / "Archive" / "Alpha.md").unlink()
        index.sync()
        assert outgoing(index, "Projects/Beta plan.md") == [("Alpha", None, "none")]
        assert backlinks(index, "Home.md") == []
        # forget() (the study app's delete) updates links at once, without a sync
        index.forget("Missing note.md")
        assert ("Missing note", None, "none") in outgoing(index, "Home.md")


def test_a_sync_resolves_only_the_links_a_change_can_affect(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    from vaultseek.index.sync import Syncer
    from vaultseek.links.linking import relink

    write("hub.md", "# Hub\n\n[[a]] [[b]]\n")
    for n in range(20):
        write(f"notes/n{n}.md", f"# N{n}\n\nSee [[hub]] and [[n{(n + 1) % 20}]].\n")
    with open_index(vault, create=True) as index:
        index.sync()

        def resolved_after(change) -> int:  # type: ignore[no-untyped-def]
            change()
            Syncer(index.store, index.config, index.embedder).run()
            return relink(index.store)

        # an edit that keeps the note's name and aliases: only its own (re-written) links
        assert resolved_after(lambda: write("hub.md", "# Hub\n\n[[a]] [[b]] [[c]]\n")) == 3
        # an alias added: its own links, plus those that may now point at it
        assert resolved_after(lambda: write("hub.md", "---\naliases: [n3]\n---\n[[a]]\n")) == 1 + 1
        # renamed: its own links, and every link that named it
        (vault / "hub.md").rename(vault / "notes" / "hub.md")
        assert resolved_after(lambda: None) == 1 + 20 + 1
        assert backlinks(index, "notes/hub.md") == sorted(f"notes/n{n}.md" for n in range(20))


def test_an_alias_added_or_removed_captures_or_releases_links(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    write("a.md", "# A\n\nSee [[Tokens]].\n")
    write("b/oauth.md", "# OAuth\n")
    with open_index(vault, create=True) as index:
        index.sync()
        assert outgoing(index, "a.md") == [("Tokens", None, "none")]
        write("b/oauth.md", "---\naliases: [tokens]\n---\n# OAuth\n")
        index.sync()
        assert outgoing(index, "a.md") == [("Tokens", "b/oauth.md", "alias")]
        write("b/oauth.md", "# OAuth\n")
        index.sync()
        assert outgoing(index, "a.md") == [("Tokens", None, "none")]


def test_a_file_stored_in_nfd_is_found_by_a_link_typed_in_nfc(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    nfd = unicodedata.normalize("NFD", "Café Müller.md")  # as macOS writes names
    write(f"notes/{nfd}", "# Café\n")
    write("a.md", "[[café müller]] and [menu](notes/Caf%C3%A9%20M%C3%BCller.md)\n")
    with open_index(vault, create=True) as index:
        index.sync()
        assert [(path, via) for _t, path, via in outgoing(index, "a.md")] == [
            (f"notes/{nfd}", "name"), (f"notes/{nfd}", "path"),
        ]  # fmt: skip
        assert backlinks(index, f"notes/{nfd}") == ["a.md", "a.md"]
        assert index.links(unicodedata.normalize("NFC", "Café Müller")).path == f"notes/{nfd}"


def test_an_older_index_re_reads_its_notes_once_for_markdown_links(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    write("a.md", "# A\n\n[b](sub/b.md)\n")
    write("sub/b.md", "# B\n")
    with open_index(vault, create=True) as index:
        index.sync()
        index.store.set_meta({"pipeline_version": "2"})  # as an index built before markdown links
        with index.conn:
            index.conn.execute("DELETE FROM links")
        assert outgoing(index, "a.md") == []
        report = index.sync()
        assert report.updated == 2
        assert outgoing(index, "a.md") == [("sub/b.md", "sub/b.md", "path")]
        assert index.sync().updated == 0


REFERENCE_VAULT = {
    "notes/src.md": """
        # Source

        [beside][b] [up][u] [by name][n] [from the root][r] [root, no suffix][rn] [spaced][sp]
        [missing][gone] [web][w] [unknown][zz] [b][] [rn]

        [b]: target.md
        [u]: ../top.md "up a folder"
        [n]: Deep.md
        [r]: /folder/note.md
        [rn]: /FOLDER/note
        [sp]: </folder/my%20note.md#Part%20two>
        [gone]: /nowhere/gone.md
        [w]: https://example.org/target.md
        """,
    "notes/inline.md": "[a](/folder/note.md) [b](/folder/note) [c](/folder/My%20Note) [d](/deep.md) [e](folder/note.md)\n",
    "notes/target.md": "# Target beside the note\n",
    "target.md": "# Target at the root\n",
    "top.md": "# Top\n",
    "archive/deep.md": "# Deep\n",
    "folder/note.md": "# Note at the root's folder\n",
    "folder/my note.md": "# My note\n\n## Part two\n",
    "notes/folder/note.md": "# A namesake beside the linking notes\n",
}


def test_reference_links_resolve_as_inline_links_do(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    with synced(vault, write, REFERENCE_VAULT) as index:
        assert [(link.alias, link.path, link.via, link.heading) for link in index.links("notes/src.md").outgoing] == [
            ("beside", "notes/target.md", "path", None),        # relative to the note first
            ("up", "top.md", "path", None),
            ("by name", "archive/deep.md", "name", None),       # then the name fallback
            ("from the root", "folder/note.md", "path", None),  # `/` is the vault root
            ("root, no suffix", "folder/note.md", "path", None),
            ("spaced", "folder/my note.md", "path", "Part two"),
            ("missing", None, "none", None),
            ("b", "notes/target.md", "path", None),             # [b][]
            ("rn", "folder/note.md", "path", None),             # [rn]
        ]
        assert backlinks(index, "top.md") == ["notes/src.md"]


def test_root_relative_markdown_links_resolve_from_the_vault_root(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    with synced(vault, write, REFERENCE_VAULT) as index:
        assert [(link.target, link.path, link.via) for link in index.links("notes/inline.md").outgoing] == [
            ("/folder/note.md", "folder/note.md", "path"),       # not notes/folder/note.md
            ("/folder/note", "folder/note.md", "path"),          # without the suffix
            ("/folder/My Note", "folder/my note.md", "path"),    # URL-decoded, any case
            ("/deep.md", "archive/deep.md", "name"),             # not at the root: by name
            ("folder/note.md", "notes/folder/note.md", "path"),  # relative: beside the note
        ]


def test_an_existing_index_picks_up_reference_links_on_its_next_index(
    vault: Path, write, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    import vaultseek.index.sync
    import vaultseek.notes.markdown

    write("a.md", "# A\n\nSee [b][ref] and [[c]].\n\n[ref]: sub/b.md\n")
    write("sub/b.md", "# B\n")
    write("c.md", "# C\n")
    with open_index(vault, create=True) as index:
        with monkeypatch.context() as before:  # the index as the previous version built it
            before.setattr(vaultseek.index.sync, "PIPELINE_VERSION", "3")
            before.setattr(vaultseek.notes.markdown, "reference_links", lambda *_args: [])
            index.sync()
            assert outgoing(index, "a.md") == [("c", "c.md", "path")]
            assert index.store.get_meta("pipeline_version") == "3"
        report = index.sync()  # unchanged files, a newer pipeline: every note is read again
        assert report.updated == 3
        assert outgoing(index, "a.md") == [("sub/b.md", "sub/b.md", "path"), ("c", "c.md", "path")]
        assert backlinks(index, "sub/b.md") == ["a.md"]
        assert index.sync().updated == 0


# --------------------------------------------------------------------------- heading anchors

HEADINGS_NOTE = """\
---
title: A title is not a heading
---
# Plans

## Step 1: Set up
### Notes
### Notes
#### Deep detail
Setext title
============
```
## Not a heading (code)
```
%% ## Commented heading %%
## See also
## About [[Other|the other]]
## Café
"""


@pytest.mark.parametrize(
    ("heading", "syntax", "found"),
    [
        ("Step 1 Set up", "wiki", True),          # as Obsidian writes a heading with `:`
        ("step 1: SET UP", "wiki", True),         # case and punctuation
        ("Deep detail", "wiki", True),            # a level-4 heading
        ("setext title", "wiki", True),
        ("See also", "wiki", True),
        ("About the other", "wiki", True),        # a link in a heading reads as its text
        ("About Other the other", "wiki", True),  # or as written
        ("Plans#Notes", "wiki", True),            # a heading under a heading
        ("Notes#Plans", "wiki", False),           # not in that order
        ("Not a heading (code)", "wiki", False),
        ("Commented heading", "wiki", False),
        ("A title is not a heading", "wiki", False),
        ("step-1-set-up", "wiki", False),         # a slug is not a wiki link's heading
        ("^block-id", "wiki", None),              # block references are not checked
        ("step-1-set-up", "markdown", True),      # GitHub's slug
        ("notes-1", "markdown", True),            # the second "Notes"
        ("notes-2", "markdown", False),
        ("setext-title", "markdown", True),
        ("about-the-other", "markdown", True),
        ("café", "markdown", True),
        ("Step 1: Set up", "markdown", True),     # the text, as Obsidian writes markdown links
        ("missing", "markdown", False),
    ],
)
def test_a_heading_is_found_as_obsidian_and_github_name_it(heading: str, syntax: str, found: bool | None) -> None:
    from vaultseek.links.anchors import NoteHeadings

    assert NoteHeadings.from_text(HEADINGS_NOTE).has(heading, syntax) is found


def test_docs_site_anchors_count_too() -> None:
    from vaultseek.links.anchors import NoteHeadings, github_slug

    assert github_slug("Foo - Bar (beta)") == "foo---bar-beta"
    headings = NoteHeadings(["Foo - Bar (beta)"])
    assert headings.has("foo---bar-beta", "markdown") and headings.has("foo-bar-beta", "markdown")  # MkDocs
    # Microsoft's docs (DocFX): a heading of punctuation only is `#section`, then `#section-1`;
    # and an HTML anchor is a target as well
    docs = NoteHeadings.from_text("### `$$`\n\n### `$?`\n\n<a id=\"ex3\" ></a>\n### Example 3\n")
    assert all(docs.has(anchor, "markdown") for anchor in ("section", "section-1", "ex3", "example-3"))
    assert docs.has("section-2", "markdown") is False and docs.has("ex3", "wiki") is False


ANCHOR_VAULT = {
    "target.md": """
        # Target

        ## Part two

        Enough text for this section to be a chunk of its own in the index.

        #### Deep detail

        More text, under a level-four heading, that belongs to the chunk of Part two.

        ## Tiny

        Short.

        ## See also

        - [[src]]
        """,
    "src.md": """
        # Source

        [[target#Part two]] [[target#part TWO]] [[target#Gone]] [[target#Tiny]]
        [[target#Deep detail]] [[target#See also]] [[target#^block]] [[#Local]] [[#Missing here]]
        [a](target.md#part-two) [b](target.md#Part%20two) [c](target.md#gone) [d](target.md#see-also)
        [e][ref] [[nowhere#Part two]] [[report.pdf#page=2]] [[target]]

        ## Local

        [ref]: target.md#deep-detail
        """,
}


def test_links_to_missing_headings_are_flagged(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    from tests.support import docgen

    docgen.text_pdf(vault / "report.pdf", ["A report without headings."])
    with synced(vault, write, ANCHOR_VAULT) as index:
        found = index.links("src.md")
        assert [(link.target, link.heading, link.heading_found) for link in found.outgoing] == [
            ("target", "Part two", True),
            ("target", "part TWO", True),
            ("target", "Gone", False),
            ("target", "Tiny", True),          # a section too short to be a chunk
            ("target", "Deep detail", True),   # a level-4 heading
            ("target", "See also", True),      # a section the chunker skips
            ("target", "^block", None),        # a block reference: not checked
            ("", "Local", True),               # this note's own heading
            ("", "Missing here", False),
            ("target.md", "part-two", True),   # a slug
            ("target.md", "Part two", True),   # the text, URL-decoded
            ("target.md", "gone", False),
            ("target.md", "see-also", True),
            ("target.md", "deep-detail", True),  # a reference link
            ("nowhere", "Part two", None),     # unresolved: not checked
            ("report.pdf", "page=2", None),    # a document: not checked
            ("target", None, None),
        ]
        assert [(link.target, link.heading) for link in found.missing_headings] == [("target", "Gone"), ("", "Missing here"), ("target.md", "gone")]
        assert found.to_dict()["missing_headings"] == 3
        # why the check reads the note rather than the chunks: these headings are in no chunk's
        # section
        sections = {row.section for row in index.get_note("target.md")}
        assert not {"Tiny", "Deep detail", "See also"} & sections
        # the note as it is now: a heading added since the last index counts
        write("target.md", textwrap.dedent(ANCHOR_VAULT["target.md"]) + "\n## Gone\n")
        assert [(link.target, link.heading) for link in index.links("src.md").missing_headings] == [("", "Missing here")]


def test_cli_flags_a_link_to_a_missing_heading(indexed_links: Path) -> None:
    from conftest import run_cli

    done = run_cli("links", "Projects/Beta plan.md", "--vault", str(indexed_links))
    assert done.returncode == 0, done.stderr
    assert "Links (1, 1 to a missing heading):" in done.stdout
    assert "  → Projects/Alpha.md  [[Alpha#Goals]]  (heading not found)\n" in done.stdout
    alpha = run_cli("links", "Projects/Alpha.md", "--vault", str(indexed_links))
    assert "[the beta plan](../Projects/Beta plan.md#Risks)\n" in alpha.stdout  # found: no flag
    assert "heading not found" not in alpha.stdout
    body = json.loads(run_cli("links", "Projects/Beta plan.md", "--vault", str(indexed_links), "--json").stdout)
    assert body["outgoing"][0]["heading_found"] is False and body["missing_headings"] == 1


def test_unresolved_links_say_so_until_resolution_catches_up(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    write("a.md", "[[b]]\n")
    write("b.md", "# B\n")
    with open_index(vault, create=True) as index:
        index.sync()
        with index.conn:  # as if a writer stopped between writing a file and resolving
            index.conn.execute("UPDATE links SET via = NULL, resolved = NULL")
        found = index.links("a.md")
        assert found.outgoing[0].path is None and found.notices
        index.sync()
        assert outgoing(index, "a.md") == [("b", "b.md", "path")]
        assert not index.links("a.md").notices


# --------------------------------------------------------------------------- related notes

RELATED_NOTES = {
    "hub.md": "# Hub\n\n[[oauth]] [[tokens]] [[bread]]\n",
    "oauth.md": "# OAuth\n\nRotate refresh tokens on every use and revoke the old one. [[tokens]]\n",
    "tokens.md": "# Tokens\n\nRefresh tokens and access tokens: rotation, revocation, expiry.\n",
    "bread.md": "# Bread\n\nFeed the sourdough starter with flour and water twice a day.\n",
    "jwt.md": "# JWT\n\nAccess tokens as signed JWTs; refresh tokens are rotated and revoked.\n",
    "lonely.md": "# Lonely\n\nNothing links here.\n",
}


def test_related_notes_by_links_and_by_meaning(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    with synced(vault, write, RELATED_NOTES) as index:
        found = index.related("oauth.md", k=5)
        by_path = {r.path: r for r in found.results}
        assert found.results[0].path == "tokens.md"  # linked, co-cited by hub, and similar
        assert by_path["tokens.md"].linked == "to" and by_path["tokens.md"].shared == ("hub.md",)
        assert by_path["hub.md"].linked == "from"
        assert by_path["bread.md"].links_rank is not None and by_path["bread.md"].linked is None
        assert by_path["bread.md"].shared == ("hub.md",)  # co-cited only
        assert by_path["jwt.md"].links_rank is None and by_path["jwt.md"].vector_rank is not None
        assert by_path["jwt.md"].similarity > by_path["bread.md"].similarity
        assert "oauth.md" not in by_path
        assert [r.score for r in found.results] == sorted((r.score for r in found.results), reverse=True)
        lonely = index.related("lonely.md", k=3)
        assert len(lonely.results) == 3 and all(r.links_rank is None for r in lonely.results)
        with pytest.raises(QueryError):
            index.related("oauth.md", k=0)
        assert json.loads(json.dumps(found.to_dict()))["results"][0]["path"] == "tokens.md"


CLOSE_NOTES = {
    "git/commit.md": "# Commit\n\nRecord staged changes in the repository with a commit message: `git commit -m 'fix'`. "
    "Amend the last commit with `git commit --amend`.\n",
    "git/amend.md": "# Amend\n\nRewrite the last commit: `git commit --amend` changes its message or adds the staged "
    "changes to it.\n",
    "git/push.md": "# Push\n\nSend local commits to a branch of a remote repository: `git push origin main`.\n",
    "docker/run.md": "# Docker run\n\nStart a container from an image: `docker run -it ubuntu bash`; publish a port "
    "with `-p 8080:80`.\n",
    "gift.md": "# Birthday gift ideas for Mum\n\n- A ceramic planter for the orchids\n- Tickets to the string "
    "quartet in March\n- A framed photo from the Lisbon trip\n",
}


def test_a_note_nothing_is_close_to_says_so_and_its_nearest_are_not_called_close(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    from vaultseek.cli.links import format_related
    from vaultseek.links.related import NOTHING_CLOSE

    with synced(vault, write, CLOSE_NOTES) as index:
        lonely = index.related("gift.md", k=4)
        assert len(lonely.results) == 4  # the nearest are still listed ...
        assert lonely.nothing_close and all(r.close is False for r in lonely.results)  # ... as what they are
        assert NOTHING_CLOSE in lonely.notices
        assert format_related(lonely).splitlines()[0] == f"note: {NOTHING_CLOSE}"
        body = json.loads(json.dumps(lonely.to_dict()))
        assert body["nothing_close"] is True and {r["close"] for r in body["results"]} == {False}
        assert index.map_note("gift.md").missing_links == ()  # nothing close: no link to suggest

        amend = index.related("git/amend.md", k=4)
        by_path = {r.path: r for r in amend.results}
        assert not amend.nothing_close and NOTHING_CLOSE not in amend.notices
        assert by_path["git/commit.md"].close is True and by_path["gift.md"].close is False
        assert "not close" in format_related(amend) and "not close" not in format_related(lonely)

    write("docker/run.md", CLOSE_NOTES["docker/run.md"] + "\nPresents still to wrap: [[gift]]\n")
    with open_index(vault) as index:
        index.sync()
        linked = index.related("gift.md", k=4)
    assert not linked.nothing_close
    assert [r.close for r in linked.results if r.path == "docker/run.md"] == [True]  # a link makes it close


def test_the_links_command_prints_its_notices() -> None:
    from vaultseek.cli.links import format_links
    from vaultseek.reports import NoteLinks

    pending = "some links are not resolved yet; run `vaultseek index` to finish"
    assert format_links(NoteLinks("Home.md", (), (), (pending,))).splitlines()[-1] == f"note: {pending}"


def test_the_best_model_that_compared_two_notes_tells_whether_they_are_close() -> None:
    from vaultseek.links.related import Lines

    both = Lines(static=0.63, deep=0.86)
    assert both.close(False, similarity=0.90, deep_similarity=0.80) is False  # the deep model decides
    assert both.close(False, similarity=0.30, deep_similarity=0.90) is True
    assert both.close(False, similarity=0.70, deep_similarity=None) is True  # no deep vector: the static model
    assert both.close(False, similarity=0.50, deep_similarity=None) is False
    assert Lines(static=None, deep=None).close(False, 0.99, 0.99) is None  # no line: cannot tell
    assert Lines(static=None, deep=None).close(True, None, None) is True  # a link can


# --------------------------------------------------------------------------- the ranking signal


def test_link_boost_is_off_by_default_and_re_ranks_when_asked(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    write("alpha.md", "# Alpha\n\nwidget widget widget widget\n")
    write("beta.md", "# Beta\n\nwidget widget\n")
    write("gamma.md", "# Gamma\n\nwidget and other words to make it longer than the rest\n")
    for n in range(6):  # beta is the vault's well-linked note
        write(f"refs/r{n}.md", f"# Ref {n}\n\nSee [[beta]].\n")
    with open_index(vault, create=True) as index:
        index.sync()
        plain = [r.path for r in index.search("widget", mode="bm25").results]
        assert plain[:2] == ["alpha.md", "beta.md"]
        assert [r.path for r in index.search("widget", mode="bm25", link_boost=0.0).results] == plain
        boosted = index.search("widget", mode="bm25", link_boost=2.0, link_signal="backlinks").results
        assert [r.path for r in boosted][:2] == ["beta.md", "alpha.md"]
        assert boosted[0].bm25_rank == 2  # the explanation still shows where fusion put it
        with pytest.raises(QueryError):
            index.search("widget", link_boost=-1)
        with pytest.raises(QueryError):
            index.search("widget", link_boost=1, link_signal="pagerank")


def test_the_neighbours_signal_lifts_hits_linked_with_the_other_top_hits(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    write("a.md", "# A\n\ngizmo gizmo gizmo gizmo gizmo [[d]]\n")
    write("b.md", "# B\n\ngizmo gizmo gizmo gizmo [[d]]\n")
    write("c.md", "# C\n\ngizmo gizmo gizmo\n")
    write("d.md", "# D\n\ngizmo gizmo\n")
    write("e.md", "# E\n\ngizmo and many other words that dilute it a great deal here\n")
    with open_index(vault, create=True) as index:
        index.sync()
        plain = [r.path for r in index.search("gizmo", mode="bm25").results]
        assert plain.index("c.md") < plain.index("d.md")
        boosted = [r.path for r in index.search("gizmo", mode="bm25", link_boost=1.0, link_signal="neighbours").results]
        assert boosted.index("d.md") < boosted.index("c.md")
        assert index.link_graph().backlinks("d.md") == 2


def test_boosting_only_the_contenders_gives_the_same_top_k() -> None:
    import random

    from vaultseek.search.fusion import Fused
    from vaultseek.search.linkgraph import LinkGraph, boost, contenders

    rng = random.Random(5)
    for _ in range(200):
        files = [f"n{i}.md" for i in range(40)]
        graph = LinkGraph((rng.choice(files), rng.choice(files)) for _ in range(rng.randint(0, 120)))
        scores = sorted((rng.random() for _ in range(rng.randint(1, 80))), reverse=True)
        fused = [Fused(i, s, {"bm25": i + 1}) for i, s in enumerate(scores)]
        paths = {f.item: rng.choice(files) for f in fused}
        k, weight = rng.randint(1, 12), rng.choice([0.1, 0.3, 1.0, 3.0])
        head = contenders(fused, k, weight)
        assert len(head) >= min(k, len(fused))
        assert [f.item for f in boost(head, paths, graph, weight, "backlinks")[:k]] == [
            f.item for f in boost(fused, paths, graph, weight, "backlinks")[:k]
        ]


def test_link_boost_from_the_config(vault: Path, write, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    write("a.md", "# A\n\nwidget widget widget widget\n")
    write("b.md", "# B\n\nwidget widget\n")
    write("c.md", "# C\n\nwidget and other words to make it longer than the rest\n")
    for n in range(4):
        write(f"r{n}.md", f"[[b]] r{n}\n")
    monkeypatch.setenv("VAULTSEEK_LINK_BOOST", "2")
    with open_index(vault, create=True) as index:
        index.sync()
        assert index.search("widget", mode="bm25").results[0].path == "b.md"
        assert index.search("widget", mode="bm25", link_boost=0).results[0].path == "a.md"


# --------------------------------------------------------------------------- every surface


@pytest.fixture
def indexed_links(linked_vault: Path) -> Path:
    with open_index(linked_vault, create=True) as index:
        index.sync()
    return linked_vault


def test_cli_links_and_related(indexed_links: Path) -> None:
    from conftest import run_cli

    vault = str(indexed_links)
    done = run_cli("links", "Home.md", "--vault", vault, "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["path"] == "Home.md" and body["unresolved"] == 2
    assert body["outgoing"][1] == {"target": "beta", "heading": None, "alias": None, "embed": False,
                                   "syntax": "wiki", "path": "Projects/Beta plan.md", "via": "alias",
                                   "heading_found": None}  # fmt: skip
    assert body["outgoing"][3]["heading"] == "Home" and body["outgoing"][3]["heading_found"] is True
    assert body["missing_headings"] == 0
    assert [b["path"] for b in body["backlinks"]] == ["Projects/Alpha.md", "Projects/Alpha.md"]

    text = run_cli("links", "alpha", "--vault", vault)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Projects/Alpha.md\n")
    assert "→ Projects/Beta plan.md  [the beta plan](../Projects/Beta plan.md#Risks)" in text.stdout
    assert "→ Home.md  [[Start page]] (by alias)" in text.stdout
    assert "Backlinks (2 notes):" in text.stdout and "← Home.md  [[Projects/Alpha|the alpha project]]" in text.stdout

    related = run_cli("related", "Home.md", "--vault", vault, "-k", "2", "--json")
    assert related.returncode == 0, related.stderr
    results = json.loads(related.stdout)["results"]
    assert len(results) == 2 and results[0]["path"] == "Projects/Alpha.md" and results[0]["linked"] == "both"
    text = run_cli("related", "Home.md", "--vault", vault)
    assert "1. Projects/Alpha.md — Alpha" in text.stdout and "linked both ways" in text.stdout

    for command in ("links", "related"):
        missing = run_cli(command, "Nowhere", "--vault", vault)
        assert missing.returncode == 2 and missing.stdout == ""
        assert missing.stderr.startswith("error: Nowhere is not in the index\nhint: ")
    no_index = run_cli("links", "Home.md", "--vault", str(indexed_links / "Projects"))
    assert no_index.returncode == 3 and "Traceback" not in no_index.stderr


def boosted_vault(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    """Three notes matching "widget" in BM25 order alpha > beta > gamma, and six notes that
    link to beta: the vault the link-boost surface tests share."""
    write("alpha.md", "# Alpha\n\nwidget widget widget widget\n")
    write("beta.md", "# Beta\n\nwidget widget\n")
    write("gamma.md", "# Gamma\n\nwidget and other words to make it longer than the rest\n")
    for n in range(6):
        write(f"refs/r{n}.md", f"# Ref {n}\n\nSee [[beta]].\n")
    with open_index(vault, create=True) as index:
        index.sync()


def test_cli_search_takes_a_link_boost(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    from conftest import run_cli

    boosted_vault(vault, write)
    args = ["search", "widget", "--vault", str(vault), "--mode", "bm25", "--json", "--no-daemon"]
    plain = json.loads(run_cli(*args).stdout)["results"]
    boosted = run_cli(*args, "--link-boost", "2")
    assert plain[0]["path"] == "alpha.md" and json.loads(boosted.stdout)["results"][0]["path"] == "beta.md"
    negative = run_cli(*args, "--link-boost=-1")
    assert negative.returncode == 2 and "link_boost must be at least 0" in negative.stderr


def test_mcp_links_and_related_tools(indexed_links: Path) -> None:
    import asyncio

    from mcp import Client

    from conftest import mcp_server

    async def calls() -> dict:  # type: ignore[type-arg]
        params = mcp_server(indexed_links)
        async with Client(params) as client:
            return {
                "tools": {t.name: t for t in (await client.list_tools()).tools},
                "links": await client.call_tool("links", {"note": "Projects/Beta plan.md"}),
                "related": await client.call_tool("related", {"note": "beta", "k": 2}),
                "missing": await client.call_tool("links", {"note": "Nowhere"}),
                "bad_k": await client.call_tool("related", {"note": "Home.md", "k": 0}),
            }

    out = asyncio.run(calls())
    assert {"links", "related"} <= set(out["tools"])
    assert set(out["tools"]["related"].input_schema["properties"]) == {"note", "k"}
    links = out["links"].structured_content
    assert [(b["path"], b["syntax"]) for b in links["backlinks"]] == [("Home.md", "wiki"), ("Projects/Alpha.md", "markdown")]
    assert links["outgoing"][0]["path"] == "Projects/Alpha.md"
    assert links["outgoing"][0]["heading_found"] is False and links["missing_headings"] == 1  # [[Alpha#Goals]]
    related = out["related"].structured_content
    assert related["path"] == "Projects/Beta plan.md" and len(related["results"]) == 2
    assert out["missing"].is_error and "not in the index" in out["missing"].content[0].text
    assert out["bad_k"].is_error


def test_http_links_and_related(indexed_links: Path, tmp_path: Path, standin) -> None:  # type: ignore[no-untyped-def]
    from starlette.testclient import TestClient

    from study_fixtures import make_app

    app = make_app(indexed_links, tmp_path / "web.db", standin.url)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            links = client.get("/api/links", params={"path": "Home.md"})
            assert links.status_code == 200
            assert links.json()["unresolved"] == 2 and links.json()["backlinks"][0]["path"] == "Projects/Alpha.md"
            assert [link["heading_found"] for link in links.json()["outgoing"]] == [None, None, None, True, None, None]
            related = client.get("/api/related", params={"path": "alpha", "k": "1"}).json()
            assert related["path"] == "Projects/Alpha.md" and len(related["results"]) == 1
            missing = client.get("/api/links", params={"path": "Nowhere"})
            assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
            assert missing.json()["error"]["hint"]
            assert client.get("/api/related").status_code == 400
            assert client.get("/api/related", params={"path": "Home.md", "k": "x"}).status_code == 400
    finally:
        app.notebook.close()


def test_a_daemon_applies_the_link_boost_as_the_process_would(vault: Path, write) -> None:  # type: ignore[no-untyped-def]
    from conftest import run_cli
    from test_daemon import stop_daemon

    boosted_vault(vault, write)
    assert run_cli("daemon", "start", "--vault", str(vault)).returncode == 0
    try:
        args = ["search", "widget", "--vault", str(vault), "--mode", "bm25", "--json"]
        for extra in ([], ["--link-boost", "2"]):
            via = run_cli(*args, *extra)
            local = run_cli(*args, *extra, "--no-daemon")
            assert via.returncode == local.returncode == 0 and via.stdout == local.stdout
        assert json.loads(via.stdout)["results"][0]["path"] == "beta.md"
    finally:
        stop_daemon(vault)


# --------------------------------------------------------------------------- a real vault


def test_the_powershell_reference_links_resolve(tmp_path: Path) -> None:
    """Real markdown links, as Microsoft's docs write them: same-folder and ../ paths,
    fragments, xref: and site-absolute links (which stay outside the vault)."""
    import shutil

    from conftest import SHARED_DATA

    source = SHARED_DATA / "powershell-docs" / "reference" / "7.5"
    if not source.is_dir():
        pytest.skip(f"{source} is absent (see DEVELOPERS.md)")
    vault = tmp_path / "vault"
    shutil.copytree(source / "Microsoft.PowerShell.Management", vault / "Microsoft.PowerShell.Management")
    with open_index(vault, create=True) as index:
        index.sync()
        rows = index.conn.execute(
            "SELECT target, resolved FROM links WHERE syntax = 'markdown' AND target NOT LIKE '../%' "
            "AND target NOT LIKE '/%' AND target != ''"
        ).fetchall()
        assert len(rows) > 300 and sum(r is not None for _t, r in rows) / len(rows) > 0.99
        process = "Microsoft.PowerShell.Management/Get-Process.md"
        assert "Microsoft.PowerShell.Management/Stop-Process.md" in backlinks(index, process)
        common = [link for link in index.links(process).outgoing if link.target.endswith("about_CommonParameters.md")]
        assert common and common[0].path is None  # its folder is not in this vault
        (vault / "Microsoft.PowerShell.Core" / "About").mkdir(parents=True)
        shutil.copy(source / "Microsoft.PowerShell.Core" / "About" / "about_CommonParameters.md",
                    vault / "Microsoft.PowerShell.Core" / "About")  # fmt: skip
        index.sync()
        common = [link for link in index.links(process).outgoing if link.target.endswith("about_CommonParameters.md")]
        assert common[0].path == "Microsoft.PowerShell.Core/About/about_CommonParameters.md"
        assert common[0].via == "path"
        # reference links, as the about_ pages write them: `[about_Providers][01]` and, under
        # an `<!-- link references -->` line, `[01]: ../../Microsoft.PowerShell.Core/About/…`
        (vault / "Microsoft.PowerShell.Security" / "About").mkdir(parents=True)
        certificates = "Microsoft.PowerShell.Security/About/about_Certificate_Provider.md"
        for rel in (certificates, "Microsoft.PowerShell.Core/About/about_Providers.md",
                    "Microsoft.PowerShell.Core/About/about_Signing.md"):  # fmt: skip
            shutil.copy(source / rel, vault / rel)
        index.sync()
        by_reference = {link.alias: link.path for link in index.links(certificates).outgoing}
        assert by_reference["about_Providers"] == "Microsoft.PowerShell.Core/About/about_Providers.md"
        assert by_reference["about_Signing"] == "Microsoft.PowerShell.Core/About/about_Signing.md"
        related = index.related(process, k=5).results
        assert {r.path for r in related} & {"Microsoft.PowerShell.Management/Stop-Process.md",
                                            "Microsoft.PowerShell.Management/Start-Process.md"}  # fmt: skip
