"""The study hub's API against the stand-in LLM server (real HTTP, real index and study DB):
generation through the defensive pipeline with wrapped, fenced, truncated, over-long and
wrong-typed replies; studying; progress; export."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.standin_llm import StandinLLM

MC = {"type": "multiple_choice", "question": "How long is the notice period for a tenancy?",
      "options": ["One month", "Two months", "Three months", "Six months"], "correct_index": 2,
      "explanation": "The notes say the notice period is three months.", "source": 1}  # fmt: skip
TF = {"type": "true_false", "question": "A tenancy may be ended by phone.", "options": ["True", "False"],
      "correct_index": 1, "explanation": "Termination must be in writing.", "source": 1}  # fmt: skip
CARD = {"front": "Notice period for a tenancy", "back": "Three months.", "source": 1}
OUTLINE = {"title": "Tenancy basics", "summary": "How a tenancy ends.",
           "lessons": [{"title": "Notice"}, {"title": "Writing"}]}  # fmt: skip
TREE = {"topic": "Tenancy", "branches": [
    {"label": "Notice", "source": 1, "children": [{"label": "Three months", "source": 1}]},
    {"label": "Form", "source": 1, "children": [{"label": "In writing", "source": 1}]}]}  # fmt: skip
LAW = {"folders": ["law"]}


def generate(client: Any, kind: str, count: int, **extra: Any) -> Any:
    return client.post("/api/study/materials", json={"kind": kind, "count": count, "scope": LAW, **extra})


@pytest.mark.parametrize("reply", [
    json.dumps({"questions": [MC, TF]}),                                   # wrapped
    "```json\n" + json.dumps([MC, TF]) + "\n```",                          # fenced, bare array
    "Here you go!\n" + json.dumps({"questions": [MC, TF, MC, TF]}) + "\nEnjoy!",  # over-long, chatty
    json.dumps({"questions": [MC, TF, MC]})[:-30],                         # truncated mid-item
    json.dumps({"questions": [MC, dict(TF, correct_index="False"), TF, dict(MC, options="a,b")]}),  # wrong types
    json.dumps([MC, TF])[:-1] + ",\n]",                                    # trailing comma
])  # fmt: skip
def test_quiz_generation_survives_messy_replies(client: Any, standin: StandinLLM, reply: str) -> None:
    standin.scripted.append(reply)
    response = generate(client, "quiz", 2)
    assert response.status_code == 201, response.text
    quiz = response.json()
    assert quiz["kind"] == "quiz" and quiz["content"]["questions"] == [MC, TF]
    assert [s["path"] for s in quiz["sources"]] == ["law/tenancy.md"]  # the scope held
    request = standin.requests[-1]
    assert request["format"]["properties"]["questions"]["minItems"] == 2  # grammar-constrained, exact count
    assert "exactly 2 questions" in request["messages"][-1]["content"]


def test_quiz_with_no_usable_question_is_a_clear_502_without_retry(client: Any, standin: StandinLLM) -> None:
    standin.scripted.append(json.dumps({"questions": [dict(MC, correct_index="Three months")]}))
    before = len(standin.requests)
    response = generate(client, "quiz", 3)
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "llm_error" and "answer text" in error["hint"]
    assert len(standin.requests) - before == 1
    assert client.get("/api/study/materials").json()["materials"] == []


def test_fewer_good_items_than_asked_are_kept_and_reported(client: Any, standin: StandinLLM) -> None:
    standin.scripted.append(json.dumps([MC, {"question": "broken"}]))
    quiz = generate(client, "quiz", 3).json()
    assert len(quiz["content"]["questions"]) == 1
    assert "3 asked for, 1 usable" in quiz["problems"]


def test_take_a_quiz_graded_with_explanations_and_dashboard(client: Any, standin: StandinLLM) -> None:
    standin.scripted.append(json.dumps({"questions": [MC, TF]}))
    quiz = generate(client, "quiz", 2).json()
    graded = client.post(f"/api/study/materials/{quiz['id']}/attempts", json={"answers": [2, 0]})
    assert graded.status_code == 201
    result = graded.json()
    assert result["score"] == 1 and result["total"] == 2
    assert [r["correct"] for r in result["results"]] == [True, False]
    assert result["results"][1]["explanation"] == TF["explanation"]
    assert result["results"][1]["source"]["path"] == "law/tenancy.md"
    again = client.get(f"/api/study/materials/{quiz['id']}").json()
    assert again["attempts"][0]["score"] == 1
    board = client.get("/api/study/dashboard").json()
    assert board["totals"]["quizzes"] == 1 and board["sessions"] == 1
    assert {b["id"] for b in board["badges"] if b["earned"]} >= {"first_steps", "first_quiz"}
    assert board["heatmap"][-1]["count"] == 2  # generated + finished, today
    bad = client.post(f"/api/study/materials/{quiz['id']}/attempts", json={"answers": ["Three months", 1]})
    assert bad.status_code == 400 and "answers" in bad.json()["error"]["message"]


def test_flashcards_review_with_fsrs_and_export_anki_csv(client: Any, standin: StandinLLM) -> None:
    other = {"front": "How must a tenancy end?", "back": "In writing, signed by both.", "source": "[1]"}
    standin.scripted.append("```\n" + json.dumps({"cards": [CARD, other, {"front": "", "back": "x", "source": 1}]}) + "\n```")
    deck = generate(client, "flashcards", 2).json()
    assert [c["front"] for c in deck["cards"]] == [CARD["front"], other["front"]]
    due = client.get(f"/api/study/materials/{deck['id']}/due").json()["cards"]
    assert len(due) == 2
    reviewed = client.post(f"/api/study/cards/{due[0]['id']}/reviews", json={"rating": "good"}).json()
    assert 0 < reviewed["interval_days"] < 1  # FSRS learning step: minutes, not days
    easy = client.post(f"/api/study/cards/{due[1]['id']}/reviews", json={"rating": "easy"}).json()
    assert easy["interval_days"] >= 1
    assert len(client.get(f"/api/study/materials/{deck['id']}/due").json()["cards"]) == 0
    assert client.post(f"/api/study/cards/{due[0]['id']}/reviews", json={"rating": 5}).status_code == 400
    exported = client.get(f"/api/study/materials/{deck['id']}/export?format=csv")
    assert exported.status_code == 200 and "attachment" in exported.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(exported.text)))
    assert rows[0][:2] == [CARD["front"], CARD["back"]] and rows[0][2].startswith("vaultseek ")
    assert client.get("/api/study/dashboard").json()["totals"]["reviews"] == 2


def test_workshop_outline_retries_once_and_lessons_are_written_on_open(client: Any, standin: StandinLLM) -> None:
    standin.scripted += ["Sorry, I cannot do that.", json.dumps({"outline": OUTLINE})]
    response = generate(client, "workshop", 2)
    assert response.status_code == 201, response.text
    workshop = response.json()
    assert workshop["content"] == {"title": "Tenancy basics", "summary": "How a tenancy ends.", "lessons": ["Notice", "Writing"]}
    assert workshop["lessons_written"] == []
    assert "retry" in " ".join(workshop["problems"])
    standin.scripted.append("Sure! Here is the lesson:\n\n# Notice\n\nThree months [1].\n\nI hope this helps!")
    lesson = client.get(f"/api/study/materials/{workshop['id']}/lessons/1").json()
    assert lesson["markdown"] == "# Notice\n\nThree months [1]." and lesson["title"] == "Notice"
    requests = len(standin.requests)
    assert client.get(f"/api/study/materials/{workshop['id']}/lessons/1").json() == lesson  # stored, not rewritten
    assert len(standin.requests) == requests
    assert client.get(f"/api/study/materials/{workshop['id']}/lessons/3").status_code == 404
    markdown = client.get(f"/api/study/materials/{workshop['id']}/export?format=md").text
    assert "## Lesson 1: Notice" in markdown and "Three months [1]." in markdown and "*(not opened yet)*" in markdown


def test_workshop_outline_is_tried_exactly_twice(client: Any, standin: StandinLLM) -> None:
    standin.scripted += ["no", '{"title": "T"', "never used"]
    before = len(standin.requests)
    response = generate(client, "workshop", 3)
    assert response.status_code == 502 and "tried twice" in response.json()["error"]["message"]
    assert len(standin.requests) - before == 2
    standin.scripted.clear()


def test_mindmap_list_rename_delete_and_markdown(client: Any, standin: StandinLLM) -> None:
    standin.scripted.append(json.dumps(TREE))
    tree = generate(client, "mindmap", 2).json()
    assert tree["title"] == "Tenancy" and tree["content"]["branches"][0]["children"][0]["source"] == 1
    listed = client.get("/api/study/materials?kind=mindmap").json()["materials"]
    assert [m["id"] for m in listed] == [tree["id"]] and listed[0]["size"] == 2
    renamed = client.patch(f"/api/study/materials/{tree['id']}", json={"title": "Renting"}).json()
    assert renamed["title"] == "Renting"
    assert "- **Tenancy**" in client.get(f"/api/study/materials/{tree['id']}/export").text
    assert client.get(f"/api/study/materials/{tree['id']}/export?format=csv").status_code == 400
    assert client.get(f"/api/study/materials/{tree['id']}?open=1").status_code == 200
    assert client.delete(f"/api/study/materials/{tree['id']}").json() == {"deleted": tree["id"]}
    assert client.get(f"/api/study/materials/{tree['id']}").status_code == 404
    assert client.delete(f"/api/study/materials/{tree['id']}").status_code == 404
    earned = {b["id"] for b in client.get("/api/study/dashboard").json()["badges"] if b["earned"]}
    assert "cartographer" in earned  # history outlives the deleted map


@pytest.mark.parametrize("body, message", [
    ({"kind": "essay"}, "kind"),
    ({"kind": "quiz", "count": 0}, "count"),
    ({"kind": "quiz", "count": "5"}, "count"),
    ({"kind": "quiz", "scope": ["law"]}, "scope"),
    ({"kind": "quiz", "scope": {"kinds": ["nonsense"]}}, "scope"),
    ([], "JSON object"),
])  # fmt: skip
def test_bad_generation_requests_are_400s(client: Any, body: Any, message: str) -> None:
    response = client.post("/api/study/materials", json=body)
    assert response.status_code == 400 and message in response.json()["error"]["message"]


def test_an_empty_scope_and_a_down_model_are_explained(client: Any, standin: StandinLLM) -> None:
    response = client.post("/api/study/materials", json={"kind": "quiz", "scope": {"folders": ["nowhere"]}})
    assert response.status_code == 400 and "no folder 'nowhere' in the index" in response.json()["error"]["message"]
    # A scope the hint cannot name (an exact path) that holds nothing to study.
    response = client.post("/api/study/materials", json={"kind": "quiz", "scope": {"paths": ["law/no-such-note.md"]}})
    assert response.status_code == 400 and "nothing in the chosen scope" in response.json()["error"]["message"]
    client.app.notebook.hub.generator.client.transport.base_url = "http://127.0.0.1:9"
    response = generate(client, "flashcards", 2)
    assert response.status_code == 502 and response.json()["error"]["code"] == "llm_error"


def test_openai_compatible_backend_gets_response_format(tmp_path: Any, study_vault: Any, standin: StandinLLM) -> None:
    from starlette.testclient import TestClient

    from study_fixtures import make_app

    app = make_app(study_vault, tmp_path / "o.db", standin.url + "/v1", llm_backend="openai")
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            standin.scripted.append(json.dumps({"cards": [CARD]}))
            assert generate(client, "flashcards", 1).status_code == 201
    finally:
        app.notebook.close()
    schema = standin.requests[-1]["response_format"]
    assert schema["type"] == "json_schema" and schema["json_schema"]["schema"]["properties"]["cards"]["maxItems"] == 1


def test_progress_survives_a_restart_and_uses_the_clock(tmp_path: Any, study_vault: Any, standin: StandinLLM) -> None:
    from starlette.testclient import TestClient

    from study_fixtures import make_app

    now = [datetime(2026, 3, 2, 9, 0, tzinfo=UTC)]
    for _ in range(2):
        app = make_app(study_vault, tmp_path / "p.db", standin.url)
        app.notebook.hub.clock = lambda: now[0]
        try:
            with TestClient(app, base_url="http://127.0.0.1") as client:
                standin.scripted.append(json.dumps([MC, TF, MC]))
                quiz = generate(client, "quiz", 3).json()
                now[0] += timedelta(minutes=10)
                client.post(f"/api/study/materials/{quiz['id']}/attempts", json={"answers": [2, 1, 2]})
                board = client.get("/api/study/dashboard").json()
        finally:
            app.notebook.close()
        now[0] += timedelta(days=1)
    assert board["streak"] == {"current": 2, "longest": 2}
    assert board["study_minutes"] == 22.0 and board["sessions"] == 2
    assert {"perfect_score", "first_quiz"} <= {b["id"] for b in board["badges"] if b["earned"]}


# -- progress and cancel ------------------------------------------------------------------------
def test_kinds_report_the_sizes_the_api_accepts(client: Any) -> None:
    from vaultseek.study.generators import COUNTS

    kinds = client.get("/api/study/kinds").json()["kinds"]
    assert kinds["quiz"] == {"least": 1, "most": 30, "default": 5}
    for kind, limit in kinds.items():
        least, most, _default = COUNTS[kind]
        assert client.post("/api/study/materials", json={"kind": kind, "count": most + 1, "scope": LAW}).status_code == 400
        assert client.post("/api/study/materials", json={"kind": kind, "count": least - 1, "scope": LAW}).status_code == 400
        assert (limit["least"], limit["most"]) == (least, most)


def test_streamed_generation_reports_its_stages_then_the_material(live: Any, standin: StandinLLM) -> None:
    import httpx

    standin.scripted.append(json.dumps({"questions": [MC, TF]}))
    with httpx.stream("POST", live.url + "/api/study/materials?stream=1", json={"kind": "quiz", "count": 2, "scope": LAW},
                      timeout=30) as response:  # fmt: skip
        assert response.status_code == 200 and response.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in response.iter_lines() if line.strip()]
    stages = [line["stage"] for line in lines]
    assert stages[0] == "started" and lines[0]["job"] == response.headers["x-job-id"]
    assert stages[1:3] == ["retrieving", "sources"] and lines[2]["paths"] == ["law/tenancy.md"]
    writing = [line for line in lines if line["stage"] == "writing"]
    assert writing and writing[-1]["items"] == 2 and writing[-1]["of"] == 2 and writing[-1]["chars"] > 100
    assert stages[-3:] == ["checking", "saving", "done"]
    material = lines[-1]["material"]
    assert material["content"]["questions"] == [MC, TF]
    assert [m["id"] for m in httpx.get(live.url + "/api/study/materials").json()["materials"]] == [material["id"]]


def test_a_streamed_error_is_a_line_with_the_hint(live: Any, standin: StandinLLM) -> None:
    import httpx

    standin.scripted.append(json.dumps({"questions": [dict(MC, correct_index="Three months")]}))
    response = httpx.post(live.url + "/api/study/materials?stream=1", json={"kind": "quiz", "count": 1, "scope": LAW}, timeout=30)
    last = json.loads(response.text.strip().splitlines()[-1])
    assert last["stage"] == "error" and last["status"] == 502
    assert last["error"]["code"] == "llm_error" and "answer text" in last["error"]["hint"]
    bad = httpx.post(live.url + "/api/study/materials?stream=1", json={"kind": "quiz", "count": 31}, timeout=30)
    assert bad.status_code == 400  # a bad order is refused before any stream starts


def test_cancel_stops_the_model_request_and_keeps_nothing(live: Any, standin: StandinLLM) -> None:
    import httpx

    standin.token_delay = 0.4  # four pieces, 1.6 s in all: time to cancel mid-reply
    standin.scripted.append(json.dumps({"questions": [MC, TF, MC, TF, MC]}))
    stages: list[str] = []
    with httpx.stream("POST", live.url + "/api/study/materials?stream=1", json={"kind": "quiz", "count": 5, "scope": LAW},
                      timeout=30) as response:  # fmt: skip
        job = response.headers["x-job-id"]
        for line in response.iter_lines():
            if not line.strip():
                continue
            stages.append(json.loads(line)["stage"])
            if stages[-1] == "writing" and stages.count("writing") == 1:
                cancelled = httpx.post(f"{live.url}/api/study/jobs/{job}/cancel", timeout=10).json()
                assert cancelled == {"job": job, "cancelled": True}
    assert stages[-1] == "cancelled" and "done" not in stages
    assert standin.closed_early.wait(5)  # the upstream stream was closed, not read to its end
    assert httpx.get(live.url + "/api/study/materials").json()["materials"] == []
    assert httpx.post(f"{live.url}/api/study/jobs/{job}/cancel", timeout=10).json()["cancelled"] is False
    assert live.server.config.app.notebook.hub.jobs == {}


def test_closing_the_stream_cancels_the_generation(live: Any, standin: StandinLLM) -> None:
    import httpx

    standin.token_delay = 0.4
    standin.scripted.append(json.dumps({"questions": [MC, TF, MC]}))
    with httpx.stream("POST", live.url + "/api/study/materials?stream=1", json={"kind": "quiz", "count": 3, "scope": LAW},
                      timeout=30) as response:  # fmt: skip
        for line in response.iter_lines():
            if line.strip() and json.loads(line)["stage"] == "writing":
                break  # the tab closes
    assert standin.closed_early.wait(5)
    hub = live.server.config.app.notebook.hub
    deadline = datetime.now() + timedelta(seconds=5)
    while hub.jobs and datetime.now() < deadline:
        pass
    assert hub.jobs == {} and httpx.get(live.url + "/api/study/materials").json()["materials"] == []


def test_study_redirects_to_the_hub_page_of_the_app(client: Any) -> None:
    response = client.get("/study", follow_redirects=False)
    assert response.status_code == 308 and response.headers["location"] == "/#hub"
    assert client.get("/static/study.html").status_code == 404
    for page in ("hub", "dashboard"):
        assert client.get(f"/static/js/pages/{page}.js").status_code == 200
        assert client.get(f"/static/css/pages/{page}.css").status_code == 200
