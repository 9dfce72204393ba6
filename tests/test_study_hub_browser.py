"""The study hub and dashboard pages in real headless Chromium (Debian's ``chromium`` through
Playwright), at a 1280 px desktop and a 390 px phone width, against the stand-in LLM over real
HTTP: generation with its live progress and the Cancel button, a quiz graded, flashcards, a
workshop lesson rendered from Markdown, a mind map, the hub reopening the material you had open
after a reload, the labelled heatmap, the badges, and no sideways scrolling. Screenshots go to
``tests/artifacts/``. In CI a missing browser or Playwright fails instead of skipping."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.browser import chromium
from tests.support.standin_llm import StandinLLM

ARTIFACTS = Path(__file__).parent / "artifacts"
WIDTHS = (1280, 390)
QUESTIONS = [
    {"type": "multiple_choice", "question": "How long is the notice period?",
     "options": ["One month", "Two months", "Three months", "Six months"], "correct_index": 2,
     "explanation": "The notes say three months.", "source": 1},
    {"type": "true_false", "question": "A tenancy may be ended by <img src=x onerror=alert(1)> phone.",
     "options": ["True", "False"], "correct_index": 1, "explanation": "It must be in writing.", "source": 1},
]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def open_page(browser: Any, width: int) -> tuple[Any, list[str]]:
    """A fresh page (its own storage) and the list its script errors go to."""
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors


def no_sideways_scroll(page: Any) -> None:
    scroll, client = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll <= client, f"{scroll} px of content in a {client} px window"


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("width", WIDTHS)
def test_generate_with_progress_take_the_quiz_reload_and_see_the_dashboard(
    browser: Any, live: Any, standin: StandinLLM, width: int
) -> None:
    page, errors = open_page(browser, width)
    page.goto(live.url + "/#hub")
    page.wait_for_selector("#gen-kind")
    page.wait_for_selector("#gen-count[max]")  # the kinds' limits have loaded
    assert page.get_attribute("#gen-count", "max") == "30"  # what the API accepts for a quiz
    page.select_option("#gen-kind", "flashcards")
    assert page.get_attribute("#gen-count", "max") == "50" and page.input_value("#gen-count") == "10"
    placeholders = " ".join(page.eval_on_selector_all("#generate input", "els => els.map(e => e.placeholder)")).lower()
    assert "law" not in placeholders and "cooking" not in placeholders
    page.select_option("#gen-kind", "quiz")
    page.fill("#gen-count", "2")
    page.click(".hub-scope summary")
    page.fill("#gen-folders", "law")
    standin.token_delay = 0.3  # the reply arrives in three pieces: time to see the progress
    standin.scripted.append(json.dumps({"questions": QUESTIONS}))
    page.click("#gen-submit")
    page.wait_for_selector("#gen-stages li.active[data-stage=writing]")
    assert page.is_visible("#gen-cancel") and page.is_visible("#gen-bar")
    assert "Found 1 passage in 1 document" in page.inner_text("#gen-stages")
    shot(page, f"hub-progress-{width}")
    no_sideways_scroll(page)
    page.wait_for_selector("#quiz-form")
    assert page.is_hidden("#gen-progress")
    legend = page.inner_text('fieldset[data-n="1"] legend')
    assert "<img src=x onerror=alert(1)>" in legend and page.locator("#quiz-form img").count() == 0
    page.check('fieldset[data-n="0"] input[value="2"]')
    page.check('fieldset[data-n="1"] input[value="0"]')
    page.click("#quiz-submit")
    page.wait_for_selector("#quiz-score:has-text('Score')")
    assert page.inner_text("#quiz-score") == "Score: 1 / 2"
    feedback = page.inner_text('fieldset[data-n="1"] .feedback')
    assert "Wrong" in feedback and "It must be in writing." in feedback and "law/tenancy.md" in feedback
    no_sideways_scroll(page)
    shot(page, f"hub-quiz-{width}")
    quiz_id = page.get_attribute(".hub-materials li.current", "data-id")
    # The sidebar remembers: a reload on the bare hub reopens the material that was open.
    page.goto(live.url + "/#hub")
    page.reload()
    page.wait_for_selector("#quiz-form")
    assert page.get_attribute(".hub-materials li.current", "data-id") == quiz_id
    assert page.evaluate("location.hash") == f"#hub/material/{quiz_id}"

    page.click("a[data-route=dashboard]")
    page.wait_for_selector("#dash-quizzes")
    assert page.inner_text("#dash-quizzes strong") == "1 quiz"
    assert page.inner_text("#dash-sessions strong") == "1 session"
    assert page.locator("#dash-heatmap-table tbody tr").count() == 7
    assert page.locator("#dash-heatmap-table td[data-date]").count() == 90
    months = [m.strip() for m in page.eval_on_selector_all(".dash-month", "els => els.map(e => e.textContent)") if m.strip()]
    assert len(months) >= 3
    assert page.locator("#dash-legend .dash-swatch").count() == 5
    caption = page.inner_text("#dash-heatmap-table caption")
    assert "weeks as columns and weekdays as rows" in caption and "4 activities on 1 day" in caption  # made, opened, finished, reopened
    today = page.locator("#dash-heatmap-table td[data-count='4']")
    assert today.count() == 1 and "4 activities" in today.get_attribute("title")
    assert page.locator("#dash-badges li").count() == 25
    assert "earned" in page.get_attribute("[data-badge=first_quiz]", "class")
    assert "1 of 10 quizzes" in page.inner_text("[data-badge=quiz_regular]")
    no_sideways_scroll(page)
    shot(page, f"dashboard-{width}")
    assert errors == []


def test_cancel_stops_the_generation(browser: Any, live: Any, standin: StandinLLM) -> None:
    page, errors = open_page(browser, 1280)
    page.goto(live.url + "/#hub")
    page.wait_for_selector("#gen-count[max]")  # the kinds' limits have loaded
    page.fill("#gen-count", "2")
    standin.token_delay = 0.5
    standin.scripted.append(json.dumps({"questions": QUESTIONS * 4}))
    page.click("#gen-submit")
    page.wait_for_selector("#gen-stages li.active[data-stage=writing]")
    page.click("#gen-cancel")
    page.wait_for_selector("#gen-status:has-text('Cancelled')")
    assert "nothing was kept" in page.inner_text("#gen-status")
    assert standin.closed_early.wait(5)
    assert page.is_hidden("#gen-progress") and page.is_enabled("#gen-submit")
    assert "Nothing yet" in page.inner_text("#materials")
    assert errors == []


@pytest.mark.parametrize("width", WIDTHS)
def test_flashcards_workshop_and_mind_map(browser: Any, live: Any, standin: StandinLLM, width: int) -> None:
    import httpx

    def make(kind: str, count: int, reply: Any) -> str:
        standin.scripted.append(json.dumps(reply))
        response = httpx.post(live.url + "/api/study/materials", json={"kind": kind, "count": count, "scope": {"folders": ["law"]}})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    deck = make("flashcards", 2, {"cards": [{"front": "Notice period?", "back": "Three months.", "source": 1},
                                            {"front": "How must it end?", "back": "In writing.", "source": 1}]})  # fmt: skip
    workshop = make("workshop", 2, {"title": "Tenancy", "summary": "How a tenancy ends.", "lessons": [{"title": "Notice"}, {"title": "Form"}]})
    tree = make("mindmap", 2, {"topic": "Tenancy", "branches": [
        {"label": "Notice", "source": 1, "children": [{"label": "Three months", "source": 1}]},
        {"label": "Form", "source": 1, "children": [{"label": "In writing", "source": 1}]}]})  # fmt: skip
    page, errors = open_page(browser, width)

    page.goto(f"{live.url}/#hub/material/{deck}")
    page.wait_for_selector(".flashcard")
    assert "Card 1 of 2 due" in page.inner_text("#deck")
    page.click("#deck button.primary")
    assert "Three months." in page.inner_text(".flashcard")
    page.click("#deck [data-rating=good]")
    page.wait_for_selector("#deck :text('Card 2 of 2 due')")
    no_sideways_scroll(page)

    page.goto(f"{live.url}/#hub/material/{workshop}")
    page.wait_for_selector(".lessons a")
    standin.scripted.append("## Notice\n\n| Who | When |\n|---|---|\n| tenant | 3 months |\n\n- in writing [1]\n\n<img src=x onerror=alert(1)>")
    page.click(".lessons a >> nth=0")
    page.wait_for_selector("#lesson .markdown h2")
    assert page.inner_text("#lesson h2") == "Notice" and page.locator("#lesson table td").count() == 2
    assert page.locator("#lesson li").count() == 1 and page.locator("#lesson img").count() == 0
    assert "##" not in page.inner_text("#lesson")
    no_sideways_scroll(page)
    shot(page, f"hub-workshop-{width}")

    page.goto(f"{live.url}/#hub/material/{tree}")
    page.wait_for_selector("#mindmap g.leaf")
    assert page.locator("#mindmap g.branch").count() == 3  # the topic and two branches
    page.locator("#mindmap g.leaf").first.click()
    assert "law/tenancy.md" in page.inner_text("#mindmap-source")
    page.locator("#mindmap g.branch").nth(1).click()  # fold a branch
    assert page.locator("#mindmap g.leaf").count() == 1
    no_sideways_scroll(page)
    shot(page, f"hub-mindmap-{width}")
    assert errors == []
