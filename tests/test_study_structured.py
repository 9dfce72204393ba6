"""The defensive pipeline's pure parts: tolerant parsing, per-item validators, filler
stripping, prompt templates — and a fuzz test over thousands of malformed replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultseek.llm.structured import (
    load_value,
    parse_items,
    parse_object,
    remove_trailing_commas,
    strip_filler,
)
from vaultseek.study import prompting
from vaultseek.study.validators import (
    keep_valid,
    validate_card,
    validate_mindmap,
    validate_outline,
    validate_question,
)

SOURCES = {1, 2, 3}
MC = {"type": "multiple_choice", "question": "How long is the notice period?",
      "options": ["One month", "Two months", "Three months", "Six months"], "correct_index": 2,
      "explanation": "The notes say three months. It applies to both sides.", "source": 1}  # fmt: skip
TF = {"type": "true_false", "question": "Termination may be oral.", "options": ["True", "False"],
      "correct_index": 1, "explanation": "It must be in writing.", "source": 2}  # fmt: skip


def parse_questions(text: str) -> list[dict[str, Any]]:
    parsed = parse_items(text, "questions", ("question",))
    kept, _ = keep_valid(parsed.items, lambda q: validate_question(q, SOURCES), 100)
    return kept


# -- parsing ------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    json.dumps([MC, TF]),
    json.dumps({"questions": [MC, TF]}),
    json.dumps({"quiz": {"questions": [MC, TF]}}),
    "```json\n" + json.dumps({"questions": [MC, TF]}) + "\n```",
    "Sure! Here are your [2] questions:\n" + json.dumps([MC, TF]) + "\nI hope this helps!",
    json.dumps([MC, TF])[:-1] + ",]",
    json.dumps({"questions": [MC, TF]}, indent=2).replace("\n  ]", ",\n  ]"),
])  # fmt: skip
def test_wrapped_fenced_chatty_and_trailing_comma_replies_all_parse(text: str) -> None:
    assert parse_questions(text) == [MC, TF]


def test_a_truncated_reply_keeps_its_complete_items() -> None:
    text = json.dumps({"questions": [MC, TF, MC]})
    cut = text[: text.rindex('"explanation"')]
    parsed = parse_items(cut, "questions", ("question",))
    assert parsed.items == [MC, TF] and any("cut off" in p for p in parsed.problems)


def test_backticks_inside_a_json_string_are_not_a_fence() -> None:
    """Found by the fuzz test: a question about Markdown ("what does ``` start?") must not be
    taken for a code fence, whether the reply is fenced itself or not."""
    items = [{"q": "What does ``` start in Markdown?", "a": 1}, {"q": "and ```python?", "a": 2}]
    for text in (json.dumps(items), json.dumps(items, indent=2), "```json\n" + json.dumps(items, indent=2) + "\n```"):
        assert parse_items(text, "questions", ("q",)).items == items


def test_a_single_object_is_taken_as_one_item() -> None:
    assert parse_questions(json.dumps(MC)) == [MC]


@pytest.mark.parametrize("text", ["", "   ", "no json here", "{", "[", '{"a": ', "null", "42", '"text"', "[1, 2]"])
def test_replies_without_items_give_none_and_a_reason(text: str) -> None:
    parsed = parse_items(text, "questions", ("question",))
    assert parse_questions(text) == []
    assert parsed.problems or parsed.items == [1, 2]


def test_the_trailing_comma_repair_is_narrow() -> None:
    assert remove_trailing_commas('{"a": [1, 2, ], "b": "x, ]", }') == '{"a": [1, 2 ], "b": "x, ]" }'
    assert remove_trailing_commas('[1,,2]') == "[1,,2]"  # not a trailing comma: left alone
    value, problems = load_value('[1,,2]')  # only the complete prefix survives; nothing is guessed
    assert value == [1] and any("cut off" in p for p in problems)


def test_parse_object_finds_the_outline_inside_a_wrapper() -> None:
    outline = {"title": "T", "summary": "S", "lessons": [{"title": "a"}]}
    found, _ = parse_object("```\n" + json.dumps({"outline": outline}) + "\n```", ("title", "lessons"))
    assert found == outline
    assert parse_object("[]", ("title",))[0] is None


# -- validators ---------------------------------------------------------------------------
def test_question_validator_accepts_good_items_and_normalises() -> None:
    assert validate_question(MC, SOURCES) == (MC, None)
    tf_without_options = {k: v for k, v in TF.items() if k != "options"}
    assert validate_question(tf_without_options, SOURCES)[0] == TF
    inferred = {k: v for k, v in MC.items() if k != "type"}
    assert validate_question(inferred, SOURCES)[0]["type"] == "multiple_choice"
    long = dict(MC, explanation="One. Two. Three. Four.")
    assert validate_question(long, SOURCES)[0]["explanation"] == "One. Two."
    assert validate_question(dict(MC, source="[3]"), SOURCES)[0]["source"] == 3


@pytest.mark.parametrize("change, reason", [
    ({"options": ["a", "b", "c"]}, "exactly 4 options"),
    ({"options": ["a", "b", "c", "d", "e"]}, "exactly 4 options"),
    ({"type": "true_false"}, "exactly 2 options"),
    ({"options": ["a", "a", "b", "c"]}, "repeated"),
    ({"options": ["a", "", "b", "c"]}, "empty"),
    ({"correct_index": "Three months"}, "answer text"),
    ({"correct_index": "2"}, "correct_index"),
    ({"correct_index": 4}, "correct_index"),
    ({"correct_index": -1}, "correct_index"),
    ({"correct_index": True}, "correct_index"),
    ({"explanation": ""}, "explanation"),
    ({"explanation": 7}, "explanation"),
    ({"source": 9}, "source"),
    ({"source": None}, "source"),
    ({"question": ["x"]}, "question text"),
    ({"type": "essay", "options": ["a", "b", "c"]}, "type"),
])  # fmt: skip
def test_question_validator_drops_malformed_items_with_a_reason(change: dict[str, Any], reason: str) -> None:
    item, problem = validate_question(dict(MC, **change), SOURCES)
    assert item is None and reason in (problem or "")


def test_question_validator_on_non_objects() -> None:
    for raw in (None, 1, "q", [MC]):
        assert validate_question(raw, SOURCES)[0] is None


def test_card_validator() -> None:
    good = {"front": "Notice period", "back": "Three months.", "source": 1}
    assert validate_card(good, SOURCES) == (good, None)
    for bad in ({**good, "front": ""}, {**good, "back": None}, {**good, "source": 7},
                {**good, "back": "notice period"}, "card", {"front": "x"}):  # fmt: skip
        assert validate_card(bad, SOURCES)[0] is None


def test_outline_validator() -> None:
    raw = {"title": "T", "summary": "S.", "lessons": [{"title": "a"}, "b", {"title": ""}, {"title": "A"}, 3, "c"]}
    assert validate_outline(raw, 2) == ({"title": "T", "summary": "S.", "lessons": ["a", "b"]}, None)
    for bad in ({"title": "T", "summary": "S", "lessons": []}, {"title": "T", "lessons": ["a"]},
                {"title": "T", "summary": "S", "lessons": "a, b"}, []):  # fmt: skip
        assert validate_outline(bad, 3)[0] is None


def test_mindmap_validator_keeps_the_tree_and_drops_unsourced_leaves() -> None:
    raw = {"topic": "Tenancy", "branches": [
        {"label": "Notice", "source": 1, "children": [{"label": "Three months", "source": 1}, {"label": "x", "source": 9}]},
        {"label": "Empty", "children": [{"label": "no source"}]},
        {"label": "Form", "source": "2", "children": [{"label": "Writing", "source": "[2]"}]},
        "junk",
    ]}  # fmt: skip
    tree, problem = validate_mindmap(raw, SOURCES, 5)
    assert problem is None and tree == {"topic": "Tenancy", "branches": [
        {"label": "Notice", "source": 1, "children": [{"label": "Three months", "source": 1}]},
        {"label": "Form", "source": 2, "children": [{"label": "Writing", "source": 2}]}]}  # fmt: skip
    assert validate_mindmap({"topic": "T", "branches": [{"label": "b", "children": []}]}, SOURCES, 3)[0] is None
    assert validate_mindmap({"branches": []}, SOURCES, 3)[0] is None


def test_keep_valid_trims_to_the_requested_count() -> None:
    kept, problems = keep_valid([MC, {"bad": 1}, TF, MC], lambda q: validate_question(q, SOURCES), 2)
    assert kept == [MC, TF] and len(problems) == 2


# -- filler and templates -----------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "Sure! Here is the lesson:\n\n# Notice\n\nThree months [1].\n\nI hope this helps!",
    "```markdown\n# Notice\n\nThree months [1].\n```",
    "Here's your lesson:\n# Notice\n\nThree months [1].\nLet me know if you have any questions.",
    "# Notice\n\nThree months [1].",
])  # fmt: skip
def test_strip_filler_removes_chat_around_a_lesson(text: str) -> None:
    assert strip_filler(text) == "# Notice\n\nThree months [1]."


def test_prompt_templates_are_files_and_can_be_overridden(tmp_path: Path) -> None:
    builtin = prompting.render("quiz", None, count=5, sources="[1] a.md\ntext", focus="")
    assert "exactly 5 questions" in builtin and "[1] a.md" in builtin and '"correct_index": 2' in builtin
    (tmp_path / "quiz.txt").write_text("Make $count questions from $sources; keep $unknown", "utf-8")
    assert prompting.render("quiz", tmp_path, count=3, sources="S") == "Make 3 questions from S; keep $unknown"
    assert "lessons" in prompting.render("outline", tmp_path, count=2, sources="S", focus="")
    assert prompting.quiz_schema(4)["properties"]["questions"]["minItems"] == 4


# -- fuzz ---------------------------------------------------------------------------------
question = st.builds(
    lambda q, opts, idx, expl, src, tf: (
        {"type": "true_false", "question": q, "options": ["True", "False"], "correct_index": idx % 2,
         "explanation": expl, "source": src} if tf else
        {"type": "multiple_choice", "question": q, "options": opts, "correct_index": idx % 4,
         "explanation": expl, "source": src}),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=30),
    st.lists(st.text("abcdefghij", min_size=1, max_size=6), min_size=4, max_size=4, unique=True),
    st.integers(0, 3), st.sampled_from(["Because [1] says so.", "It is stated. Twice."]),
    st.sampled_from(sorted(SOURCES)), st.booleans(),
)  # fmt: skip
junk = st.text(max_size=12).filter(lambda s: "[" not in s and "{" not in s)


def _broken(item: dict[str, Any], how: int) -> Any:
    return [
        dict(item, options=item["options"][:1]), dict(item, correct_index=str(item["correct_index"])),
        dict(item, source=99), {k: v for k, v in item.items() if k != "explanation"}, "junk", None,
        dict(item, question=42),
    ][how]  # fmt: skip


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    good=st.lists(question, min_size=0, max_size=5),
    bad=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 4)), max_size=3),
    wrap=st.sampled_from(["bare", "object", "nested", "fence", "chatty"]),
    trailing_comma=st.booleans(),
    cut=st.one_of(st.none(), st.integers(0, 400)),
    prefix=junk, suffix=junk,
)  # fmt: skip
def test_fuzz_no_exception_escapes_and_every_valid_item_is_kept(
    good: list[dict[str, Any]], bad: list[tuple[int, int]], wrap: str, trailing_comma: bool,
    cut: int | None, prefix: str, suffix: str,
) -> None:  # fmt: skip
    items: list[Any] = list(good)
    for how, where in bad:
        items.insert(min(where, len(items)), _broken(good[0] if good else MC, how))
    body = json.dumps(items)
    if trailing_comma and items:
        body = body[:-1] + ",]"
    if wrap == "object":
        body = '{"questions": ' + body + "}"
    elif wrap == "nested":
        body = '{"data": {"questions": ' + body + "}}"
    text = {"fence": f"```json\n{body}\n```", "chatty": f"{prefix}\n{body}\n{suffix}"}.get(wrap, body)
    expected = good
    if cut is not None and cut < len(text):
        text = text[:cut]
        # what must survive a cut: every valid item that is complete in the text
        expected = [g for g in good if json.dumps(g) in text]
    kept = parse_questions(text)  # must never raise
    normalised = [validate_question(g, SOURCES)[0] for g in expected]
    assert all(n is not None for n in normalised)
    for item in normalised:
        assert item in kept
    if cut is None:
        assert kept == normalised


@settings(max_examples=1500, deadline=None)
@given(st.text(max_size=200) | st.binary(max_size=100).map(lambda b: b.decode("latin-1")))
def test_fuzz_arbitrary_text_never_raises(text: str) -> None:
    parse_items(text, "questions", ("question",))
    parse_object(text, ("title", "lessons"))
    strip_filler(text)
    for raw in parse_items(text, "cards", ("front",)).items:
        validate_card(raw, SOURCES)
        validate_mindmap(raw, SOURCES, 3)
        validate_outline(raw, 3)
