"""Scrubbing does linear work on every line, however adversarial: a property test over generated
lines that counts operations instead of timing them (the seconds live in ``benchmarks.scrub``).

The meter is the interpreter's profile hook: every Python call and every call into C counts one,
and a C string method that reads its whole string (``count``, ``lower``, ``translate``...) counts
the length of that string. A loop that rescans the text from each match, or that shortens a value
one character at a time and counts it again, makes the meter grow with the square of the input;
linear scrubbing makes it grow in step with it. The regex engine's own steps are not seen here:
the patterns are bounded and possessive by construction (``credentials`` explains how), and
``python -m benchmarks.scrub`` times them on every family below.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_secrets import B64, DASHES, _Gen
from vaultseek.index.credentials import scrub

_WHOLE_STRING = frozenset({
    "count", "lower", "upper", "casefold", "translate", "encode", "split", "splitlines", "replace",
    "strip", "lstrip", "rstrip", "isalpha", "islower", "isupper", "isdigit", "isalnum", "isspace",
    "join", "fullmatch", "title", "expandtabs",
})


def work(run: Callable[[], object]) -> int:
    """Operation count of ``run()`` (see the module docstring)."""
    total = 0

    def meter(_frame: FrameType, event: str, arg: Any) -> None:
        nonlocal total
        if event == "call":
            total += 1
        elif event == "c_call":
            owner = getattr(arg, "__self__", None)
            name = getattr(arg, "__name__", "")
            total += len(owner) if isinstance(owner, str) and name in _WHOLE_STRING else 1

    sys.setprofile(meter)
    try:
        run()
    finally:
        sys.setprofile(None)
    return total


def _line(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


SMALL, FACTOR = 3_000, 8


def assert_linear(unit: str, prefix: str = "") -> None:
    """The meter on a line 8x longer is at most ~8x (a quadratic loop gives ~64x), with a floor on
    the small run so a unit that finds nothing at all cannot fail on fixed costs."""
    small = work(lambda: scrub(prefix + _line(unit, SMALL)))
    big = work(lambda: scrub(prefix + _line(unit, SMALL * FACTOR)))
    assert big <= 2 * FACTOR * max(small, 2_000), (prefix, unit[:40], small, big)


_GEN = _Gen(29)
KEYS = ["password", "Password", "passwd", "pass", "pwd", "pw", "api_key", "apiKey", "token", "secret",
        "key", "private_key", "access_key", "auth_token", "--password", "-Password", "sshpass -p",
        "curl -u", "mysql -p", "docker login -p", "redis-cli -a", "Passwort", "contraseña",
        "mot de passe", "Authorization: Token", "Authorization: Bearer", "Cookie: sessionid",
        "bearer", "machine x login y password", "heroku_key", "<password>", "</password>"]
SEPARATORS = ["=", ": ", ":", " = ", "=\"", "='", "=>", ":=", "|", " | ", ":** `", "**: ", " ", "\t",
              "`", ">", ""]
VALUES = ["", "x", ")", "]", "}", "a.", "a_", "`", "\"", "'", "#", "//", "@", "a:b", "-", "=",
          _GEN.mixed(16), _GEN.chars("0123456789abcdef", 40), _GEN.chars(B64, 44) + "=", "sk-",
          "ghp_", "eyJ", "://u:p@h", "{{", "$", "\\n", f"{DASHES}BEGIN CERTIFICATE{DASHES}",
          f"{DASHES}END PRIVATE KEY{DASHES}\n", "LS0tLS1CRUdJTi", "HRKU-", "Q~1"]
ENDS = ["", " ", "\n", ";", ",", "\t", " | ", "`", "**"]


@st.composite
def adversarial_lines(draw: st.DrawFn) -> tuple[str, str]:
    """``(prefix, unit)``: the unit repeated to the line's length. Either a unit of one to three
    key words, each with a separator, a value and an ending; or a single key and separator
    followed by one value repeated (``password=))))…``, a base64 or hex run, ``a.a.a.…``)."""
    if draw(st.booleans()):
        prefix = draw(st.sampled_from(KEYS)) + draw(st.sampled_from(SEPARATORS))
        return prefix, draw(st.sampled_from([v for v in VALUES if v]))
    parts = draw(st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(SEPARATORS),
                                    st.sampled_from(VALUES), st.sampled_from(ENDS)),
                          min_size=1, max_size=3))
    return "", "".join("".join(p) for p in parts)


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(adversarial_lines())
def test_scrub_work_is_linear_on_generated_adversarial_lines(line: tuple[str, str]) -> None:
    prefix, unit = line
    assert_linear(unit, prefix)


@pytest.mark.parametrize("unit", [
    "password=", "api_key=", "password: x ", "token=" + _GEN.mixed(20) + " ",
    " ".join(_GEN.chars(B64, 40) for _ in range(20)) + " ",  # base64 tokens
    " ".join(_GEN.mixed(40) for _ in range(20)) + " " + f"{DASHES}BEGIN CERTIFICATE{DASHES} ",
    _GEN.chars("0123456789abcdef", 64) + " key ",
    "| service | password |\n|---|---|\n| router | `" + _GEN.mixed(12) + "` |\n",  # tables
    "|---|password|", "mysql -pX9 docker login -p Y8 redis-cli -a Z7 ",
    "Cookie: sessionid=" + _GEN.mixed(20) + "; Authorization: Token " + _GEN.mixed(20) + " ",
], ids=repr)
def test_scrub_work_is_linear_on_reported_lines(unit: str) -> None:
    assert_linear(unit)


@pytest.mark.parametrize("key", ["password=", "--password ", "secret: "])
@pytest.mark.parametrize("closer", [")", "]", "}"])
def test_a_value_of_closing_brackets_is_stripped_in_one_pass(key: str, closer: str) -> None:
    """``password=))))…``: the closers were stripped one at a time, each time counting them all."""
    small = work(lambda: scrub(key + closer * SMALL))
    big = work(lambda: scrub(key + closer * SMALL * FACTOR))
    assert big <= 2 * FACTOR * max(small, 2_000), (small, big)
