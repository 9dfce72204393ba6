"""Intake: scores with reasons, routing, thresholds, dry run, documents, stdin, the review
queue, crash safety and the watcher — on real vault files, a real index and the real model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, wait_for
from vaultseek import open_index
from vaultseek.config import load_config
from vaultseek.errors import ConfigError, IntakeError
from vaultseek.intake import Intake, item_from_text
from vaultseek.intake.scoring import actionability, authority, depth

DOMAIN_NOTES = {
    "cooking/bread.md": """# Sourdough bread\n\nMix flour, water and salt with an active sourdough starter. Knead the
dough, let it rise overnight in the fridge, shape the loaf and bake it in a hot Dutch oven
until the crust is deep brown.\n\n## Flour\n\nStrong wheat flour with more protein gives an open crumb; rye
flour adds a sour taste.\n""",
    "cooking/soup.md": """# Tomato soup\n\nRoast tomatoes with garlic and onions, then simmer them with vegetable stock
and basil. Blend until smooth and season with salt, pepper and a little cream.\n""",
    "cooking/pasta.md": """# Fresh pasta\n\nKnead eggs into flour until the dough is silky, rest it, roll it thin and cut
tagliatelle. Cook the noodles two minutes in salted boiling water and toss with butter and
parmesan cheese.\n""",
    "cooking/curry.md": """# Chickpea curry\n\nFry onions, ginger and garlic, add cumin, turmeric and garam masala, then
chickpeas, tomatoes and coconut milk. Simmer and serve with rice and coriander.\n""",
    "kubernetes/deploy.md": """# Deploying to the cluster\n\nApply the deployment manifest with kubectl, watch the rollout status of
the pods, and roll back the deployment when the readiness probe fails.\n\n```bash\nkubectl apply -f deployment.yaml\nkubectl rollout status deployment/api\n```\n""",
    "kubernetes/pods.md": """# Debugging pods\n\nA pod in CrashLoopBackOff: read the container logs with kubectl logs, describe the
pod to see events, and check the liveness probe and the resource limits of the container.\n""",
    "kubernetes/ingress.md": """# Ingress and services\n\nExpose a service through an ingress controller; the ingress routes hostnames and
paths to cluster services, and TLS certificates are stored as secrets in the namespace.\n""",
    "kubernetes/helm.md": """# Helm charts\n\nPackage the manifests as a Helm chart, keep per-environment values files, and
upgrade releases in the cluster with helm upgrade --install.\n""",
    "garden/roses.md": """# Pruning roses\n\nPrune rose bushes in late winter: cut out dead wood, open the centre of the
shrub, and cut just above an outward-facing bud. Mulch the bed with compost.\n""",
    "garden/tomatoes.md": """# Growing tomatoes\n\nSow tomato seeds indoors, plant the seedlings out after the last frost, water the
plants deeply at the roots and tie the stems to stakes as they grow.\n""",
    "garden/compost.md": """# Compost heap\n\nLayer green garden waste and brown leaves, keep the heap moist, turn it every few
weeks, and the compost is ready for the flower beds after a few months.\n""",
    "garden/lawn.md": """# Lawn care\n\nMow the lawn high in summer, scarify moss in spring, overseed bare patches and
water the grass early in the morning during dry spells.\n""",
}

K8S_ITEM = """# Scaling a deployment

Scale the deployment of the api to five replicas with kubectl scale, then check that the new
pods become ready and the service spreads traffic across them.

1. Run `kubectl scale deployment/api --replicas=5`
2. Watch the pods with `kubectl get pods -w`
3. Check the horizontal pod autoscaler settings

See https://kubernetes.io/docs/concepts/workloads/controllers/deployment/ for details.
"""
RECIPE_ITEM = """# Banana bread

Mash ripe bananas, mix them with melted butter, sugar, eggs and flour, pour the batter into a
loaf tin and bake until a skewer comes out clean. Let the loaf cool before slicing.
"""


@pytest.fixture
def domains_vault(vault: Path) -> Path:
    for rel, text in DOMAIN_NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, "utf-8")
    with open_index(vault, create=True) as index:
        index.sync()
    return vault


def files_in(vault: Path) -> set[str]:
    return {
        p.relative_to(vault).as_posix()
        for p in vault.rglob("*")
        if p.is_file() and ".vaultseek" not in p.relative_to(vault).parts
    }


def inbox(vault: Path) -> Path:
    folder = vault / "_intake" / "inbox"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# -- scoring ---------------------------------------------------------------------------------
def test_each_dimension_is_in_range_with_reasons_and_deterministic(domains_vault: Path) -> None:
    with open_index(domains_vault) as index:
        first = Intake(index).assess(item_from_text(K8S_ITEM))
        second = Intake(index).assess(item_from_text(K8S_ITEM))
    assert first.to_dict() == second.to_dict()
    assert [d.name for d in first.dimensions] == ["relevance", "actionability", "depth", "authority"]
    for dimension in first.dimensions:
        assert 0.0 <= dimension.score <= 1.0
        assert dimension.reasons and all(isinstance(r, str) and r for r in dimension.reasons)
    weights = first.weights
    expected = sum(w * d.score for w, d in zip(weights, first.dimensions, strict=True)) / sum(weights)
    assert first.total == pytest.approx(expected, abs=0.001)
    assert any("numbered step" in r for r in first.dimensions[1].reasons)
    assert any("kubernetes.io" in r for r in first.dimensions[3].reasons)


def test_actionability_counts_steps_code_and_decisions_not_prose() -> None:
    prose = "The weather was mild and the river ran slowly past the old mill in the valley."
    steps = "1. Install the package\n2. Run `make test`\n- [ ] Review the results\n\n```sh\nmake\n```\nWe decided to ship."
    low, high = actionability(prose), actionability(steps)
    assert low.score == 0.0 and low.reasons == ("no signals found",)
    assert high.score > 0.6
    joined = " ".join(high.reasons)
    for signal in ("numbered steps", "fenced code block", "checkbox", "decision word"):
        assert signal in joined


def test_depth_rewards_substance_and_structure_not_length_alone() -> None:
    paragraph = "Compilers translate source programs into machine code through parsing and optimisation passes."
    structured = "# Compilers\n\n## Parsing\n\n" + paragraph + "\n\n## Optimisation\n\nRegister allocation, inlining, loop unrolling and constant folding reduce the work at run time.\n"
    once, repeated = depth(paragraph), depth(" ".join([paragraph] * 50))
    assert repeated.score - once.score < 0.1  # fifty copies add no distinct words
    assert depth(structured).score > once.score
    assert all(0 <= d.score <= 1 for d in (once, repeated))


def test_authority_reads_links_trusted_sites_dois_and_author_metadata() -> None:
    plain = authority("Just an opinion.", {})
    cited = authority(
        "As shown by Smith et al. [1], see https://docs.python.org/3/ and doi 10.1145/3368089.3409741.\n\n## References\n\n[1] Smith.",
        {"author": "Ada Lovelace", "source": "https://example.org/post"},
        trusted=["docs.python.org"],
    )
    assert plain.score == 0.0
    assert cited.score > 0.7
    text = " ".join(cited.reasons)
    for signal in ("trusted site linked", "DOI", "citation", "References section", "author metadata"):
        assert signal in text


# -- routing ---------------------------------------------------------------------------------
def test_items_route_to_the_folder_they_are_most_like(domains_vault: Path) -> None:
    garden = "# Planting bulbs\n\nPlant tulip and daffodil bulbs in autumn, twice as deep as the bulb, in well-drained soil of the flower bed, and water them in."
    with open_index(domains_vault) as index:
        intake = Intake(index)
        assert intake.model().usable == ("cooking", "garden", "kubernetes")
        assert intake.assess(item_from_text(K8S_ITEM)).domain == "kubernetes"
        assert intake.assess(item_from_text(RECIPE_ITEM)).domain == "cooking"
        assert intake.assess(item_from_text(garden)).domain == "garden"
        routed = intake.assess(item_from_text(K8S_ITEM))
    assert routed.route.affinities[0].domain == "kubernetes" and routed.route.margin > 0


def test_configured_domains_replace_the_top_level_folders(domains_vault: Path) -> None:
    with open_index(domains_vault, intake_domains=["cooking", "garden"]) as index:
        intake = Intake(index)
        assert intake.model().usable == ("cooking", "garden")
        assert intake.assess(item_from_text(K8S_ITEM)).domain in ("cooking", "garden")


# -- thresholds ------------------------------------------------------------------------------
def test_thresholds_file_review_and_discard_at_the_boundaries(domains_vault: Path) -> None:
    with open_index(domains_vault) as index:
        total = Intake(index).assess(item_from_text(K8S_ITEM)).total

    def decide(**settings: float) -> str:
        with open_index(domains_vault, **settings) as index:
            return Intake(index).assess(item_from_text(K8S_ITEM)).decision

    assert decide(intake_file_at=total, intake_review_at=0.0) == "file"  # equal to the bar files
    assert decide(intake_file_at=total + 0.001, intake_review_at=total) == "review"
    assert decide(intake_file_at=total + 0.002, intake_review_at=total + 0.001) == "discard"
    with (
        pytest.raises(ConfigError, match="intake_review_at"),
        open_index(domains_vault, intake_file_at=0.3, intake_review_at=0.5) as index,
    ):
        Intake(index)


def test_off_topic_items_score_under_on_topic_ones(domains_vault: Path) -> None:
    off_topic = "# Medieval tax law\n\nTithes and scutage were levied by feudal lords on vassals in twelfth century England."
    with open_index(domains_vault) as index:
        intake = Intake(index)
        on = intake.assess(item_from_text(K8S_ITEM))
        off = intake.assess(item_from_text(off_topic))
    assert on.score("relevance") > off.score("relevance") + 0.3
    assert on.total > off.total
    assert off.decision == "discard"


def test_weights_come_from_the_config(domains_vault: Path) -> None:
    with open_index(domains_vault, intake_weights={"relevance": 1, "actionability": 0, "depth": 0, "authority": 0}) as index:
        assessment = Intake(index).assess(item_from_text(K8S_ITEM))
    assert assessment.total == pytest.approx(assessment.score("relevance"), abs=0.001)


# -- dry run, documents, stdin ---------------------------------------------------------------
def test_dry_run_moves_nothing(domains_vault: Path) -> None:
    (inbox(domains_vault) / "scale.md").write_text(K8S_ITEM, "utf-8")
    before = files_in(domains_vault)
    result = run_cli("intake", "--dry-run", "--json", "--vault", str(domains_vault))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["dry_run"] is True
    assert report["items"][0]["decision"] in ("file", "review", "discard")
    assert report["items"][0]["domain"] == "kubernetes" and report["items"][0]["destination"] is None
    assert files_in(domains_vault) == before
    text = run_cli("intake", "--dry-run", "--vault", str(domains_vault)).stdout
    assert "dry run: nothing moved" in text and "relevance" in text and "kubectl" not in text


def test_a_filed_note_records_its_scores_and_is_indexed(domains_vault: Path) -> None:
    (inbox(domains_vault) / "scale.md").write_text(K8S_ITEM, "utf-8")
    with open_index(domains_vault, intake_file_at=0.3, intake_review_at=0.2) as index:
        outcome = Intake(index).take_inbox()[0]
        assert outcome.destination == "kubernetes/scale.md"
        hits = [r.path for r in index.search("replicas autoscaler", mode="bm25").results]
    assert hits[0] == "kubernetes/scale.md"
    assert not (inbox(domains_vault) / "scale.md").exists()
    note = (domains_vault / "kubernetes" / "scale.md").read_text("utf-8")
    from vaultseek.notes.markdown import split_frontmatter

    meta, body = split_frontmatter(note)
    assert meta["title"] == "Scaling a deployment" and "intake" not in meta
    assert meta["intake_domain"] == "kubernetes" and meta["intake_decision"] == "file"
    assert meta["intake_score"] == outcome.assessment.total and meta["intake_date"]
    assert body == K8S_ITEM
    record = json.loads((domains_vault / ".vaultseek" / "intake" / "assessments" / f"{meta['intake_id']}.json").read_text("utf-8"))
    assert record["source"] == "_intake/inbox/scale.md" and record["total"] == outcome.assessment.total
    assert set(record["scores"]) == set(record["reasons"]) == {"relevance", "actionability", "depth", "authority"}


def test_documents_become_notes_and_keep_their_original(domains_vault: Path, tmp_path: Path) -> None:
    from tests.support.docgen import text_pdf

    incoming = tmp_path / "incoming"
    incoming.mkdir()
    text_pdf(incoming / "rollout.pdf", [K8S_ITEM.replace("`", ""), "Rolling back a failed kubectl rollout of the deployment pods."])
    (incoming / "harvest.csv").write_text("vegetable,sown,harvested\ntomatoes,March,August\nlettuce,April,June\n", "utf-8")
    (incoming / "ingress.html").write_text(
        '<html><head><title>Ingress TLS</title><meta name="author" content="Jane Ops">'
        '<link rel="canonical" href="https://kubernetes.io/docs/ingress"></head><body><article>'
        "<h1>Ingress TLS</h1><p>Terminate TLS at the ingress controller of the cluster: store the certificate "
        "as a secret in the namespace and reference it from the ingress of the service. The controller "
        "reloads the certificate when the secret changes, so rotation needs no pod restart.</p></article></body></html>",
        "utf-8",
    )
    with open_index(domains_vault, intake_trusted_domains=["kubernetes.io"], intake_file_at=0.3, intake_review_at=0.2) as index:
        outcomes = {o.item: o for o in Intake(index).take(incoming, domain=None)}
    assert set(outcomes) == {"rollout", "harvest", "ingress"}
    assert all(o.error is None for o in outcomes.values())
    pdf = outcomes["rollout"]
    assert pdf.assessment.domain == "kubernetes" and pdf.assessment.decision == "file"
    folder = "kubernetes"
    assert pdf.destination == f"{folder}/rollout.md"
    note = (domains_vault / pdf.destination).read_text("utf-8")
    assert "## Page 1" in note and "## Page 2" in note and "(attachments/rollout.pdf)" in note
    assert (domains_vault / folder / "attachments" / "rollout.pdf").read_bytes() == (incoming / "rollout.pdf").read_bytes()
    assert (incoming / "rollout.pdf").exists()  # files from outside the inbox are copied
    assert pdf.written == (f"{folder}/rollout.md", f"{folder}/attachments/rollout.pdf")
    with open_index(domains_vault) as index:  # both were indexed by the intake's own sync
        found = {r.path for r in index.search("Rolling back a failed kubectl rollout", mode="bm25").results}
    assert {f"{folder}/rollout.md", f"{folder}/attachments/rollout.pdf"} <= found
    html = outcomes["ingress"].assessment
    assert any("author metadata" in r for r in html.dimensions[3].reasons)
    assert any("trusted site" in r for r in html.dimensions[3].reasons)
    assert "tomatoes" in (domains_vault / outcomes["harvest"].destination).read_text("utf-8")


def test_stdin_is_taken_as_a_snippet(domains_vault: Path) -> None:
    result = run_cli("intake", "-", "--json", "--domain", "cooking", "--vault", str(domains_vault), stdin=RECIPE_ITEM)
    assert result.returncode == 0, result.stderr
    item = json.loads(result.stdout)["items"][0]
    assert item["decision"] == "file" and item["destination"] == "cooking/Banana-bread.md"
    assert (domains_vault / "cooking" / "Banana-bread.md").is_file()


def test_user_mistakes_are_one_line_errors(domains_vault: Path) -> None:
    for args in (("intake", "/no/such/file"), ("intake", "-", "--domain", "nope"), ("review", "accept", "ghost.md")):
        result = run_cli(*args, "--vault", str(domains_vault), stdin=RECIPE_ITEM)
        assert result.returncode == 2, result
        assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    (inbox(domains_vault) / "binary.md").write_bytes(b"\x00\x01\x02binary")
    result = run_cli("intake", "--vault", str(domains_vault))
    assert result.returncode == 1 and "not taken" in result.stdout
    assert (inbox(domains_vault) / "binary.md").exists()  # left where it was


# -- review queue ----------------------------------------------------------------------------
def test_review_lists_accepts_reroutes_and_discards(domains_vault: Path) -> None:
    box = inbox(domains_vault)
    for name, text in (("scale.md", K8S_ITEM), ("banana.md", RECIPE_ITEM), ("other.md", RECIPE_ITEM.replace("Banana", "Plum"))):
        (box / name).write_text(text, "utf-8")
    with open_index(domains_vault, intake_file_at=1.0, intake_review_at=0.0) as index:
        outcomes = Intake(index).take_inbox()
    assert {o.destination for o in outcomes} == {"_intake/review/scale.md", "_intake/review/banana.md", "_intake/review/other.md"}
    listed = json.loads(run_cli("review", "--json", "--vault", str(domains_vault)).stdout)["items"]
    assert {i["name"] for i in listed} == {"scale.md", "banana.md", "other.md"}
    assert [i["total"] for i in listed] == sorted((i["total"] for i in listed), reverse=True)
    assert {i["name"]: i["domain"] for i in listed}["scale.md"] == "kubernetes"
    assert "scale.md" in run_cli("review", "--vault", str(domains_vault)).stdout

    accepted = run_cli("review", "accept", "scale", "--vault", str(domains_vault))
    assert accepted.returncode == 0, accepted.stderr
    assert "kubernetes/scale.md" in accepted.stdout
    rerouted = run_cli("review", "accept", "banana.md", "--domain", "garden", "--vault", str(domains_vault))
    assert rerouted.returncode == 0, rerouted.stderr
    discarded = run_cli("review", "discard", "other.md", "--vault", str(domains_vault))
    assert discarded.returncode == 0, discarded.stderr
    assert (domains_vault / "kubernetes" / "scale.md").is_file()
    assert (domains_vault / "garden" / "banana.md").is_file()
    assert (domains_vault / "_intake" / "discarded" / "other.md").is_file()
    assert not list((domains_vault / "_intake" / "review").glob("*.md"))
    from vaultseek.notes.markdown import split_frontmatter

    meta, _ = split_frontmatter((domains_vault / "garden" / "banana.md").read_text("utf-8"))
    assert meta["intake_domain"] == "garden" and meta["intake_decision"] == "file"
    record = json.loads((domains_vault / ".vaultseek" / "intake" / "assessments" / f"{meta['intake_id']}.json").read_text("utf-8"))
    assert record["domain"] == "garden" and record["decision"] == "file" and record["reviewed"]
    # a discarded item is recoverable: accept takes it out of the discard folder too
    assert run_cli("review", "accept", "other", "--domain", "cooking", "--vault", str(domains_vault)).returncode == 0
    assert (domains_vault / "cooking" / "other.md").is_file()
    with open_index(domains_vault) as index:
        assert "garden/banana.md" in [r.path for r in index.search("banana bread", mode="bm25").results]


# -- crash safety ----------------------------------------------------------------------------
_CRASHING_CLI = """
import os, sys
import vaultseek.intake.filing as filing
step = sys.argv.pop(1)
filing._after_step = lambda done: os._exit(137) if done == step else None
from vaultseek.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def run_cli_crashing_after(step: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in a child process that dies (exit 137, like SIGKILL) right after
    filing made ``step`` durable."""
    return subprocess.run([sys.executable, "-c", _CRASHING_CLI, step, *args],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip


@pytest.mark.parametrize("step", ["journal", "attachment", "note"])
def test_a_crash_mid_intake_leaves_the_item_in_exactly_one_place(domains_vault: Path, step: str) -> None:
    from tests.support.docgen import text_pdf

    box = inbox(domains_vault)
    text_pdf(box / "rollout.pdf", [K8S_ITEM.replace("`", "")])
    original = (box / "rollout.pdf").read_bytes()
    crashed = run_cli_crashing_after(step, "intake", "--domain", "kubernetes", str(box / "rollout.pdf"),
                                     "--vault", str(domains_vault))  # fmt: skip
    assert crashed.returncode == 137, crashed.stderr
    assert (box / "rollout.pdf").exists()  # the crash came before the inbox copy was removed
    if step == "note":
        assert (domains_vault / "kubernetes" / "rollout.md").exists()  # both places, for now
    again = run_cli("intake", "--vault", str(domains_vault), env={"VAULTSEEK_INTAKE_FILE_AT": "0.0", "VAULTSEEK_INTAKE_REVIEW_AT": "0.0"})
    assert again.returncode == 0, again.stderr
    notes = list(domains_vault.rglob("rollout*.md"))
    pdfs = list(domains_vault.rglob("rollout*.pdf"))
    assert [p.relative_to(domains_vault).as_posix() for p in notes] == ["kubernetes/rollout.md"]
    assert [p.relative_to(domains_vault).as_posix() for p in pdfs] == ["kubernetes/attachments/rollout.pdf"]
    assert pdfs[0].read_bytes() == original
    assert not list(box.iterdir())
    assert not list(domains_vault.rglob("*.intake-tmp"))
    assert not list((domains_vault / ".vaultseek" / "intake" / "journal").glob("*.json"))


def test_recovery_runs_before_any_review_command(domains_vault: Path) -> None:
    (inbox(domains_vault) / "scale.md").write_text(K8S_ITEM, "utf-8")
    crashed = run_cli_crashing_after("note", "intake", "--vault", str(domains_vault))
    assert crashed.returncode == 137
    assert run_cli("review", "--vault", str(domains_vault)).returncode == 0
    assert not (inbox(domains_vault) / "scale.md").exists()
    assert len(list(domains_vault.rglob("scale*.md"))) == 1


# -- the resident process --------------------------------------------------------------------
def test_the_watcher_takes_an_inbox_arrival(domains_vault: Path) -> None:
    from vaultseek.agents.watch import Watcher

    box = inbox(domains_vault)
    taken: list[object] = []
    watcher = Watcher(load_config(vault=domains_vault, intake_file_at=0.3, intake_review_at=0.2), on_intake=taken.extend)
    thread, stop = watcher.start()
    try:
        assert watcher.ready.wait(60)
        (box / "scale.md").write_text(K8S_ITEM, "utf-8")
        assert wait_for(lambda: (domains_vault / "kubernetes" / "scale.md").exists() and not (box / "scale.md").exists(), 20)

        def searchable() -> bool:
            with open_index(domains_vault) as index:
                return "kubernetes/scale.md" in [r.path for r in index.search("autoscaler replicas", mode="bm25").results]

        assert wait_for(searchable, 20)
        # The outcomes are reported once take_inbox returns, which can be after the move shows.
        assert wait_for(lambda: bool(taken), 10)
    finally:
        stop.set()
        thread.join(10)


def test_the_daemon_takes_an_inbox_arrival(domains_vault: Path) -> None:
    from vaultseek.agents import daemon_client

    box = inbox(domains_vault)
    started = run_cli("daemon", "start", "--vault", str(domains_vault))
    assert started.returncode == 0, started.stderr
    try:
        (box / "banana.md").write_text(RECIPE_ITEM, "utf-8")
        assert wait_for(lambda: not (box / "banana.md").exists(), 30)
        assert len(list(domains_vault.rglob("banana*.md"))) == 1
    finally:
        run_cli("daemon", "stop", "--vault", str(domains_vault))
        pid_file = daemon_client.pid_path(load_config(vault=domains_vault).db)  # type: ignore[arg-type]
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), 9)
            except (ValueError, OSError):
                pass


def test_taking_a_file_already_in_the_vault_is_refused(domains_vault: Path) -> None:
    with open_index(domains_vault) as index:
        with pytest.raises(IntakeError, match="already in the vault"):
            Intake(index).take(domains_vault / "cooking" / "soup.md")
        with pytest.raises(IntakeError, match="already in the vault"):
            Intake(index).take(domains_vault / "cooking")


# -- the note's frontmatter and its assessment -----------------------------------------------
def assessment_of(vault: Path, meta: dict[str, object]) -> dict[str, object]:
    """The assessment intake keeps beside a filed note, found by the note's ``intake_id``."""
    path = vault / ".vaultseek" / "intake" / "assessments" / f"{meta['intake_id']}.json"
    return json.loads(path.read_text("utf-8"))  # type: ignore[no-any-return]


def test_frontmatter_stays_flat_and_review_reads_the_assessment_kept_beside_it(domains_vault: Path) -> None:
    """Obsidian's Properties panel shows flat values only: the note gets a few scalar keys;
    the scores and reasons are kept in the vault's intake folder under the note's id, so a
    renamed or moved note keeps them."""
    from vaultseek.notes.markdown import split_frontmatter

    (inbox(domains_vault) / "scale.md").write_text(K8S_ITEM, "utf-8")
    taken = run_cli("intake", "--vault", str(domains_vault), env={"VAULTSEEK_INTAKE_FILE_AT": "1.0", "VAULTSEEK_INTAKE_REVIEW_AT": "0.0"})
    assert taken.returncode == 0, taken.stderr
    note = domains_vault / "_intake" / "review" / "scale.md"
    text = note.read_text("utf-8")
    meta, body = split_frontmatter(text)
    assert set(meta) == {"title", "intake_id", "intake_date", "intake_decision", "intake_domain", "intake_score"}
    assert all(isinstance(value, (str, int, float)) for value in meta.values())  # no nesting, no lists
    assert len(text[: text.index(body)].splitlines()) == 2 + len(meta)  # one line a key
    assert meta["intake_decision"] == "review" and meta["intake_domain"] == "kubernetes"

    note.rename(note.with_name("renamed.md"))  # as Obsidian does when the title changes
    listed = json.loads(run_cli("review", "--json", "--vault", str(domains_vault)).stdout)["items"]
    assert [item["name"] for item in listed] == ["renamed.md"]
    item = listed[0]
    assert item["total"] == meta["intake_score"] and item["domain"] == "kubernetes" and item["source"] == "_intake/inbox/scale.md"
    assert set(item["scores"]) == set(item["reasons"]) == {"relevance", "actionability", "depth", "authority"}
    assert any("numbered step" in reason for reason in item["reasons"]["actionability"])
    shown = run_cli("review", "--vault", str(domains_vault)).stdout
    assert "renamed.md" in shown and f"rel {item['scores']['relevance']:.2f}" in shown


LEGACY_NOTE = """---
title: Plum cake
intake:
  id: 0123456789abcdef
  date: '2025-01-02T03:04:05+00:00'
  source: _intake/inbox/plum.md
  decision: review
  domain: cooking
  total: 0.47
  scores:
    relevance: 0.8
    actionability: 0.3
    depth: 0.2
    authority: 0.0
  reasons:
    relevance: [close to the cooking notes]
    actionability: [no signals found]
    depth: [a short note]
    authority: [no signals found]
---
# Plum cake

Halve the plums, press them into the batter and bake the cake for forty minutes.
"""


def test_notes_in_the_old_nested_form_are_still_read_and_accepted(domains_vault: Path) -> None:
    from vaultseek.notes.markdown import split_frontmatter

    review = domains_vault / "_intake" / "review"
    review.mkdir(parents=True)
    (review / "plum.md").write_text(LEGACY_NOTE, "utf-8")
    listed = json.loads(run_cli("review", "--json", "--vault", str(domains_vault)).stdout)["items"]
    assert len(listed) == 1 and listed[0]["total"] == 0.47 and listed[0]["domain"] == "cooking"
    assert listed[0]["scores"]["relevance"] == 0.8 and listed[0]["reasons"]["depth"] == ["a short note"]
    accepted = run_cli("review", "accept", "plum", "--vault", str(domains_vault))
    assert accepted.returncode == 0, accepted.stderr
    meta, body = split_frontmatter((domains_vault / "cooking" / "plum.md").read_text("utf-8"))
    assert "intake" not in meta and body.startswith("# Plum cake")
    assert meta["intake_id"] == "0123456789abcdef" and meta["intake_score"] == 0.47
    assert meta["intake_domain"] == "cooking" and meta["intake_decision"] == "file"
    record = assessment_of(domains_vault, meta)
    assert record["scores"] == {"relevance": 0.8, "actionability": 0.3, "depth": 0.2, "authority": 0.0}
    assert record["source"] == "_intake/inbox/plum.md" and record["reviewed"]


# -- encodings -------------------------------------------------------------------------------
def test_a_cp1252_note_is_taken_like_a_cp1252_text_file(domains_vault: Path, tmp_path: Path) -> None:
    text = ("# Crème brûlée\n\nThe café serves crème brûlée with a naïve “résumé” of the recipe: "
            "caramelise the sugar under the grill and chill the custard for two hours.\n")  # fmt: skip
    written = {}
    for name in ("creme.md", "creme.txt"):
        (tmp_path / name).write_bytes(text.encode("cp1252"))
        result = run_cli("intake", str(tmp_path / name), "--domain", "cooking", "--json", "--vault", str(domains_vault))
        assert result.returncode == 0, (name, result.stdout, result.stderr)
        destination = json.loads(result.stdout)["items"][0]["destination"]
        written[name] = (domains_vault / destination).read_text("utf-8")
    for note in written.values():
        assert "crème brûlée with a naïve “résumé”" in note


# -- destinations ----------------------------------------------------------------------------
def test_a_domain_that_leads_out_of_the_vault_is_refused(domains_vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (domains_vault / "linked").symlink_to(outside, target_is_directory=True)
    item = tmp_path / "scale.md"
    item.write_text(K8S_ITEM, "utf-8")
    before = files_in(domains_vault)
    for domain in ("../outside", "cooking/../../outside", str(outside), "C:/outside", "cook\x07ing", ".vaultseek", "linked", "linked/deeper"):
        result = run_cli("intake", str(item), "--domain", domain, "--vault", str(domains_vault))
        assert result.returncode == 2, (domain, result.stdout, result.stderr)
        assert result.stderr.startswith("error: ") and "hint: " in result.stderr and "Traceback" not in result.stderr
        assert not list(outside.iterdir()), domain
        assert files_in(domains_vault) == before, domain


def test_review_accept_refuses_a_crafted_domain_or_original(domains_vault: Path, tmp_path: Path) -> None:
    """The destination in a queued note's frontmatter is the note's own text: it is checked
    like a --domain, and an attachment it names must be in the note's attachments folder."""
    review = domains_vault / "_intake" / "review"
    review.mkdir(parents=True)
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me", "utf-8")
    crafted = {
        "flat.md": "---\ntitle: Flat\nintake_domain: ../elsewhere\n---\nFlat body text.\n",
        "nested.md": "---\ntitle: Nested\nintake:\n  domain: ../../../elsewhere\n---\nNested body text.\n",
        "original.md": "---\ntitle: Original\nintake:\n  domain: cooking\n  original: ../../../precious.txt\n---\nBody.\n",
    }
    for name, text in crafted.items():
        (review / name).write_text(text, "utf-8")
    for name in crafted:
        result = run_cli("review", "accept", name, "--vault", str(domains_vault))
        assert result.returncode == 2, (name, result.stdout, result.stderr)
        assert result.stderr.startswith("error: ") and "hint: " in result.stderr
        assert (review / name).read_text("utf-8") == crafted[name]
    assert not (tmp_path / "elsewhere").exists() and not (domains_vault.parent.parent / "elsewhere").exists()
    assert precious.read_text("utf-8") == "keep me"
    assert not (domains_vault / "cooking" / "original.md").exists()


# -- a full disk -----------------------------------------------------------------------------
_FULL_DISK_CLI = """
import errno, os, sys
real_fsync = os.fsync
def fsync(fd):
    # The disk fills as intake writes the note (after the journal and the attachment).
    if os.readlink(f"/proc/self/fd/{fd}").endswith(".md.intake-tmp"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real_fsync(fd)
os.fsync = fsync
from vaultseek.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_full_disk_is_exit_7_and_leaves_the_item_whole_in_the_inbox(domains_vault: Path) -> None:
    from tests.support.docgen import text_pdf

    box = inbox(domains_vault)
    text_pdf(box / "rollout.pdf", [K8S_ITEM.replace("`", "")])
    before = files_in(domains_vault)
    full = subprocess.run([sys.executable, "-c", _FULL_DISK_CLI, "intake", "--vault", str(domains_vault)],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert full.returncode == 7, (full.stdout, full.stderr)
    assert "No space left on device" in full.stderr and "hint: " in full.stderr and "unexpected" not in full.stderr
    assert files_in(domains_vault) == before  # the item in the inbox; no note, no attachment
    assert not list(domains_vault.rglob(".*.intake-tmp"))
    assert not list((domains_vault / ".vaultseek" / "intake" / "journal").glob("*"))
    again = run_cli("intake", "--vault", str(domains_vault), env={"VAULTSEEK_INTAKE_FILE_AT": "0.0", "VAULTSEEK_INTAKE_REVIEW_AT": "0.0"})
    assert again.returncode == 0, again.stderr
    assert not (box / "rollout.pdf").exists() and (domains_vault / "kubernetes" / "rollout.md").is_file()
