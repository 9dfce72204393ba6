"""Parsing notes: frontmatter (valid and broken), inline tags, comments, links and rendering."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultseek.notes.chunking import chunk_note
from vaultseek.notes.markdown import (
    clean_heading,
    fence_spans,
    headings,
    parse_note,
    render_links,
)
from vaultseek.records import Link


def note(text: str, path: str = "folder/My Note.md"):
    return parse_note(text, path=path)


# --------------------------------------------------------------------------- frontmatter


def test_frontmatter_fields_are_read_and_block_removed() -> None:
    n = note(
        "---\ntitle: Auth design\ntype: decision\ntags: [security, auth/oauth]\n"
        "aliases: [Login flow, SSO]\nstatus: draft\n---\nBody text here.\n"
    )
    assert n.title == "Auth design"
    assert n.type == "decision"
    assert n.tags == ("security", "auth/oauth")
    assert n.aliases == ("Login flow", "SSO")
    assert n.frontmatter["status"] == "draft"
    assert n.frontmatter_error is None
    assert n.body == "Body text here.\n"


def test_title_falls_back_to_file_stem() -> None:
    assert note("hello", path="projects/Auth flow.md").title == "Auth flow"
    assert note("hello", path="v1.2 plan.md").title == "v1.2 plan"
    assert note("---\ntitle: null\n---\nx", path="a/b.md").title == "b"
    assert note("---\ntitle: ''\n---\nx", path="a/b.md").title == "b"
    assert note("---\ntitle: [a, b]\n---\nx", path="a/b.md").title == "b"


def test_numeric_title_and_type_become_text() -> None:
    n = note("---\ntitle: 2024\ntype: 3\n---\n")
    assert n.title == "2024"
    assert n.type == "3"


@pytest.mark.parametrize(
    ("yaml_tags", "expected"),
    [
        ("tags: a, b", ("a", "b")),
        ("tags: a b", ("a", "b")),
        ("tags: '#a #b/c'", ("a", "b/c")),
        ("tags: [a, '#b', nested/tag]", ("a", "b", "nested/tag")),
        ("tags:\n  - one\n  - two", ("one", "two")),
        ("tags:", ()),
        ("tags: null", ()),
        ("tags: [2024, y2024, true]", ("y2024",)),
        ("tag: single", ("single",)),
        ("Tags: [Upper]", ("Upper",)),
        ("tags: [a, A, a]", ("a",)),
        ("tags: {x: 1}", ()),
    ],
)
def test_frontmatter_tag_shapes(yaml_tags: str, expected: tuple[str, ...]) -> None:
    n = note(f"---\n{yaml_tags}\n---\nbody")
    assert n.tags == expected
    assert n.frontmatter_error is None


def test_aliases_string_is_split_at_commas_and_deduped() -> None:
    n = note("---\naliases: Smith, J. Smith, smith\n---\n")
    assert n.aliases == ("Smith", "J. Smith")
    assert note("---\nalias: [null, '', x]\n---\n").aliases == ("x",)


def test_frontmatter_values_are_json_safe() -> None:
    n = note(
        "---\ncreated: 2024-01-02\nupdated: 2024-01-02 10:30:00\nnested:\n"
        "  when: [2023-05-06]\n  1: int key\nratio: .inf\nnothing: null\n---\n"
    )
    assert n.frontmatter_error is None
    assert n.frontmatter["created"] == "2024-01-02"
    assert n.frontmatter["updated"].startswith("2024-01-02")
    assert n.frontmatter["nested"] == {"when": ["2023-05-06"], "1": "int key"}
    assert n.frontmatter["ratio"] == "inf"
    assert n.frontmatter["nothing"] is None
    json.dumps(n.frontmatter, allow_nan=False)


def test_invalid_yaml_sets_error_drops_block_and_keeps_parsing() -> None:
    n = note("---\ntitle: [unclosed\ntags: x\n---\nReal #body text\n", path="x/Broken.md")
    assert n.frontmatter_error is not None
    assert n.frontmatter_error.startswith("invalid YAML")
    assert n.frontmatter == {}
    assert n.title == "Broken"
    assert n.body == "Real #body text\n"
    assert n.tags == ("body",)


def test_yaml_that_is_not_a_mapping_is_an_error() -> None:
    n = note("---\n- a\n- b\n---\ntext")
    assert n.frontmatter_error == "frontmatter is not a mapping (got list)"
    assert n.body == "text"
    assert note("---\njust a string\n---\n").frontmatter_error is not None


def test_impossible_date_is_an_error_not_a_crash() -> None:
    n = note("---\ndate: 2024-13-45\n---\nbody")
    assert n.body == "body"
    # PyYAML rejects the value inside its timestamp constructor.
    assert n.frontmatter_error is not None


def test_alias_bomb_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    n = note("---\n" + "\n".join(lines) + "\n---\nbody")
    assert n.frontmatter_error is not None
    assert n.body == "body"


@pytest.mark.parametrize("depth", [600, 3000])  # our converter's limit, then the parser's
def test_deeply_nested_frontmatter_is_refused(depth: int) -> None:
    n = note("---\na: " + "[" * depth + "]" * depth + "\n---\nbody")
    assert n.frontmatter_error is not None
    assert n.body == "body"


def test_unterminated_frontmatter_is_treated_as_body() -> None:
    n = note("---\ntitle: x\nno closing line\n")
    assert n.frontmatter_error is not None
    assert "unterminated" in n.frontmatter_error
    assert n.body.startswith("---\ntitle: x")
    assert n.title == "My Note"


def test_dot_dot_dot_closes_frontmatter_and_empty_block_is_fine() -> None:
    assert note("---\ntype: x\n...\nbody").type == "x"
    empty = note("---\n---\nbody")
    assert empty.frontmatter == {} and empty.frontmatter_error is None and empty.body == "body"


def test_horizontal_rule_first_is_not_frontmatter() -> None:
    n = note("----\ntext\n")
    assert n.frontmatter_error is None
    assert n.body == "----\ntext\n"


def test_bom_crlf_and_only_frontmatter() -> None:
    n = note("\ufeff---\r\ntitle: Win\r\ntags: [a]\r\n---\r\nline one\r\nline two\r\n")
    assert n.title == "Win" and n.tags == ("a",)
    assert n.body == "line one\nline two\n"
    only = note("---\ntitle: T\n---")
    assert only.body == "" and only.title == "T"
    assert note("").body == ""


# --------------------------------------------------------------------------- inline tags


def test_inline_tag_rules() -> None:
    n = note(
        "#start of line and #tag, #nested/tag #tag-with-dash #tag_1 #Ünïcode\n"
        "# Heading is not a tag\n## Nor #this? yes it is\n"
        "#123 #2024-01 are numeric; a#b and http://x.com/#anchor and &#123; are not\n"
        "`#code` is not, nor ``#code2``.\n"
        "```\n#fenced not\n```\n"
        "end #tag. #trailing/\n"
    )
    assert n.tags == (
        "start",
        "tag",
        "nested/tag",
        "tag-with-dash",
        "tag_1",
        "Ünïcode",
        "this",
        "trailing",
    )


def test_inline_and_frontmatter_tags_merge_case_insensitively() -> None:
    n = note("---\ntags: [Project, alpha]\n---\nText #project #Beta #ALPHA #beta\n")
    assert n.tags == ("Project", "alpha", "Beta")


def test_tags_inside_comments_and_links_are_ignored() -> None:
    n = note("a %% #hidden %% b [[note #x]] #real")
    assert n.tags == ("real",)


# --------------------------------------------------------------------------- comments


def test_comments_are_removed_inline_and_multiline() -> None:
    n = note("keep %%gone%% this\nbefore %%\nmany\nlines\n%% after\n")
    assert n.body == "keep  this\nbefore  after\n"


def test_comments_respect_code() -> None:
    text = "`%%i` in batch `%%j`\n```\nfor %%x in (*) do %%x\n```\nunclosed %% stays\n"
    assert note(text).body == text


def test_comment_can_hide_a_fenced_block() -> None:
    n = note("a\n%%\n```\ncode\n```\n%%\nb\n")
    assert n.body == "a\n\nb\n"


# --------------------------------------------------------------------------- links


def test_link_forms_are_collected_in_order_without_duplicates() -> None:
    n = note(
        "See [[Target]], [[Target|alias]], [[Other#Heading]], [[Other#Heading|Alias]],\n"
        "![[embed]] ![[image.png|100]] [[#Local heading]] [[ Spaced  name ]] [[Café déjà vu]]\n"
        "again [[Target]] and [[folder/Deep.md#^block1]] [[Table\\|cell]] [[]]\n"
    )
    assert n.links == (
        Link("Target"),
        Link("Target", alias="alias"),
        Link("Other", heading="Heading"),
        Link("Other", heading="Heading", alias="Alias"),
        Link("embed", embed=True),
        Link("image.png", alias="100", embed=True),
        Link("", heading="Local heading"),
        Link("Spaced  name"),
        Link("Café déjà vu"),
        Link("folder/Deep.md", heading="^block1"),
        Link("Table", alias="cell"),
    )


def test_links_in_code_and_comments_are_not_collected() -> None:
    n = note(
        "`[[inline]]` and ``x [[double]] x``\n```md\n[[fenced]]\n```\n~~~~\n[[tilde]]\n~~~~\n"
        "%% [[commented]] %%\n    [[indented list code is still a link]]\n[[real]]\n"
    )
    assert [link.target for link in n.links] == ["indented list code is still a link", "real"]


def test_unclosed_fence_hides_links_to_the_end() -> None:
    n = note("[[before]]\n```\n[[inside]]\n## not a heading\n")
    assert n.links == (Link("before"),)


# --------------------------------------------------------------------------- render_links


@pytest.mark.parametrize(
    ("source", "rendered"),
    [
        ("[[Target]]", "Target"),
        ("[[Target|the alias]]", "the alias"),
        ("[[Target#Heading]]", "Target > Heading"),
        ("[[Target#Heading|alias]]", "alias"),
        ("[[Target#A#B]]", "Target > A > B"),
        ("[[#Local]]", "Local"),
        ("[[Note#^abc123]]", "Note"),
        ("[[folder/Note.md]]", "folder/Note"),
        ("![[Embedded note]]", "Embedded note"),
        ("![[folder/Embedded note]]", "folder/Embedded note"),
        ("![[assets/diagram.png]]", "diagram"),
        ("![[photo.jpg|100]]", "photo"),
        ("![[photo.jpg|640x480]]", "photo"),
        ("![[photo.jpg|A caption]]", "A caption"),
        ("[text](https://example.com)", "text"),
        ("[text](<with space.md> 'title')", "text"),
        ('[wiki](https://en.wikipedia.org/wiki/Foo_(bar) "t")', "wiki"),
        ("![alt text](img.png)", "alt text"),
        ("[[Ünïcödé ✓]]", "Ünïcödé ✓"),
        ("[[]]", ""),
        ("[not a link] and [x] (y)", "[not a link] and [x] (y)"),
    ],
)
def test_render_links(source: str, rendered: str) -> None:
    assert render_links(f"a {source} b") == f"a {rendered} b"


def test_render_links_leaves_code_untouched() -> None:
    text = (
        "`[[code]]` [[Real]] ``[t](u)``\n```\n[[fenced]] [x](y)\n```\n"
        "Get-Item [[-Path] <string[]>]\n"
    )
    assert render_links(text) == (
        "`[[code]]` Real ``[t](u)``\n```\n[[fenced]] [x](y)\n```\nGet-Item [[-Path] <string[]>]\n"
    )


def test_render_links_at_text_start() -> None:
    assert render_links("![[pic.png]] caption") == "pic caption"
    assert render_links("no links at all") == "no links at all"


# --------------------------------------------------------------------------- fences, headings


def test_fence_spans_match_char_and_length() -> None:
    text = "a\n````\n```\nstill in\n````\nb\n~~~\n```\n~~~\nc\n```py\nopen to end"
    spans = fence_spans(text)
    assert [text[s:e] for s, e in spans] == [
        "````\n```\nstill in\n````\n",
        "~~~\n```\n~~~\n",
        "```py\nopen to end",
    ]


def test_backtick_info_string_with_backtick_is_not_a_fence() -> None:
    assert fence_spans("``` not `a fence\n") == []
    indented = "  ```\n  indented\n  ```\n"
    assert fence_spans(indented) == [(0, len(indented))]


def test_headings_rules() -> None:
    text = (
        "# One\n##\tTabbed\n   ### Three spaces\n    #### four spaces is code\n"
        "####### seven\n#hashtag\n## C#\n## Closed ##\n## **Bold** _it_ `code`\n"
        "```\n## fenced\n```\n##\n"
    )
    found = [(h.level, h.text) for h in headings(text)]
    assert found == [
        (1, "One"),
        (2, "Tabbed"),
        (3, "Three spaces"),
        (2, "C#"),
        (2, "Closed"),
        (2, "Bold it code"),
    ]
    assert all(text[h.start] in " #" for h in headings(text))


def test_clean_heading_keeps_snake_case() -> None:
    assert clean_heading("**See also:**") == "See also:"
    assert clean_heading("use snake_case_name  here") == "use snake_case_name here"
    assert clean_heading("~~old~~ ==new==") == "old new"


# --------------------------------------------------------------------------- robustness

_MARKDOWNISH = st.lists(
    st.sampled_from([*"-\n\r\t :#`~%[]|!{}&*_=.a1Zé\ufeff", "---\n", "```", "%%", "## "]),
    max_size=150,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_MARKDOWNISH)
def test_any_text_parses_and_chunks_without_raising(text: str) -> None:
    n = parse_note(text, path="fuzz/Case.md")
    json.dumps(n.frontmatter, allow_nan=False)
    assert "\r" not in n.body
    assert all(tag and not tag.startswith("#") for tag in n.tags)
    out = chunk_note(n)
    assert [c.position for c in out] == list(range(len(out)))
