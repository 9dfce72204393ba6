"""The note view (``search/grouping.py``) through the real engine on a small real vault: a
note with several matching sections appears once, with them, and ranks by them; ``k`` counts
notes, drawn from the whole fused list; a weak extra section and a fourth one stay out;
filters, ``max_tokens`` and the signals keep working; a document's sections keep their rows;
the JSON shape reads back; the terminal shows a note with its sections indented. The grouping
rule itself is checked on fused lists written out by hand."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator, Mapping, Sequence

import pytest

from conftest import run_cli
from vaultseek import Index, NoteResult, SearchResponse, open_index
from vaultseek.search.budget import result_tokens
from vaultseek.search.fusion import Fused
from vaultseek.search.grouping import (
    FURTHER_SHARE,
    MAX_SECTIONS,
    PAGE,
    SCORED,
    SECTION_SHARE,
    group_notes,
    note_order,
    note_score,
    notes_depth,
    share_for,
)

FLOWERS = ("tulips", "lavender", "peonies", "dahlias", "lilies", "clematis", "hostas", "ferns", "irises", "daisies", "poppies")
NOTES = {
    "garden/roses.md": """
        ---
        title: Growing roses
        tags: [garden]
        ---
        # Growing roses

        ## Pruning roses

        Prune roses in early spring, just as the buds swell. Cut rose canes back to an
        outward-facing bud and remove dead rose wood, so the roses grow open in the middle.

        ## Feeding roses

        Feed roses with a rose fertiliser in spring and again after the first flush of rose
        flowers. Roses are hungry plants: mulch the roses with compost every year.

        ## The shed

        The shed holds the spades, the forks, the hoses, the wheelbarrow and the ladder. Its roof
        was mended last autumn with new felt and the gutter was cleared of leaves. The window
        sticks in wet weather; a little candle wax on the runners helps. Seed trays are stacked on
        the left shelf, pots by size on the right. A calendar by the door says when the hedges
        were last cut, when the lawn was fed and when the pond pump was cleaned. Twine, labels
        and the pencil that always goes missing live in the tin on the bench. Somebody once left
        roses there to dry.
        """,
    "garden/handbook.md": """
        ---
        aliases: [rose care]
        ---
        # Rose handbook

        ## Roses in pots

        Roses in pots need a deep pot, rich compost and daily water in summer; pot roses dry
        out fast.

        ## Climbing roses

        Tie climbing roses to wires, training the rose canes sideways so the roses flower all
        along them.

        ## Rose diseases

        Black spot and mildew are the rose diseases to watch: clear fallen rose leaves and spray
        roses early.

        ## Roses for shade

        A few roses cope with shade: pick shade-tolerant roses and feed the roses well.

        ## Rose hips

        Leave the last roses unpruned and the roses set hips that birds eat in winter.
        """,
    "kitchen/rosehip-jam.md": """
        # Rose hip jam

        ## Picking

        Pick the hips of wild roses after the first frost; roses from the garden work too.
        """,
    **{
        f"garden/{name}.md": f"# {name.title()}\n\n## Care\n\n{name.title()} like sun and well-drained soil; they grow well beside roses in a mixed border.\n"
        for name in FLOWERS
    },
}


@pytest.fixture(scope="module")
def garden(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    vault = tmp_path_factory.mktemp("garden") / "vault"
    for rel, text in NOTES.items():
        target = vault / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    rows = "\n".join(f"{n},widget-{n},{n * 3}" for n in range(1, 61))
    (vault / "inventory.csv").write_text(f"id,part,stock\n{rows}\n", "utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VAULTSEEK_DEEP_TIER", "false")
        with open_index(vault, db=vault.parent / "index.db", create=True) as index:
            index.sync()
            yield index


def paths(results: Sequence[object]) -> list[str]:
    return [r.path for r in results]  # type: ignore[attr-defined]


def sections(note: NoteResult) -> list[str]:
    return [s.section for s in note.sections]


def test_a_note_with_several_matching_sections_appears_once_with_them(garden: Index) -> None:
    chunks = garden.search("roses", view="chunks", k=4)
    assert chunks.view == "chunks" and not chunks.notes
    assert len(set(paths(chunks.results))) < 4  # the chunk view gives one note several places
    found = garden.search("roses", k=4)
    assert found.view == "notes" and len(found.notes) == 4
    assert len(set(paths(found.notes))) == 4
    by_path = {note.path: note for note in found.notes}
    assert set(sections(by_path["garden/roses.md"])) == {"Pruning roses", "Feeding roses"}
    for note in found.notes:
        assert note.best == note.sections[0] and note.score >= note.best.score
        assert [s.score for s in note.sections] == sorted((s.score for s in note.sections), reverse=True)
        assert all(s.path == note.path for s in note.sections)
    # results: each note's best section, in the notes' order
    assert [r.chunk_id for r in found.results] == [note.best.chunk_id for note in found.notes]
    assert by_path["garden/roses.md"].title == "Growing roses"  # the frontmatter title
    assert by_path["garden/handbook.md"].title == "handbook"  # none: the file's name


def test_k_counts_notes_drawn_from_the_whole_fused_list(garden: Index) -> None:
    everything = garden.search("roses", view="chunks", k=100).results
    first_seen = list(dict.fromkeys(paths(everything)))
    assert len(first_seen) >= 12 and len(everything) > len(first_seen)
    by_notes = note_order((r.path, r.score, r.signals.get("title", 0.0) > 0) for r in everything)
    assert sorted(by_notes) == sorted(first_seen)
    for k in (1, 3, 12):
        notes = garden.search("roses", k=k).notes
        assert paths(notes) == by_notes[:k]  # ranked by each note's best chunks
        assert [n.score for n in notes] == sorted((n.score for n in notes), reverse=True)
    assert paths(garden.search("roses", view="chunks", k=3).results) != by_notes[:3]


def test_a_weak_section_and_a_fourth_one_stay_out(garden: Index) -> None:
    ranked = garden.search("roses", view="chunks", k=100).results
    shed = next(i for i, r in enumerate(ranked) if r.section == "The shed")
    tenth_note = [i for i, r in enumerate(ranked) if r.path not in paths(ranked[:i])][PAGE - 1]
    assert shed > tenth_note  # the premise: weaker than the best section of the tenth note
    notes = {note.path: note for note in garden.search("roses", k=20).notes}
    assert "The shed" not in sections(notes["garden/roses.md"])
    handbook = [r.section for r in ranked if r.path == "garden/handbook.md"]
    assert len(handbook) == 5 and sections(notes["garden/handbook.md"]) == handbook[:MAX_SECTIONS]


def test_filters_narrow_the_notes(garden: Index) -> None:
    kitchen = garden.search("roses", filters={"folders": ["kitchen"]})
    assert paths(kitchen.notes) == ["kitchen/rosehip-jam.md"]
    tagged = garden.search("roses", filters={"tags": ["garden"]})
    assert paths(tagged.notes) == ["garden/roses.md"]
    # One note in the scope, so no tenth note to rank above: the shed's one "roses" still falls
    # short of half the note's best section.
    assert set(sections(tagged.notes[0])) == {"Feeding roses", "Pruning roses"}


def test_a_token_budget_keeps_a_head_of_the_notes(garden: Index) -> None:
    full = garden.search("roses", k=6).notes
    budget = sum(result_tokens(s) for s in full[0].sections) + 6  # the first note and its title
    fitted = garden.search("roses", k=6, max_tokens=budget).notes
    assert paths(fitted) == paths(full[:1]) and sections(fitted[0]) == sections(full[0])
    some = garden.search("roses", k=6, max_tokens=budget + result_tokens(full[1].best) + 4).notes
    assert paths(some) == paths(full[:2]) and len(some[1].sections) == 1
    tiny = garden.search("roses", k=6, max_tokens=5).notes  # the best section is kept, its snippet cut
    assert len(tiny) == 1 and len(tiny[0].sections) == 1 and len(tiny[0].best.snippet) < len(full[0].best.snippet)


def test_signals_work_on_the_notes(garden: Index) -> None:
    named = garden.search("rose care", title_match=True).notes
    assert named[0].path == "garden/handbook.md" and "title" in named[0].best.signals
    unnamed = garden.search("rose care", title_match=False).notes
    assert not any("title" in s.signals for note in unnamed for s in note.sections)
    recent = garden.search("roses", recency_half_life_days=30).notes
    assert all("recency" in s.signals for note in recent for s in note.sections)


def test_a_documents_sections_keep_their_rows(garden: Index) -> None:
    found = garden.search("widget", mode="bm25", k=3)
    inventory = next(note for note in found.notes if note.path == "inventory.csv")
    assert len(inventory.sections) > 1
    assert all(s.location is not None and s.location.row_start for s in inventory.sections)
    assert inventory.best.label.startswith("rows ")


def test_the_json_shape_reads_back(garden: Index) -> None:
    response = garden.search("roses", k=3)
    body = response.to_dict()
    assert list(body) == [
        "query", "mode", "view", "results", "notices", "intent", "no_match", "parsed", "reranking", "expansion", "alternatives",
    ]  # fmt: skip
    assert body["view"] == "notes"
    note = body["results"][0]
    assert list(note) == ["path", "title", "score", "relevance", "sections"]
    assert note["score"] >= note["sections"][0]["score"]  # the note's: its best sections together
    assert set(note["sections"][0]) >= {"path", "section", "label", "snippet", "chunk_id", "location"}
    again = SearchResponse.from_dict(json.loads(json.dumps(body)))
    assert again.to_dict() == body and again.notes[0].best == again.results[0]
    chunks = garden.search("roses", view="chunks", k=3).to_dict()
    assert chunks["view"] == "chunks" and "sections" not in chunks["results"][0]
    old = {key: value for key, value in chunks.items() if key != "view"}  # an answer from before views
    assert SearchResponse.from_dict(old).view == "chunks"


def test_the_terminal_shows_a_note_and_its_sections(garden: Index) -> None:
    vault = ["--vault", str(garden.vault), "--db", str(garden.db_path), "--no-daemon"]
    shown = run_cli("search", "roses", "-k", "2", *vault)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    numbered = [line for line in lines if not line.startswith("    ")]
    assert [line[:4] for line in numbered] == [" 1. ", " 2. "]  # one number a note
    assert numbered[0].startswith(" 1. garden/roses.md — Growing roses  ")
    first = lines[1 : lines.index(numbered[1])]
    labels = [line.strip().split("  ")[0] for line in first[0::2]]
    assert sorted(labels) == ["› Feeding roses", "› Pruning roses"]
    assert all(line.startswith("    › ") for line in first[0::2])
    assert all(line.startswith("      ") and line.strip() for line in first[1::2])  # each snippet under its label
    verbose = run_cli("search", "roses", "-k", "2", "-v", *vault)
    note = garden.search("roses", k=2).notes[0]
    assert note.score > note.best.score  # its second section counts: the line says what it ranks by
    assert verbose.stdout.splitlines()[0].endswith(f"score {note.score:.4f}")
    chunked = run_cli("search", "roses", "-k", "2", "--view", "chunks", *vault)
    assert chunked.returncode == 0, chunked.stderr
    assert [line[:4] for line in chunked.stdout.splitlines() if not line.startswith("    ")] == [" 1. ", " 2. "]
    assert "›" in chunked.stdout.splitlines()[0]  # a section: path › heading, on the numbered line


# -- the rule on hand-written fused lists ------------------------------------------------------
def fused(*files: str) -> tuple[list[Fused], dict[int, str]]:
    """A fused list whose n-th item (id n) is a chunk of ``files[n]``, scores falling."""
    return [Fused(n, 1.0 - n / 100, {"bm25": n + 1}) for n in range(len(files))], dict(enumerate(files))


def reader(owners: Mapping[int, str], asked: list[int] | None = None):  # type: ignore[no-untyped-def]
    def paths_of(ids: Sequence[int]) -> Mapping[int, str]:
        if asked is not None:
            asked.append(len(ids))
        return {i: owners[i] for i in ids if i in owners}

    return paths_of


def test_the_rule_on_a_fused_list() -> None:
    files = ["a", "a", "b", "a", "c", "a", "d", "e", "f", "g", "h", "i", "j", "b", "k"]
    items, owners = fused(*files)
    groups = group_notes(items, 3, reader(owners))
    assert [(path, [f.item for f in chunks]) for path, chunks, _score in groups] == [
        ("a", [0, 1, 3]), ("b", [2]), ("c", [4])]  # a's fourth chunk (5) over the cap; b's second (13) after the tenth note (j at 12)
    assert notes_depth(items, 3, reader(owners)) == 5  # the third note starts at position 4
    assert notes_depth(items, 50, reader(owners)) == len(items)


def test_an_extra_section_needs_a_share_of_its_notes_best_score() -> None:
    scores = {0: 0.9, 1: 0.9 * SECTION_SHARE + 0.01, 2: 0.8, 3: 0.9 * SECTION_SHARE - 0.01}
    items = [Fused(i, score, {"bm25": i + 1}) for i, score in scores.items()]
    owners = {0: "a", 1: "a", 2: "b", 3: "a"}
    assert [[f.item for f in group.chunks] for group in group_notes(items, 2, reader(owners))] == [[0, 1], [2]]
    # A title match's bonus names the note, not its best section: the share ignores it.
    titled = [Fused(0, 1.9, {"bm25": 1}, {"title": 1.0}), *items[1:]]
    assert [f.item for f in group_notes(titled, 1, reader(owners))[0][1]] == [0, 1]


def test_a_note_whose_several_sections_match_outranks_one_section_scoring_a_little_more() -> None:
    # a: one section at 1.0; b: three sections just below it. b's further two add a share of
    # theirs; c's three sections are too weak for that share to lift it past a.
    scores = {0: 1.0, 1: 0.95, 2: 0.9, 3: 0.85, 4: 0.7, 5: 0.7, 6: 0.7}
    owners = {0: "a", 1: "b", 2: "b", 3: "b", 4: "c", 5: "c", 6: "c"}
    items = [Fused(i, score, {"bm25": i + 1}) for i, score in scores.items()]
    groups = group_notes(items, 3, reader(owners))
    assert [group.path for group in groups] == ["b", "a", "c"]
    assert groups[0].score == pytest.approx(0.95 + 0.9 * FURTHER_SHARE + 0.85 * FURTHER_SHARE**2)
    assert groups[1].score == 1.0 and groups[2].score < 1.0
    assert notes_depth(items, 2, reader(owners)) == 2  # a's and b's best chunks: positions 0 and 1
    # RRF's close scores and a single list's rank notes by their best section
    assert share_for("hybrid", "convex") == FURTHER_SHARE
    assert share_for("hybrid", "rrf") == share_for("bm25", None) == share_for("deep", None) == 0.0
    assert [group.path for group in group_notes(items, 3, reader(owners), 0.0)] == ["a", "b", "c"]
    # only the next two sections count, and one scoring below zero adds nothing
    assert note_score([1.0, 0.5, 0.5, 0.5]) == note_score([1.0, 0.5, 0.5]) > note_score([1.0, 0.5])
    assert note_score([1.0, -0.5]) == 1.0
    # a note the query names (the title match lifted its best chunk) stays first
    titled = [Fused(0, 1.0, {"bm25": 1}, {"title": 0.1}), *items[1:]]
    assert [group.path for group in group_notes(titled, 3, reader(owners))] == ["a", "b", "c"]
    # ties keep the order in which the list first meets each note
    assert note_order([("x", 0.5, False), ("y", 0.5, False)]) == ["x", "y"]


def test_a_deleted_chunk_is_skipped_and_the_list_is_read_as_deep_as_the_notes_need() -> None:
    items, owners = fused(*[f"n{i}" for i in range(300)])
    del owners[0]
    asked: list[int] = []
    groups = group_notes(items, 2, reader(owners, asked))
    assert [path for path, _chunks, _score in groups] == ["n1", "n2"]
    assert asked == [SCORED]  # the chunks whose sections count hold enough notes: one query
    # three notes fill the first SCORED chunks: the rest is read for the others
    few = [Fused(n, 1.0 - n / 1000, {"bm25": n + 1}) for n in range(300)]
    owners = {n: f"note{min(n % 3, n)}" if n < SCORED else f"late{n}" for n in range(300)}
    asked.clear()
    groups = group_notes(few, 5, reader(owners, asked))
    assert [g.path for g in groups][:3] == ["note0", "note1", "note2"] and len(groups) == 5
    assert sum(asked) == len(few)


def test_a_searchs_paths_are_read_once() -> None:
    from vaultseek.search.grouping import PathCache

    owners = {1: "a", 2: "b"}
    asked: list[int] = []
    paths_of = PathCache(reader(owners, asked))
    assert paths_of([1, 2, 3]) == {1: "a", 2: "b"}  # 3 was deleted: left out
    assert paths_of([2, 1, 3]) == {2: "b", 1: "a"}
    assert asked == [3]  # one read of three ids; the second call read nothing


def test_an_empty_list_has_no_notes() -> None:
    assert group_notes([], 10, reader({})) == [] and notes_depth([], 3, reader({})) == 0


def test_the_evaluation_ranks_notes_as_the_note_view_does(garden: Index) -> None:
    """``vaultseek eval`` ranks a chunk list's documents with ``note_order``: the figures it
    gives are the note view's only if both agree."""
    for query in ("roses", "pruning", "compost in spring", "growing roses", "jam"):
        ranked = garden.search(query, view="chunks", k=100).results
        shown = garden.search(query, k=10).notes
        order = note_order(((r.path, r.score, r.signals.get("title", 0.0) > 0) for r in ranked), share_for("hybrid", "convex"))
        assert paths(shown) == order[: len(shown)], query
