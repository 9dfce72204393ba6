"""Chunking: section splitting, size fallbacks, fences kept whole, skipped sections, context."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SHARED_DATA
from vaultseek.notes.chunking import MAX_CHUNK_CHARS, MAX_FENCED_CHARS, MIN_CHUNK_CHARS, chunk_note
from vaultseek.notes.markdown import fence_spans, parse_note
from vaultseek.records import ChunkDraft, Note

POWERSHELL_DOCS = SHARED_DATA / "powershell-docs" / "reference"


def chunks(text: str, path: str = "notes/Topic.md") -> list[ChunkDraft]:
    return chunk_note(parse_note(text, path=path))


def para(label: str, size: int) -> str:
    """A paragraph of about ``size`` characters made of distinct words."""
    words: list[str] = []
    length = 0
    i = 0
    while length < size:
        word = f"{label}{i}"
        words.append(word)
        length += len(word) + 1
        i += 1
    return " ".join(words)


# --------------------------------------------------------------------------- basics


@pytest.mark.parametrize(
    "text", ["", "   \n\n\t\n", "---\ntitle: x\n---\n", "%% only a comment %%"]
)
def test_empty_notes_give_no_chunks(text: str) -> None:
    assert chunks(text) == []


def test_sections_split_at_level_two_with_heading_line_included() -> None:
    out = chunks(
        "# Topic\n\nIntro paragraph that is long enough to keep.\n\n"
        "## Setup\n\nInstall the package and configure the vault path.\n\n"
        "## Usage\n\nRun the search command with a query string.\n"
    )
    assert [c.section for c in out] == ["Topic", "Setup", "Usage"]
    assert [c.position for c in out] == [0, 1, 2]
    assert out[0].text.startswith("# Topic\n\nIntro")
    assert out[1].text == "## Setup\n\nInstall the package and configure the vault path."
    assert out[2].text.startswith("## Usage\n")


def test_preamble_without_h1_has_empty_section() -> None:
    out = chunks("Some opening words before any heading at all.\n\n## Next\n\n" + para("w", 60))
    assert out[0].section == ""
    assert out[0].heading_context == "Topic | Topic"


def test_later_h1_starts_a_section() -> None:
    out = chunks(
        "# First\n\n" + para("a", 50) + "\n\n# Second part\n\n" + para("b", 50) + "\n"
    )
    assert [c.section for c in out] == ["First", "Second part"]
    assert out[1].heading_context == "Topic | Topic > Second part"


# --------------------------------------------------------------------------- heading_context


def test_heading_context_with_type_and_tags() -> None:
    text = (
        "---\ntitle: Auth flow\ntype: decision\ntags: [security, oauth]\n---\n"
        "Preamble text long enough to be kept as chunk.\n\n## Tokens\n\n" + para("t", 50)
    )
    out = chunks(text)
    assert out[0].heading_context == "Auth flow | decision | security, oauth | Auth flow"
    assert out[1].heading_context == "Auth flow | decision | security, oauth | Auth flow > Tokens"


def test_heading_context_without_type_or_tags() -> None:
    out = chunks("---\ntags: [a, b]\n---\n## S\n\n" + para("x", 50))
    assert out[0].heading_context == "Topic | a, b | Topic > S"
    assert chunks("## S\n\n" + para("x", 50))[0].heading_context == "Topic | Topic > S"


def test_heading_context_lists_at_most_eight_tags() -> None:
    tags = ", ".join(f"t{i}" for i in range(12))
    out = chunks(f"---\ntags: [{tags}]\n---\n" + para("x", 50))
    assert out[0].heading_context == "Topic | t0, t1, t2, t3, t4, t5, t6, t7 | Topic"


def test_chunk_note_accepts_a_hand_built_note() -> None:
    n = Note(title="Hand", body="## Part\r\n\r\n" + para("h", 40), type="howto")
    out = chunk_note(n)
    assert out[0].heading_context == "Hand | howto | Hand > Part"
    assert "\r" not in out[0].text


# --------------------------------------------------------------------------- size fallbacks


def test_small_section_is_not_split_at_level_three() -> None:
    out = chunks("## Big\n\n" + para("a", 200) + "\n\n### Small sub\n\n" + para("b", 200))
    assert len(out) == 1
    assert out[0].section == "Big"
    assert "### Small sub" in out[0].text


def test_long_section_splits_at_level_three() -> None:
    out = chunks(
        "## Big\n\nIntro words for the big section.\n\n"
        "### First sub\n\n" + para("a", 1200) + "\n\n### Second sub\n\n" + para("b", 1200)
    )
    assert [c.section for c in out] == ["Big", "First sub", "Second sub"]
    assert [c.heading_context for c in out] == [
        "Topic | Topic > Big",
        "Topic | Topic > Big > First sub",
        "Topic | Topic > Big > Second sub",
    ]
    assert out[1].text.startswith("### First sub\n")


def test_long_section_without_subheadings_packs_paragraphs() -> None:
    paragraphs = [para(f"p{i}x", 700) for i in range(6)]
    out = chunks("## Long\n\n" + "\n\n".join(paragraphs))
    assert len(out) > 1
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in out)
    assert all(c.section == "Long" for c in out)
    assert out[0].text.startswith("## Long")
    assert not out[1].text.startswith("## Long")
    joined = "\n\n".join(c.text for c in out)
    assert all(p in joined for p in paragraphs)  # no paragraph was cut


def test_note_without_level_two_headings_is_packed() -> None:
    out = chunks("\n\n".join(para(f"q{i}x", 900) for i in range(5)))
    assert len(out) == 3
    assert {c.section for c in out} == {""}
    assert [c.position for c in out] == [0, 1, 2]


def test_long_paragraph_is_split_at_line_breaks_and_a_long_line_at_spaces() -> None:
    lines = [para(f"l{i}x", 300) for i in range(12)]
    out = chunks("## Lines\n\n" + "\n".join(lines))
    assert len(out) > 1 and all(len(c.text) <= MAX_CHUNK_CHARS for c in out)
    one_line = para("z", 5000)
    out = chunks("## One line\n\n" + one_line)
    assert len(out) > 1 and all(len(c.text) <= MAX_CHUNK_CHARS for c in out)
    words = " ".join(c.text for c in out).split()
    assert words[words.index("z0"):] == one_line.split()  # the heading alone is a dropped crumb


def test_a_three_megabyte_single_line_note_gives_bounded_chunks_with_all_its_words() -> None:
    """A line without breaks is cut like any text: as one 3-million-character chunk it would
    cost the deep model ~25 minutes of CPU."""
    one_line = para("w", 3_000_000)
    out = chunks(one_line)
    assert len(out) > 1000
    assert all(MIN_CHUNK_CHARS <= len(c.text) <= MAX_CHUNK_CHARS for c in out)
    assert " ".join(c.text for c in out).split() == one_line.split()


def test_a_line_without_spaces_is_cut_at_the_limit_and_loses_nothing() -> None:
    blob = "".join(f"{i:08x}" for i in range(60_000))  # 480,000 characters, no space
    out = chunks("## Blob\n\n" + blob + "x" * 5)
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in out)
    assert "".join(c.text for c in out) == blob + "x" * 5  # the heading alone is a dropped crumb


def test_an_enormous_fenced_block_is_cut_at_the_hard_bound() -> None:
    code = "```\n" + "\n".join(f"line_{i} = {i}" for i in range(20_000)) + "\n```"
    out = chunks("## Code\n\n" + code)
    assert len(out) > 1 and all(len(c.text) <= MAX_FENCED_CHARS for c in out)
    assert sum(f"line_{i} = {i}\n" in c.text + "\n" for c in out for i in (0, 9_999, 19_999)) == 3


def test_fenced_block_is_never_split() -> None:
    code = "```python\n" + "\n\n".join(f"x_{i} = {i}  # filler text" for i in range(200)) + "\n```"
    before = "## Code\n\nBefore the block, some words.\n\n"
    out = chunks(before + code + "\n\nAfter the block words.")
    holding = [c for c in out if "x_0 =" in c.text]
    assert len(holding) == 1 and code in holding[0].text
    assert len(holding[0].text) > MAX_CHUNK_CHARS


def test_heading_inside_fence_is_not_a_section() -> None:
    out = chunks(
        "## Real\n\nText before the example block.\n\n~~~~markdown\n## Fake heading\n"
        "```\n## also fake\n```\n~~~~\n"
    )
    assert [c.section for c in out] == ["Real"]
    assert "## Fake heading" in out[0].text


def test_unclosed_fence_runs_to_the_end() -> None:
    out = chunks("## A\n\nSome words to keep here.\n\n```\ncode\n## not a section\n" + "x\n" * 10)
    assert len(out) == 1
    assert out[0].text.endswith("x")


def test_short_pieces_are_dropped() -> None:
    out = chunks("# T\n\n## Empty\n\n## Tiny\n\nok\n\n## Kept\n\n" + para("k", 40))
    assert [c.section for c in out] == ["Kept"]
    assert out[0].position == 0
    assert all(len(c.text.strip()) >= MIN_CHUNK_CHARS for c in out)


# --------------------------------------------------------------------------- skipped sections


@pytest.mark.parametrize(
    "heading",
    ["Related", "See Also", "**See also:**", "  links  ", "_References_", "REFERENCES:"],
)
def test_link_list_sections_are_skipped(heading: str) -> None:
    out = chunks(
        "## Body\n\n" + para("b", 50) + f"\n\n## {heading}\n\n- [[One]]\n- [[Two]] with more words"
        "\n\n### Sub of skipped\n\n" + para("s", 50) + "\n\n## After\n\n" + para("a", 50)
    )
    assert [c.section for c in out] == ["Body", "After"]


def test_skipped_subsection_is_removed_from_its_section() -> None:
    out = chunks(
        "## Body\n\n" + para("b", 50) + "\n\n### See also\n\n- [[Elsewhere]] lots of words\n\n"
        "### Details\n\n" + para("d", 50)
    )
    assert len(out) == 1
    assert "Elsewhere" not in out[0].text and "### Details" in out[0].text


def test_similar_names_are_not_skipped() -> None:
    out = chunks("## Related work\n\n" + para("r", 50) + "\n\n## Linkage\n\n" + para("l", 50))
    assert [c.section for c in out] == ["Related work", "Linkage"]


# --------------------------------------------------------------------------- readable text


def test_chunk_text_has_links_rendered_and_comments_removed() -> None:
    out = chunks(
        "## See [[Target|the target]]\n\nRead [[Guide#Install]] and [docs](http://x.y) "
        "%% secret note %% then ![[chart.png|200]] trailing   \n\n"
    )
    assert out[0].section == "See the target"
    assert out[0].text == (
        "## See the target\n\nRead Guide > Install and docs  then chart trailing"
    )


def test_crlf_bom_and_tabs_chunk_like_lf() -> None:
    lf = "## Tab\theading\n\n" + para("c", 60) + "\n\n##\tSecond\n\n" + para("d", 60) + "\n"
    crlf = "\ufeff" + lf.replace("\n", "\r\n")
    assert chunks(crlf) == chunks(lf)
    assert [c.section for c in chunks(lf)] == ["Tab heading", "Second"]


# --------------------------------------------------------------------------- fence property

_WORDS = st.text(alphabet="abcdefghij ", min_size=0, max_size=40)


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    """A document of headings, paragraphs and fences; returns text, fence blocks, line markers."""
    blocks: list[str] = []
    fences: list[str] = []
    markers: list[str] = []
    count = draw(st.integers(min_value=1, max_value=25))
    for i in range(count):
        kind = draw(st.sampled_from(["heading", "para", "para", "fence", "fence"]))
        if kind == "heading":
            level = draw(st.integers(min_value=1, max_value=4))
            blocks.append("#" * level + f" Head {i}")
        elif kind == "para":
            lines = []
            for j in range(draw(st.integers(min_value=1, max_value=12))):
                marker = f"line-marker-{i}-{j}-"
                markers.append(marker)
                filler = draw(_WORDS) * draw(st.integers(min_value=1, max_value=5))
                lines.append(f"{marker}long enough text {filler}")
            blocks.append("\n".join(lines))
        else:
            char = draw(st.sampled_from("`~"))
            size = draw(st.integers(min_value=3, max_value=5))
            body = [f"fence-marker-{i} payload line"]
            for _ in range(draw(st.integers(min_value=0, max_value=30))):
                body.append(
                    draw(
                        st.sampled_from(
                            [
                                "## looks like a heading",
                                "",
                                "### another fake",
                                char * (size - 1),
                                ("~" if char == "`" else "`") * size,
                                "plain code line with some length to it",
                                "x" * 150,
                            ]
                        )
                    )
                )
            closing = char * draw(st.integers(min_value=size, max_value=size + 2))
            block = "\n".join([char * size + "lang", *body, closing])
            blocks.append(block)
            fences.append(block)
    separators = [draw(st.sampled_from(["\n\n", "\n", "\n\n\n"])) for _ in blocks]
    text = "".join(b + s for b, s in zip(blocks, separators, strict=True))
    return text, fences, markers


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_every_fenced_block_lands_whole_in_one_chunk(doc: tuple[str, list[str], list[str]]) -> None:
    text, fences, markers = doc
    out = chunks(text)
    assert [c.position for c in out] == list(range(len(out)))
    for block in fences:
        marker = block.split("\n", 2)[1]
        holders = [c for c in out if marker + "\n" in c.text or c.text.endswith(marker)]
        assert len(holders) == 1, marker
        assert block in holders[0].text
    for marker in markers:
        assert sum(marker in c.text for c in out) == 1, marker
    for c in out:
        assert len(c.text) <= MAX_CHUNK_CHARS or "fence-marker" in c.text
        # Every fence that opens in a chunk also closes in it (the generator closes them all).
        for start, end in fence_spans(c.text):
            lines = c.text[start:end].rstrip("\n").split("\n")
            opening, closing = lines[0].strip(), lines[-1].strip()
            assert len(lines) >= 2 and set(closing) == {opening[0]}
            assert len(closing) >= len(opening) - len("lang")


# --------------------------------------------------------------------------- real documents

REAL_FILES = [
    "7.4/Microsoft.PowerShell.Management/Get-ChildItem.md",
    "7.5/Microsoft.PowerShell.Host/Start-Transcript.md",
    "7.5/CimCmdlets/New-CimSession.md",
    "7.4/Microsoft.PowerShell.Core/ForEach-Object.md",
]


@pytest.mark.skipif(not POWERSHELL_DOCS.is_dir(), reason=f"{POWERSHELL_DOCS} is not present")
@pytest.mark.parametrize("relative", REAL_FILES)
def test_real_powershell_reference_docs(relative: str) -> None:
    path = POWERSHELL_DOCS / relative
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    out = chunks(path.read_text(encoding="utf-8"), path=relative)
    title = Path(relative).stem
    assert out, "a reference page gives chunks"
    assert [c.position for c in out] == list(range(len(out)))
    assert any(c.section == "SYNOPSIS" for c in out)
    assert any(" > EXAMPLES" in c.heading_context for c in out)
    for c in out:
        assert c.heading_context.startswith(title)
        longest_line = max(len(line) for line in c.text.split("\n"))
        assert (
            len(c.text) <= MAX_CHUNK_CHARS or "```" in c.text or longest_line > MAX_CHUNK_CHARS
        ), (c.section, len(c.text))
        fence_lines = [line for line in c.text.split("\n") if line.lstrip().startswith("```")]
        assert len(fence_lines) % 2 == 0, c.section


@pytest.mark.skipif(not POWERSHELL_DOCS.is_dir(), reason=f"{POWERSHELL_DOCS} is not present")
def test_a_whole_reference_version_parses_and_chunks() -> None:
    folder = POWERSHELL_DOCS / "7.4"
    files = sorted(folder.rglob("*.md"))
    if not files:
        pytest.skip(f"no markdown files under {folder}")
    total = 0
    for path in files:
        out = chunks(path.read_text(encoding="utf-8"), path=path.relative_to(folder).as_posix())
        total += len(out)
        assert all(len(c.text.strip()) >= MIN_CHUNK_CHARS for c in out)
    assert total > len(files)


def test_opening_h1_that_differs_from_the_file_name_joins_the_breadcrumb() -> None:
    note = parse_note("# Sourdough\n\n## Feeding the starter\n\n" + "Feed it flour and water daily. " * 3, path="cooking/bread.md")
    [chunk] = chunk_note(note)
    assert chunk.heading_context == "bread | bread > Sourdough > Feeding the starter"


def test_a_short_note_is_kept_whole() -> None:
    [chunk] = chunk_note(parse_note("Call Bob about the invoice.", path="inbox/todo.md"))
    assert chunk.text == "Call Bob about the invoice."
    assert chunk.heading_context == "todo | todo"
    assert chunk_note(parse_note("  \n\n ", path="empty.md")) == []
