"""The vault map (``vaultseek map``): clusters that follow the vault's topics and are named by
their words, missing links that are really unlinked, a kept map that moves only the notes that
changed, scoped maps, pictures, and clear errors — on real indexes and the real bundled model."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from conftest import run_cli
from vaultseek import open_index
from vaultseek.engine import Index
from vaultseek.errors import MapUnavailableError, NotFoundError, QueryError
from vaultseek.reports import MapRequest
from vaultseek.vaultmap.features import nearest, unit_rows

TOPICS = {
    "cooking": [
        ("sourdough", "Feed the sourdough starter with flour and water; knead the dough and bake the bread loaf in a hot oven."),
        ("pasta", "Boil the pasta in salted water, then toss the noodles with garlic, olive oil and grated parmesan cheese."),
        ("soup", "Simmer onions, carrots and celery for the soup stock; season the broth with salt, pepper and herbs."),
        ("pancakes", "Whisk flour, eggs and milk into a batter and fry the pancakes in butter until golden brown."),
        ("curry", "Fry the onions with ginger, garlic and curry spices, add coconut milk and simmer the vegetables."),
        ("salad", "Chop lettuce, tomatoes and cucumber; dress the salad with olive oil, lemon juice and salt."),
        ("roast", "Roast the chicken in the oven with potatoes, rosemary and garlic; baste it with butter."),
        ("cookies", "Cream butter and sugar, fold in flour and chocolate chips, and bake the cookies on a tray."),
    ],
    "astronomy": [
        ("telescope", "Point the telescope at Jupiter and its moons; a refractor lens shows the planet's cloud bands."),
        ("nebula", "The Orion nebula is a cloud of gas and dust where new stars form, visible through binoculars."),
        ("eclipse", "A solar eclipse happens when the Moon passes between the Sun and Earth and blocks the sunlight."),
        ("galaxies", "The Andromeda galaxy holds a trillion stars; galaxies collide and merge over billions of years."),
        ("comets", "Comets are icy bodies whose tails of gas and dust point away from the Sun as they orbit."),
        ("mars", "Mars is a red planet with dust storms, polar ice caps and the tallest volcano in the solar system."),
        ("starcharts", "Star charts map the constellations; find the pole star from the Big Dipper in the night sky."),
        ("meteors", "Meteor showers like the Perseids happen when Earth crosses the debris trail of a comet."),
    ],
    "networking": [
        ("dns", "DNS resolves host names to IP addresses; a resolver queries the root and authoritative name servers."),
        ("tcp", "TCP opens a connection with a three-way handshake and retransmits lost packets over the network."),
        ("firewall", "The firewall blocks inbound ports except 22 and 443; iptables rules filter network packets."),
        ("dhcp", "The DHCP server leases IP addresses, the gateway and DNS servers to hosts on the local network."),
        ("vpn", "A VPN tunnel encrypts network traffic between the laptop and the office router over the internet."),
        ("routing", "Routers forward IP packets along routes learned by BGP and OSPF between networks and subnets."),
        ("http", "HTTP requests travel over TCP port 80; TLS on port 443 encrypts the web server's responses."),
        ("subnets", "Split the 10.0.0.0/16 network into /24 subnets and give each VLAN its own IP address range."),
    ],
}


@pytest.fixture
def topic_vault(vault: Path) -> Path:
    for topic, notes in TOPICS.items():
        for name, text in notes:
            note = vault / topic / f"{name}.md"
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(f"# {name.title()}\n\n{text}\n", encoding="utf-8")
    # Linked pairs, which must never come back as missing links.
    (vault / "cooking" / "pasta.md").write_text(
        "# Pasta\n\nBoil the pasta in salted water, then toss the noodles with garlic, olive oil and grated "
        "parmesan cheese. Serve it with the [[salad]].\n",
        encoding="utf-8",
    )
    return vault


def _indexed(vault: Path) -> Index:
    index = open_index(vault, create=True)
    index.sync(remember=False)
    return index


def _topic(path: str) -> str:
    return path.split("/", 1)[0]


def test_clusters_follow_the_topics_and_are_named_by_their_words(topic_vault: Path) -> None:
    with _indexed(topic_vault) as index:
        found = index.vault_map(MapRequest(clusters=3))
    assert found.how == "built" and len(found.notes) == 24 and len(found.clusters) == 3
    assert all(0.0 <= n.x <= 1.0 and 0.0 <= n.y <= 1.0 for n in found.notes)
    by_cluster: dict[int, list[str]] = {}
    for note in found.notes:
        by_cluster.setdefault(note.cluster, []).append(_topic(note.path))
    purity = sum(max(topics.count(t) for t in set(topics)) for topics in by_cluster.values()) / 24
    assert purity >= 0.9, by_cluster
    for cluster in found.clusters:
        topic = max(set(by_cluster[cluster.id]), key=by_cluster[cluster.id].count)
        assert all(_topic(p) == topic for p in cluster.central)
        assert cluster.words and cluster.label.startswith(cluster.words[0])
    named = {max(set(by_cluster[c.id]), key=by_cluster[c.id].count): set(c.words) for c in found.clusters}
    assert named["networking"] & {"network", "packets", "port", "dns", "tcp", "addresses", "servers"}
    assert named["astronomy"] & {"sun", "stars", "planet", "dust", "comet", "earth", "gas", "solar"}


def test_notes_of_one_topic_lie_closer_together_than_notes_of_two(topic_vault: Path) -> None:
    with _indexed(topic_vault) as index:
        notes = index.vault_map().notes
    same, other = [], []
    for a in notes:
        for b in notes:
            if a.path < b.path:
                gap = ((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5
                (same if _topic(a.path) == _topic(b.path) else other).append(gap)
    assert sum(same) / len(same) < 0.6 * sum(other) / len(other)


def test_missing_links_are_close_unlinked_pairs_with_their_passages(topic_vault: Path) -> None:
    with _indexed(topic_vault) as index:
        found = index.vault_map(limit=200)
    pairs = {frozenset((m.source, m.target)) for m in found.missing_links}
    assert pairs and frozenset(("cooking/pasta.md", "cooking/salad.md")) not in pairs
    same_topic = sum(1 for m in found.missing_links if _topic(m.source) == _topic(m.target))
    assert same_topic / len(found.missing_links) >= 0.8
    best = found.missing_links[0]
    assert best.similarity >= found.missing_links[-1].similarity
    assert best.source_passage is not None and best.target_passage is not None
    assert best.link == f"[[{Path(best.target).stem}]]"
    assert best.source_passage.text and best.target_passage.text


def test_a_note_on_the_map_knows_its_neighbours_and_which_are_linked(topic_vault: Path) -> None:
    with _indexed(topic_vault) as index:
        note = index.map_note("pasta", k=23)
        assert note.path == "cooking/pasta.md" and len(note.neighbours) == 23
        assert [n.similarity for n in note.neighbours] == sorted((n.similarity for n in note.neighbours), reverse=True)
        assert {n.path for n in note.neighbours if n.linked} == {"cooking/salad.md"}
        # Every note is somebody's nearest; only the alike (or linked) are close.
        assert all(n.close for n in note.neighbours if n.linked)
        assert all(n.close is False for n in note.neighbours if _topic(n.path) != "cooking")
        assert all(m.target != "cooking/salad.md" for m in note.missing_links)
        assert _topic(note.neighbours[0].path) == "cooking"
        with pytest.raises(NotFoundError):
            index.map_note("no-such-note")
        with pytest.raises(QueryError):
            index.map_note("pasta", k=0)


def test_an_edit_moves_only_the_edited_note_and_the_map_is_kept_between_calls(topic_vault: Path) -> None:
    with _indexed(topic_vault) as index:
        first = index.vault_map()
        assert index.vault_map().how == "kept"
    (topic_vault / "astronomy" / "mars.md").write_text(
        "# Mars\n\nMars rovers drill rock samples; the red planet has dust storms and polar ice.\n", encoding="utf-8"
    )
    (topic_vault / "networking" / "vpn.md").unlink()
    with _indexed(topic_vault) as index:
        second = index.vault_map()
    assert second.how == "updated" and second.moved == 1
    before = {n.path: (n.x, n.y) for n in first.notes}
    after = {n.path: (n.x, n.y) for n in second.notes}
    assert "networking/vpn.md" not in after and len(after) == 23
    unmoved = [p for p in after if p != "astronomy/mars.md"]
    assert all(after[p] == pytest.approx(before[p], abs=1e-4) for p in unmoved)
    mars = next(n for n in second.notes if n.path == "astronomy/mars.md")
    astronomy = next(n.cluster for n in first.notes if n.path == "astronomy/comets.md")
    assert mars.cluster == astronomy


def test_a_rebuild_and_a_new_cluster_count_lay_the_map_out_anew(topic_vault: Path) -> None:
    with _indexed(topic_vault) as index:
        index.vault_map()
        assert index.vault_map(MapRequest(rebuild=True)).how == "built"
        found = index.vault_map(MapRequest(clusters=4))
        assert found.how == "built" and len(found.clusters) == 4
        assert index.vault_map().how == "kept" and len(index.vault_map().clusters) == 4


def test_a_scoped_map_holds_its_notes_alone_and_leaves_the_kept_map_alone(topic_vault: Path) -> None:
    with _indexed(topic_vault) as index:
        whole = index.vault_map()
        scoped = index.vault_map(MapRequest(filters={"folders": ["astronomy"]}))
        assert scoped.how == "scoped" and {_topic(n.path) for n in scoped.notes} == {"astronomy"}
        again = index.vault_map()
        assert again.how == "kept" and again.built_at == whole.built_at
        with pytest.raises(MapUnavailableError, match="at least 3 notes"):
            index.vault_map(MapRequest(filters={"folders": ["nowhere"]}))


def test_closeness_of_notes_another_view_found_agrees_with_related_notes(topic_vault: Path) -> None:
    """The map asks :func:`closeness` for its nearest notes that related notes did not rank:
    it must tell each note close or not exactly as related notes do."""
    from vaultseek.links.related import closeness

    with _indexed(topic_vault) as index:
        related = index.related("cooking/pasta.md", k=23).results
        vectors, model = index._sides.vector_side()
        told = closeness(index.store, index._graph.link_graph(), vectors, "cooking/pasta.md", [r.path for r in related],
                         models=(model.name, None))  # fmt: skip
    assert told == {r.path: r.close for r in related}
    assert set(told.values()) == {True, False}  # both kinds are there to agree on


def test_bridges_and_islands(vault: Path) -> None:
    """A note that mixes two topics sits between them; a lone unlinked note is an island."""
    for topic, notes in TOPICS.items():
        for name, text in notes:
            (vault / topic).mkdir(exist_ok=True)
            (vault / topic / f"{name}.md").write_text(f"# {name}\n\n{text}\n", encoding="utf-8")
    (vault / "stargazing-dinner.md").write_text(
        "# Stargazing dinner\n\nBake bread and simmer soup, then point the telescope at the planets and stars.\n",
        encoding="utf-8",
    )
    (vault / "knitting.md").write_text("# Knitting\n\nCast on forty stitches of wool yarn with circular needles.\n",
                                       encoding="utf-8")  # fmt: skip
    with _indexed(vault) as index:
        found = index.vault_map(MapRequest(clusters=3))
    notes = {n.path: n for n in found.notes}
    assert notes["stargazing-dinner.md"].bridge > sorted(n.bridge for n in found.notes)[len(notes) // 2]
    assert notes["knitting.md"].density == min(n.density for n in found.notes)
    assert notes["knitting.md"].role == "island"
    with _indexed(vault) as index:
        alone = index.map_note("knitting", k=5)
    assert alone.neighbours and all(n.close is False for n in alone.neighbours)
    shown = run_cli("map", "--vault", str(vault), "--note", "knitting", "-k", "3")
    assert shown.returncode == 0 and "Nearest notes (none is close in meaning or linked):" in shown.stdout


def test_nearest_finds_the_exact_neighbours_on_large_inputs() -> None:
    """The sampled floor is an optimisation only: it must give the exact top k."""
    import numpy as np

    rng = np.random.default_rng(5)
    vectors = unit_rows(rng.normal(size=(3000, 16)).astype(np.float32))
    found, sims = nearest(vectors, 7)
    full = vectors @ vectors.T
    np.fill_diagonal(full, -np.inf)
    expected = np.sort(full, axis=1)[:, ::-1][:, :7]
    assert np.allclose(sims, expected, atol=1e-6)
    assert np.allclose(np.take_along_axis(full, found, axis=1), sims, atol=1e-6)


def test_cli_map_text_json_and_pictures(topic_vault: Path, tmp_path: Path) -> None:
    assert run_cli("index", str(topic_vault)).returncode == 0
    shown = run_cli("map", "--vault", str(topic_vault), "--clusters", "3")
    assert shown.returncode == 0, shown.stderr
    assert "Map of 24 notes in 3 clusters" in shown.stdout and "Missing links" in shown.stdout
    raw = run_cli("map", "--vault", str(topic_vault), "--json", "--out", str(tmp_path / "map.svg"))
    body = json.loads(raw.stdout)
    assert {"notes", "clusters", "missing_links", "space"} <= set(body) and body["space"] == "static"
    assert len(body["notes"]) == 24 and {"path", "x", "y", "cluster", "role"} <= set(body["notes"][0])
    svg = ElementTree.parse(tmp_path / "map.svg").getroot()
    assert len(svg.findall("{http://www.w3.org/2000/svg}circle")) == 24
    png = run_cli("map", "--vault", str(topic_vault), "--out", str(tmp_path / "map.png"))
    assert png.returncode == 0 and (tmp_path / "map.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    note = run_cli("map", "--vault", str(topic_vault), "--note", "dns", "-k", "3")
    assert note.returncode == 0 and "networking/dns.md" in note.stdout and "Nearest notes" in note.stdout
    mixed = run_cli("map", "--vault", str(topic_vault), "--note", "pasta", "-k", "23").stdout.splitlines()
    assert any("cooking/salad.md" in line and "not close" not in line for line in mixed)  # linked: close
    assert all("not close" in line for line in mixed if "networking/" in line or "astronomy/" in line)


def test_cli_map_errors_are_one_line(vault: Path, tmp_path: Path) -> None:
    (vault / "only.md").write_text("# Only\n\nOne note.\n", encoding="utf-8")
    assert run_cli("index", str(vault)).returncode == 0
    few = run_cli("map", "--vault", str(vault))
    assert few.returncode == 1 and "at least 3 notes" in few.stderr and "Traceback" not in few.stderr
    wrong = run_cli("map", "--vault", str(vault), "--out", str(tmp_path / "map.gif"))
    assert wrong.returncode == 2 and ".svg or .png" in wrong.stderr
    unknown = run_cli("map", "--vault", str(vault), "--note", "ghost")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr


def test_the_deep_vectors_join_the_map_once_the_deep_tier_has_reached_most_notes(topic_vault: Path) -> None:
    with open_index(topic_vault, create=True, deep_tier=True) as index:
        index.sync(remember=False)
        static_only = index.vault_map(MapRequest(clusters=3))
        assert static_only.space == "static" and static_only.deep_share == 0.0
        index.deepen()
        mixed = index.vault_map()
    assert mixed.how == "built" and mixed.space == "static+deep" and mixed.deep_share == 1.0
    by_cluster: dict[int, list[str]] = {}
    for note in mixed.notes:
        by_cluster.setdefault(note.cluster, []).append(_topic(note.path))
    purity = sum(max(topics.count(t) for t in set(topics)) for topics in by_cluster.values()) / 24
    assert purity >= 0.9, by_cluster
    # A new note has no deep vectors yet: it borrows its neighbours' and the map says so.
    (topic_vault / "astronomy" / "saturn.md").write_text(
        "# Saturn\n\nSaturn's rings of ice and dust circle the gas giant planet; its moon Titan has lakes.\n",
        encoding="utf-8",
    )
    with open_index(topic_vault, deep_tier=True) as index:
        index.sync(remember=False)
        updated = index.vault_map()
    assert updated.how == "updated" and updated.space == "static+deep" and updated.deep_share < 1.0
    assert any("deep vectors" in notice for notice in updated.notices)
    saturn = next(n for n in updated.notes if n.path == "astronomy/saturn.md")
    assert saturn.cluster == next(n.cluster for n in updated.notes if n.path == "astronomy/mars.md")


def test_two_requests_at_once_make_the_map_once(topic_vault: Path) -> None:
    """The study app's page and its panel ask together: one builds, the other finds it kept."""
    from concurrent.futures import ThreadPoolExecutor

    _indexed(topic_vault).close()

    def ask(_n: int) -> str:
        with open_index(topic_vault) as index:
            return index.vault_map().how

    with ThreadPoolExecutor(2) as pool:
        hows = sorted(pool.map(ask, range(2)))
    assert hows == ["built", "kept"]


def test_a_picture_leaves_out_labels_that_would_overlap_a_larger_clusters(topic_vault: Path) -> None:
    from dataclasses import replace

    from vaultseek.vaultmap.picture import labelled, svg

    with _indexed(topic_vault) as index:
        found = index.vault_map(MapRequest(clusters=3))
    piled = replace(found, clusters=tuple(replace(c, x=0.5, y=0.5) for c in found.clusters))
    biggest = max(found.clusters, key=lambda c: c.size)
    assert [c.id for c in labelled(piled, 1200, 13)] == [biggest.id]
    assert svg(found).count("<text") == len(labelled(found, 1200, 13))
    assert svg(piled).count("<text") == 1
