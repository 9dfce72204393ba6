"""Credential scrubbing: every note's raw text passes through ``scrub`` before it is stored or
embedded.

A vault is personal, so notes hold API keys, connection strings and passwords that must never reach
the index (which may be synced, shared or read by an AI agent). ``scrub`` replaces each secret with
``[REDACTED:<pattern-name>]`` and keeps everything around it, so search still finds the note.

Design choices, and why:

* **Fail closed.** When a vendor pattern and a generic one overlap, the union of both spans is
  redacted under the vendor name, so no character run of a secret survives. ``scrub`` never raises:
  if something unexpected breaks, the whole text is redacted rather than passed through.
* **Speed.** It runs on every note (tens of MB per index), so no regex runs over a text unless a
  cheap literal gate passes: a substring of the text, of its lower-cased copy, or of the "haystack"
  of long token-like runs (~5% of ordinary markdown), where vendor prefixes such as ``ghp_`` live.
  Case-insensitive patterns run on the lower-cased copy, where sre can use its fast literal search.
  Regexes open with that literal: a token's "not inside a longer run" look-behind comes after its
  prefix (a regex opening with a look-behind is tried at every offset, ~35x slower).
* **Linear time.** Scrubbing holds the GIL, so one slow note would stall a whole app. From each
  place a regex can start it reads a bounded stretch: values stop at a cap (512 characters; most
  vendor tokens 255) and are possessive, so nothing backtracks into them. A value that fills its
  cap is read on to its end once by the pattern's tail (matches starting inside it are skipped),
  so a long secret is redacted whole, in one pass. A context word that may be far back on the line
  (``curl`` before ``-u user:pass``) is looked up in an index of the text instead of being
  rescanned from every occurrence. Facts about the whole text (is there a PEM ``BEGIN`` line,
  where its lines start) and about a whole value (its bracket counts) are worked out once, never
  once per match. Time per MB stays flat on adversarial lines of any length
  (``python -m benchmarks.scrub``; ``tests/test_scrub_linear.py`` counts the operations).
* **Where secrets hide in notes.** Values may be quoted with a markdown code span as well as
  quotes; ``| key | value |`` rows and the cells under a ``password`` (``token``, ``API key``...)
  column of a table count; tool flags are tool-specific (``mysql -p…``, ``docker login -p``,
  ``redis-cli -a``: never a bare ``-p``, which is ``mkdir -p`` and ``ssh -p 22`` elsewhere).
* **Idempotent.** Passes repeat until nothing changes; spans that are only existing markers are
  ignored, so each pass strictly shrinks the unredacted text and
  ``scrub(scrub(x).text) == scrub(x)``.
* **Notes are full of non-secrets that look random.** Git SHAs, sha256 checksums, UUIDs and
  GPG/cert fingerprints are flagged only as *hex in a secret-ish line context*
  (``key``/``token``/``secret``... with no ``sha``/``hash``/``commit``/``fingerprint``... on the
  line); UUIDs never on their own.
  Base64 runs must be at least 32 chars, mix upper, lower and digits, have near-random Shannon
  entropy *and* switch character class often (paths and CamelCase identifiers score high entropy
  but switch rarely); URLs, ``data:`` URIs (embedded images), ``SHA256:`` fingerprints, SSH public
  keys and non-private PEM blocks (certificates, CMS, and the same base64-encoded) are skipped.
* **Formats distinctive on their own need no context word** (Twilio ``SK`` keys, new-format
  Mailgun keys, Azure AD client secrets, ``LS0tLS1CRUdJTi``: a base64-encoded PEM file), as in
  the gitleaks rule set; shapes common elsewhere (a Twilio account SID, a Heroku UUID, a Discord
  bot token) still need theirs.
* **Placeholders survive.** ``password: <your password>``, ``$env:PASSWORD``, ``${{ secrets.X }}``,
  ``****`` and ``password = getpass()`` are not secrets. Literal example passwords (``P@ssw0rd``
  in ``ConvertTo-SecureString``) *are* redacted: in a personal vault a literal is as likely real
  as not.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise

_MAX_PASSES = 64
"""Each pass removes at least one unredacted character, so this is never reached in practice."""


@dataclass(frozen=True, slots=True)
class Scrubbed:
    """A text with its secrets replaced, and how many of each kind were found (never the
    secrets)."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)


Check = Callable[[re.Match[str], str, str], bool]
"""``(match, the secret as written in the original text, its group name) -> keep it?``"""


class _Regex:
    """A regex compiled on first use: a text wakes few patterns, and compiling all ~120 costs
    ~20 ms, which a search pays whenever a result's file name might hold a secret."""

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int) -> None:
        self.source, self.flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled


@dataclass(frozen=True, slots=True)
class _Pattern:
    """One detector: a regex plus the cheap literal gates that decide whether it runs at all.

    Regexes start with a literal wherever possible: sre then scans with its fast substring search,
    while a leading look-behind, ``\\b`` or mixed alternation makes it try a match at every offset
    (10-40x slower). Boundaries that would need one are checked in ``check`` instead."""

    name: str
    regex: _Regex
    ci_regex: _Regex | None  # the re.I twin, for texts whose lower() changes length
    hints: frozenset[str]  # runs only if one of these is in the text, its lower() or its long runs
    lower_hints: frozenset[str]
    run_hints: frozenset[str]
    check: Check | None
    groups: tuple[str, ...]  # groups named v... hold the secret; else the whole match is it
    tails: Mapping[str, _Regex]  # value group -> how a value cut at its cap goes on
    line_word: _Regex | None  # a word that must come earlier on the match's line
    in_runs: int  # > 0: searched only inside long token-like runs at least this long (no literal)


def _pat(name: str, regex: str, *, hints: Iterable[str] = (), lower: Iterable[str] = (),
         runs: Iterable[str] = (), ci: bool = False, check: Check | None = None,
         tails: dict[str, str] | None = None, line_word: str | None = None,
         in_runs: int = 0) -> _Pattern:
    """Build a pattern; ``ci`` patterns are written in lower case and matched on
    ``text.lower()``."""
    flags = re.M | re.I if ci else re.M
    return _Pattern(name, _Regex(regex, re.M), _Regex(regex, flags) if ci else None,
                    frozenset(hints), frozenset(lower), frozenset(runs), check,
                    tuple(g for g in _GROUP_NAME.findall(regex) if g.startswith("v")),
                    {g: _Regex(t, flags) for g, t in (tails or {}).items()},
                    _Regex(line_word, flags) if line_word else None, in_runs)


_GROUP_NAME = re.compile(r"\(\?P<(\w+)>")
"""A named group's opening in a pattern's source (its names, in order, without compiling it)."""


# -- value checks ---------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(
    r"""[$%<{\[]|.*(?:your|placeholder|<|>|\{\{|\}\}|\$\{|\$\()|[*x.\u2022_#-]+$
    |(?:password|passwd|pass|pwd|secret|token|api[_-]?key|key|none|null|nil|undefined|true|false
      |string|str|bytes|int|bool|any|object|value|securestring|required|optional|hidden|masked|empty
      |redacted)$""",
    re.I | re.X,
)
"""Variables, templates, ``<placeholders>``, ``****`` masks, type names and the key's own name."""
_UNQUOTED_NON_LITERAL = re.compile(
    r"[(@!&*#]|[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\[[^\]]*\])+$|[A-Za-z_][\w.]*\(")
"""Unquoted only: ``self.password``, ``getpass()``, ``(Get-Credential)``, YAML ``!tag``/``&anchor``/
``*alias``, ``@splat``, ``# comment``. Quoted, ``"#Secr3t!"`` is a literal like any other."""


_OPENER = {")": "(", "]": "[", "}": "{"}
_SECRET_WORD = re.compile(r"pass|pwd|secret|token|key", re.I)
_SNAKE_WORDS = re.compile(r"[A-Za-z]+(?:_[A-Za-z]+)+")


def _quoted(m: re.Match[str], group: str) -> bool:
    start = m.start(group) if group else m.start()
    return start > 0 and m.string[start - 1] in "\"'`"


def _in_template(m: re.Match[str]) -> bool:
    """Inside ``{{ ... }}`` on its line (tldr pages, Jinja, Actions): a placeholder, not a value."""
    before = m.string[max(0, m.start() - 80):m.start()]
    before = before[before.rfind("\n") + 1:]
    return before.rfind("{{") > before.rfind("}}")


def _names_a_secret(value: str) -> bool:
    """``new_password``, ``"FORCE_CHANGE_PASSWORD"``: a variable or enum naming a secret, not
    one."""
    return _SNAKE_WORDS.fullmatch(value) is not None and _SECRET_WORD.search(value) is not None


def _strip_unopened_closers(value: str) -> str:
    """``f(password=pw)``, ``{"password": auth[1]}``: trailing closers the value did not open are
    the code's. The brackets are counted once, so a value of a million ``)`` is one pass."""
    counts = {c: value.count(c) for c in "()[]{}"}
    end = len(value)
    while end and value[end - 1] in _OPENER:
        closer = value[end - 1]
        if counts[closer] <= counts[_OPENER[closer]]:
            break
        counts[closer] -= 1
        end -= 1
    return value[:end]


def _is_literal(m: re.Match[str], value: str, group: str) -> bool:
    """A real literal rather than a placeholder, variable, template or (unquoted) code."""
    if _PLACEHOLDER.match(value) or _in_template(m) or _names_a_secret(value):
        return False
    if _quoted(m, group):
        return True
    bare = _strip_unopened_closers(value.rstrip(":"))  # ``def f(password: str):`` is a signature
    return bool(bare) and not (_UNQUOTED_NON_LITERAL.match(bare) or _PLACEHOLDER.match(bare)
                               or _names_a_secret(bare))


def _random_value(m: re.Match[str], value: str, group: str) -> bool:
    """Tokens and keys are random: long, no spaces, and letters mixed with digits (or high
    entropy)."""
    return (len(value) >= 12 and not any(c.isspace() for c in value) and _is_literal(m, value, group)
            and (_has_digit_and_letter(value) or _entropy(value) >= 3.5))


_LOWER_HEX = re.compile(r"[0-9a-f]{32,}")
"""``sk-`` and 32+ lower-case hex digits (DeepSeek and OpenAI-compatible gateways): random, not a
kebab-case name."""


def _has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _mixed_case(value: str) -> bool:
    return value.lower() != value and value.upper() != value


def _after(before: str, then: Check | None = None) -> Check:
    """A check that the text just before the match ends with ``before`` (a regex), then ``then``."""
    rx = _Regex(r"(?:" + before + r")\Z", re.I)

    def check(m: re.Match[str], value: str, group: str) -> bool:
        return (rx.get().search(m.string, max(0, m.start() - 32), m.start()) is not None
                and (then is None or then(m, value, group)))
    return check


def _value(test: Callable[[str], bool]) -> Check:
    return lambda _m, value, _g: test(value)


# -- vendor patterns: a known prefix or a vendor context; these win over generic detectors -------

_B = r"(?<![A-Za-z0-9_-])"  # the token starts here, not inside a longer run
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _tok(prefix: str, rest: str, run: str = "A-Za-z0-9_-") -> str:
    """``prefix`` then ``rest``, where ``prefix`` (fixed width) does not start inside a longer run
    of ``run`` characters. The look-behind comes after the prefix, not before it: a regex that
    opens with a look-behind makes sre try every offset (~35x slower than searching the literal)."""
    return prefix + "(?<![" + run + "]" + prefix + ")" + rest


def _longer(chars: str, group: str = "") -> dict[str, str]:
    """A token that runs past its pattern's length cap goes on to the end of its characters: the
    whole run is the secret (rather than the first chunk per scrub pass)."""
    return {group: r"(?P<more>" + chars + r"*+)"}


_VENDOR = (
    _pat("anthropic-api-key", _tok("sk-ant-", r"[A-Za-z0-9_-]{32,400}"), runs=["sk-ant-"],
         tails=_longer(r"[A-Za-z0-9_-]")),
    _pat("openai-api-key", _tok("sk-", r"(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{32,400}"),
         runs=["sk-"],
         check=_value(lambda v: _has_digit_and_letter(v) and (_mixed_case(v) or _LOWER_HEX.fullmatch(v[3:]) is not None)),
         tails=_longer(r"[A-Za-z0-9_-]")),
    _pat("github-pat", _tok("ghp_", r"[A-Za-z0-9]{36,255}|") + _tok("github_pat_", r"[A-Za-z0-9_]{40,255}"),
         runs=["ghp_", "github_pat_"], tails=_longer(r"[A-Za-z0-9_]")),
    _pat("github-oauth-token", _tok("gho_", r"[A-Za-z0-9]{36,255}"), runs=["gho_"],
         tails=_longer(r"[A-Za-z0-9]")),
    _pat("github-app-token", _tok("gh[usr]_", r"[A-Za-z0-9]{36,255}"), runs=["ghu_", "ghs_", "ghr_"],
         tails=_longer(r"[A-Za-z0-9]")),
    _pat("aws-access-key-id",
         _tok("(?:AKIA|ASIA|ABIA|ACCA)", r"[A-Z0-9]{16}(?![A-Za-z0-9])", run="A-Za-z0-9"),
         runs=["AKIA", "ASIA", "ABIA", "ACCA"]),
    _pat("aws-secret-access-key",
         r"""(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)["']?[ \t]*"""
         r"""(?::|=)[ \t]*["']?(?P<v>[a-z0-9/+]{40})(?![a-z0-9/+=])""", lower=["secret"], ci=True),
    _pat("stripe-api-key", _tok("(?:sk|rk|pk)_(?:live|test)_", r"[A-Za-z0-9]{20,255}"),
         runs=["_live_", "_test_"], tails=_longer(r"[A-Za-z0-9]")),
    _pat("stripe-webhook-secret", _tok("whsec_", r"[A-Za-z0-9]{32,255}"), runs=["whsec_"],
         tails=_longer(r"[A-Za-z0-9]")),
    _pat("slack-token", _tok("(?:xox[abeoprs]|xapp)-", r"[A-Za-z0-9-]{20,255}"), runs=["xox", "xapp-"],
         check=_value(_has_digit_and_letter), tails=_longer(r"[A-Za-z0-9-]")),
    _pat("slack-webhook-url",
         r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9/_-]{20,255})",
         hints=["hooks.slack.com"], tails=_longer(r"[A-Za-z0-9/_-]", "v")),
    _pat("google-api-key", _tok("AIza", r"[A-Za-z0-9_-]{35}"), runs=["AIza"]),
    _pat("google-oauth-client-secret", _tok("GOCSPX-", r"[A-Za-z0-9_-]{28,64}"), runs=["GOCSPX-"],
         tails=_longer(r"[A-Za-z0-9_-]")),
    _pat("google-oauth-access-token", _tok(r"ya29\.", r"[A-Za-z0-9_-]{30,2048}", run="A-Za-z0-9"),
         hints=["ya29."], tails=_longer(r"[A-Za-z0-9_-]")),
    _pat("gitlab-token", _tok("gl", r"(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat)-[A-Za-z0-9_-]{20,255}"),
         runs=["glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "glft-", "glimt-", "glsoat-"],
         tails=_longer(r"[A-Za-z0-9_-]")),
    _pat("npm-token", _tok("npm_", r"[A-Za-z0-9]{36,255}"), runs=["npm_"], tails=_longer(r"[A-Za-z0-9]")),
    _pat("pypi-token", _tok("pypi-AgE", r"(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,4096}"),
         runs=["pypi-AgE"], tails=_longer(r"[A-Za-z0-9_-]")),
    _pat("twilio-api-key", _tok("SK", r"[0-9a-f]{32}(?![A-Za-z0-9])", run="A-Za-z0-9"), runs=["SK"],
         check=_value(lambda v: _has_digit_and_letter(v[2:]))),
    _pat("twilio-api-key", _tok("AC", r"[0-9a-f]{32}(?![A-Za-z0-9])", run="A-Za-z0-9"), lower=["twilio"]),
    _pat("sendgrid-api-key", _tok(r"SG\.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"), hints=["SG."]),
    _pat("azure-storage-key", r"key[ \t]*=[ \t]*(?P<v>[a-z0-9+/]{40,}={0,2})", lower=["key"], ci=True,
         check=_after("account|sharedaccess")),
    _pat("azure-sas-token", r"[?&]sig=(?P<v>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})", hints=["sig="],
         check=_value(_has_digit_and_letter)),
    _pat("azure-ad-client-secret",
         r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
         hints=["Q~"], check=_value(_has_digit_and_letter)),
    _pat("huggingface-token", _tok("hf_", r"[A-Za-z0-9]{34,255}|") + _tok("api_org_", r"[A-Za-z0-9]{34,255}"),
         runs=["hf_", "api_org_"], check=_value(_mixed_case), tails=_longer(r"[A-Za-z0-9]")),
    _pat("discord-bot-token",
         _B + r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}", lower=["discord"],
         tails=_longer(r"[A-Za-z0-9_-]")),
    _pat("discord-webhook-url", r"discord(?:app)?\.com/api/webhooks/\d+/(?P<v>[A-Za-z0-9_-]{60,100})",
         lower=["discord"], tails=_longer(r"[A-Za-z0-9_-]", "v")),
    _pat("mailgun-api-key", _tok("key-", r"[0-9a-f]{32}(?![A-Za-z0-9])"), runs=["key-"]),
    # The new format has no literal to search for: it is looked for inside long runs only.
    _pat("mailgun-api-key", _B + r"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}(?![A-Za-z0-9_-])", runs=["-"],
         in_runs=50, check=_value(_has_digit_and_letter)),
    _pat("shopify-token", _tok("shp(?:at|ca|pa|ss)_", r"[a-fA-F0-9]{32}"),
         runs=["shpat_", "shpca_", "shppa_", "shpss_"]),
    _pat("digitalocean-token", _tok("do[opr]_v1_", r"[a-f0-9]{64}"), runs=["dop_v1_", "doo_v1_", "dor_v1_"]),
    _pat("heroku-api-key",
         _tok("HRKU-", r"[A-Za-z0-9_-]{30,255}")
         + r"|(?i:heroku)[\w.-]{0,30}?(?i:key|token)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<v>(?i:" + _UUID + "))",
         runs=["HRKU-"], lower=["heroku"], tails=_longer(r"[A-Za-z0-9_-]")),
    _pat("databricks-token", _tok("dapi", r"[a-f0-9]{32}(?:-\d+)?(?![A-Za-z0-9])", run="A-Za-z0-9"),
         runs=["dapi"]),
    _pat("telegram-bot-token", r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])",
         hints=[":AA"]),
    _pat("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", runs=["AGE-SECRET-KEY-"]),
    _pat("hashicorp-vault-token", _tok(r"hv[sb]\.", r"[A-Za-z0-9_-]{24,255}", run="A-Za-z0-9"),
         hints=["hvs.", "hvb."], tails=_longer(r"[A-Za-z0-9_-]")),
    _pat("linear-api-key", _tok("lin_api_", r"[A-Za-z0-9]{40,255}"), runs=["lin_api_"],
         tails=_longer(r"[A-Za-z0-9]")),
    _pat("groq-api-key", _tok("gsk_", r"[A-Za-z0-9]{48,255}"), runs=["gsk_"], tails=_longer(r"[A-Za-z0-9]")),
    _pat("replicate-api-token", _tok("r8_", r"[A-Za-z0-9]{37,255}"), runs=["r8_"],
         tails=_longer(r"[A-Za-z0-9]")),
    _pat("postman-api-key", _tok("PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}"), runs=["PMAK-"]),
    _pat("notion-token",
         _tok("ntn_", r"[A-Za-z0-9]{40,255}|") + _tok("secret_", r"[A-Za-z0-9]{43}(?![A-Za-z0-9])"),
         runs=["ntn_", "secret_"], check=_value(_has_digit_and_letter), tails=_longer(r"[A-Za-z0-9]")),
    _pat("atlassian-api-token", _tok("ATATT3", r"[A-Za-z0-9_=-]{100,2048}"), runs=["ATATT3"],
         tails=_longer(r"[A-Za-z0-9_=-]")),
)

# -- generic detectors -----------------------------------------------------------------------------

_ARMOR_TAIL = (r"(?:(?:[\s>]|\\n)*(?:[A-Za-z][\w-]*+: [^\n]*+"
               r"|[A-Za-z0-9+/=]{4,}+(?=[ \t]*(?:\r?\n|\\n|$))))*")
"""When the END line is missing (a truncated paste), redact the armor headers and base64 lines."""
_ARMOR_BODY = r"(?:(?!-----BEGIN )[\s\S])"
"""Any character up to END, but never across another BEGIN: keeps many unmatched BEGINs linear."""
# A value regex reads at most 512 characters from one start, so a long line holding many starts
# costs linear time (and possessive ``{1,512}+`` never backtracks into the value). A value that
# fills the cap and goes on is read to its end by the pattern's tail, from after the cap.
_QUOTED = (r"""(?:"(?P<v1>[^"\n]{1,512}+)(?:"|(?=[^"\n]))"""
           r"""|'(?P<v2>[^'\n]{1,512}+)(?:'|(?=[^'\n]))"""
           r"""|`(?P<v5>[^`\n]{1,512}+)(?:`|(?=[^`\n]))""")
_STATEMENT_END = r"""(?=[ \t]*+(?:$|[#,;&|`\r]|//))"""
_VALUE = (_QUOTED + r"""|(?P<v3>[^\s"'`,;&|]{1,512}+)(?:""" + _STATEMENT_END
          + r"""|(?=[^\s"'`,;&|]))"""
          + r"""|(?P<v4>(?:[^\s"'`,;&|#/]|/(?!/)){1,512}+)(?=#|//))""")
"""Quoted (a markdown code span counts: ``wifi password: `x` ``), or unquoted and ending the
statement: ``Password: Enter your password`` is prose. A word that does not end the statement
still has a value up to a ``#`` or ``//`` inside it."""
_QUOTED_TAILS = {"v1": r'(?P<more>[^"\n]*+)"', "v2": r"(?P<more>[^'\n]*+)'",
                 "v5": r"(?P<more>[^`\n]*+)`"}
_VALUE_TAILS = {**_QUOTED_TAILS, "v3": r"""(?P<more>[^\s"'`,;&|]*+)""" + _STATEMENT_END}
_WORD_TAILS = {**_QUOTED_TAILS, "v3": r"""(?P<more>[^\s"'`]*+)"""}
"""How a value that filled its 512-character cap goes on: to its closing quote, or to the end of
the word (and the statement); without that ending the match is dropped, as a shorter one would
be."""
_ASSIGN = (r"""(?:["']|\*\*|__)?[ \t]*(?::=|=>|=(?!=)|:(?![:\\/])|\|)(?:\*\*|__)?[ \t]*"""
           + _VALUE)
"""Code, env, YAML, JSON, INI, ``**Password:** x`` and markdown table rows ``| password | x |``."""
_DB_SCHEMES = (r"(?:jdbc:)?(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql"
               r"|sqlserver|oracle|cockroachdb|clickhouse|neo4j(?:\+s)?|couchdbs?|mqtts?|nats|db2"
               r"|snowflake)(?:\+[a-z0-9]+)?")
_URL_USERINFO = r"""://[^\s:/?#@'"<>\[\]]*+:(?P<v>[^\s@/?#'"<>]++)@(?=[\w\[])"""


def _table_row(m: re.Match[str], group: str) -> bool:
    """A ``|`` separator counts only as ``| key | value |`` (a pipeline ``$password | Out-Null``
    is not)."""
    text, start, end = m.string, m.start(), m.end(group)
    before = text[max(0, start - 200):start]
    before = before[before.rfind("\n") + 1:].lstrip()
    after = text[end:end + 200].lstrip(" \t\"'`")
    return "|" in before and after.startswith("|")


_IN_PROSE = _ASSIGN[:-1] + r"""|(?P<v6>[^\s"'`,;&|]{8,64}+)(?=[ \t]))"""
"""``_ASSIGN``, and a value followed by more words on its line (``password: hunter2x9 until
May``); only password keys take it, and only for a value that looks like one
(``_prose_password``)."""


def _assignment(name: str, keys: str, lower: Iterable[str], value_ok: Check,
                before: str | None = None, *, in_prose: bool = False) -> _Pattern:
    """``<...key> = value`` in code, env files, YAML, JSON and INI; only the value is redacted."""
    ok = value_ok if before is None else _after(before, value_ok)

    def check(m: re.Match[str], value: str, group: str) -> bool:
        piped = "|" in m.string[m.end("k"):m.start(group)]
        return (not piped or _table_row(m, group)) and ok(m, value, group)
    return _pat(name, r"(?P<k>" + keys + r")" + (_IN_PROSE if in_prose else _ASSIGN), lower=lower,
                ci=True, check=check, tails=_VALUE_TAILS)


def _password_key(m: re.Match[str], value: str, group: str) -> bool:
    """``pass`` and ``pw`` must be words of their own (not ``bypass``, ``npw``); ``pwd`` a suffix
    (``DB_PWD``, not ``$PWD``)."""
    key, prev = m.group("k").lower(), m.string[m.start() - 1:m.start()]
    separator = m.string[m.end("k"):m.start(group)] if group else ""
    if key == "pass" and (prev.isalpha() or (group in ("v3", "v4") and ":" in separator)):
        return False  # bypass=..., or PASS:HASH (an option syntax, not YAML)
    if key == "pw" and prev.isalnum():
        return False
    if key == "pwd" and prev not in ("_", ".", ";", '"', "'", "-"):
        return False
    if key not in ("pass", "pw", "pwd") and prev.isalnum():
        return False  # ``resenha`` (a review) is not ``senha``
    if group == "v6" and not _prose_password(value):
        return False
    return len(value) >= 4 and _is_literal(m, value, group)


def _prose_password(value: str) -> bool:
    """A word in a sentence is a password when it has letters and digits and a lower-case
    letter: ``hunter2x9`` and ``Tr0ub4dor7Zq`` are, ``SHA256``, ``AES-256`` and ``required`` are
    not."""
    word = value.rstrip(".,:;!?)")
    return (len(word) >= 8 and _has_digit_and_letter(word) and any(c.islower() for c in word)
            and "/" not in word and "." not in word)


def _value_literal(m: re.Match[str], value: str, group: str) -> bool:
    """``<password>x</password>``: the element's text, unless a placeholder."""
    return len(value.strip()) >= 4 and _is_literal(m, value.strip(), group)


_COOKIE_VALUE = re.compile(r"=[ \t]*([^;\s]+)")


def _cookie_values(m: re.Match[str], value: str, group: str) -> bool:
    """``Cookie: sessionid=…``: the header goes whole when any of its values looks random (a
    session id, a token); ``Cookie: theme=dark`` is kept."""
    return not _in_template(m) and any(
        len(v) >= 8 and _has_digit_and_letter(v) and not _PLACEHOLDER.match(v)
        for v in _COOKIE_VALUE.findall(value))


def _after_blank(m: re.Match[str], value: str, group: str) -> bool:
    """``curl ... -u user:pass``: the flag is a word of its own, and the value a literal."""
    return m.string[m.start() - 1:m.start()] in (" ", "\t") and _is_literal(m, value, group)


def _cli_password(flag: str, tools: list[str], line_word: str) -> _Pattern:
    """A tool's password flag (``flag``, a regex) and its value, quoted or one word not starting
    with ``-``, on a line where ``line_word`` (the tool) comes earlier; ``tools`` wake it."""
    return _pat("cli-password", flag + r"""(?:""" + _QUOTED + r"""|(?P<v3>[^\s"'`-][^\s"'`]{0,511}+)))""",
                hints=tools, line_word=line_word, check=_after_blank, tails=_WORD_TAILS)


_B64_PEM = "LS0tLS1CRUdJTi"
"""``-----BEGIN `` in base64: a whole PEM file encoded again (Kubernetes ``tls.key``, kubeconfig
``client-key-data``)."""
_B64_CHARS = re.compile(r"[A-Za-z0-9+/]")
_PEM_HEADER = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----")


def _base64_pem_label(value: str) -> bytes:
    """The label of the PEM block that a base64 run encodes (``b"RSA PRIVATE KEY"``), else b""."""
    head = "".join(_B64_CHARS.findall(value[:160]))[:96]
    try:
        decoded = base64.b64decode(head[: len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return b""
    found = _PEM_HEADER.match(decoded)
    return found.group(1) if found else b""


def _flag_value(m: re.Match[str], value: str, group: str) -> bool:
    """``--password hunter2``, but not the prose "the --password option": a bare lowercase word
    after a space is taken for English unless it has a digit, a capital or a symbol."""
    word = value.rstrip(".,:;!?)")
    if group == "v3" and m.string[m.start(group) - 1] != "=" and word.isalpha() and word.islower():
        return False
    return _is_literal(m, value, group)


_GENERIC = (
    _pat("private-key-block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:" + _ARMOR_BODY + "{0,20000}?"
         r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|" + _ARMOR_TAIL + ")", hints=["PRIVATE KEY"]),
    _pat("pgp-private-key-block", r"-----BEGIN PGP PRIVATE KEY BLOCK-----(?:" + _ARMOR_BODY + "{0,200000}?"
         r"-----END PGP PRIVATE KEY BLOCK-----|" + _ARMOR_TAIL + ")", hints=["PRIVATE KEY"]),
    _pat("private-key-base64",
         _tok(_B64_PEM, r"[A-Za-z0-9+/]*+={0,2}", run="A-Za-z0-9+/=_-")
         + r"(?:(?:\r?\n|\\n)[ \t]*+[A-Za-z0-9+/]++={0,2}(?=[ \t]*+(?:\r?$|\\n)))*+",
         runs=[_B64_PEM], check=_value(lambda v: b"PRIVATE KEY" in _base64_pem_label(v))),
    _pat("database-url-password", _URL_USERINFO, hints=["://"], ci=True,
         check=_after(r"(?<![a-z0-9+.-])" + _DB_SCHEMES, _is_literal)),
    _pat("basic-auth-url", _URL_USERINFO, hints=["://"], ci=True,
         check=_after(r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*", _is_literal)),
    _pat("jwt", _tok("eyJ", r"[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"), runs=["eyJ"]),
    _pat("bearer-token", r"bearer[ \t]+(?P<v>[a-z0-9._~+/=-]{16,4096})", lower=["bearer"], ci=True,
         check=lambda m, v, g: _has_digit_and_letter(v) and _is_literal(m, v, g)),
    _pat("basic-auth-header",
         r"""authorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+(?P<v>[a-z0-9+/]{8,}={0,2})""",
         lower=["authorization"], ci=True),
    _pat("securestring-plaintext", r"convertto-securestring(?:[ \t]+-(?:asplaintext|force|string)"
         r"(?::\$true)?)*[ \t]+" + _QUOTED + ")", lower=["convertto-securestring"], ci=True, check=_is_literal,
         tails=_QUOTED_TAILS),
    _pat("securestring-plaintext", _QUOTED + r")[ \t]*\|[ \t]*convertto-securestring",
         lower=["convertto-securestring"], ci=True, check=_is_literal, tails=_QUOTED_TAILS),
    _pat("cli-password", r"--(?:db-|admin-)?pass(?:word|wd)?(?:=|[ \t]+)" + _QUOTED
         + r"""|(?P<v3>[^\s"'`-][^\s"'`]{0,511}+))""", lower=["pass"], ci=True, check=_flag_value,
         tails=_WORD_TAILS),
    _pat("cli-password", r"-(?:plain)?password[ \t]+" + _QUOTED + ")", lower=["pass"], ci=True,
         check=_is_literal, tails=_QUOTED_TAILS),
    _pat("cli-password", r"sshpass[ \t]+-p[ \t]*" + _QUOTED + r"""|(?P<v3>[^\s"'`]{1,512}+))""",
         lower=["pass"], ci=True, check=_is_literal, tails=_WORD_TAILS),
    # Found at the flag, with ``curl`` looked up earlier on the line through an index of both: a
    # regex starting at ``curl`` would rescan the rest of the line from every ``curl`` on it.
    _pat("cli-password", r"""-(?:u|-user)[ \t]++["']?[^\s:"']++:(?P<v>[^\s"'@]++)""",
         lower=["curl"], ci=True, line_word=r"curl\b", check=_after_blank),
    _pat("netrc-password", r"machine[ \t]+\S+\s+login[ \t]+\S+\s+password[ \t]+(?P<v>\S+)",
         lower=["machine"], ci=True, check=_is_literal),
    # Command-line password flags of particular tools, found at the flag with the tool looked up
    # earlier on the line (as for curl). Case-sensitive: ``mysql -P 3306`` is a port, and a
    # spaced ``mysql -p dbname`` prompts for the password (the word after it is a database).
    _cli_password("-p", ["mysql", "mariadb"], r"\b(?:mysql(?:dump|admin|import|show|slap)?|mariadb(?:-dump)?)\b"),
    _cli_password(r"-p[ \t]++", ["login"],
                  r"\b(?:(?:docker|podman|nerdctl|buildah|skopeo)[ \t]+login|helm[ \t]+registry[ \t]+login)\b"),
    _cli_password(r"-a[ \t]++", ["redis-cli", "valkey-cli", "keydb-cli"], r"\b(?:redis|valkey|keydb)-cli\b"),
    _pat("password-assignment", r"""<(?P<k>pass(?:word|wd|phrase)?|pwd|secret|client_?secret|api_?key|token)"""
         r"""(?:[ \t][^<>\n]{0,200}+)?>(?P<v>[^<\n]{1,512}+)</""", lower=["pass", "pw", "secret", "key", "token"],
         ci=True, check=_value_literal),
    _pat("cookie-header", r"""cookie["']?[ \t]*:[ \t]*["']?(?P<v>[^\s=;'"]{1,64}+=[^\n'"]*+)""",
         lower=["cookie"], ci=True, check=_cookie_values),
    _pat("bearer-token", r"""authorization["']?[ \t]*[:=][ \t]*["']?(?:token|apikey|api-key|key|sso-key)"""
         r"""[ \t]+(?P<v>[a-z0-9._~+/=:-]{8,4096})""", lower=["authorization"], ci=True,
         check=lambda m, v, g: _has_digit_and_letter(v) and _is_literal(m, v, g)),
    _assignment("password-assignment", r"pass(?:word|wd|wort|phrase)?", ["pass"], _password_key,
                in_prose=True),
    _assignment("password-assignment", r"(?:kennwort|contrase(?:ñ|n)a|mot[ -]de[ -]passe|senha|wachtwoord"
                r"|passord|adgangskode|lösenord|salasana|hasło|jelszó)",
                ["kennwort", "contrase", "mot de passe", "mot-de-passe", "senha", "wachtwoord", "passord",
                 "adgangskode", "lösenord", "salasana", "hasło", "jelszó"], _password_key,
                in_prose=True),
    _assignment("password-assignment", r"pwd?", ["pw"], _password_key),  # own regex: a literal prefix
    _assignment("secret-assignment", r"secret", ["secret"], _random_value),
    _assignment("secret-assignment", r"key", ["key"],
                _random_value, before=r"(?:private|signing|encryption|master|secret)[_.-]?"),
    _assignment("token-assignment", r"token(?<!publickeytoken)", ["token"], _random_value),
    _assignment("api-key-assignment", r"key", ["key"], _random_value,
                before=r"(?:api|app|access|subscription|auth|consumer)[_.-]?"),
)

_HEX_NAME, _BASE64_NAME = "high-entropy-hex", "high-entropy-base64"
_PATTERNS = _VENDOR + _GENERIC
_PRIO_NAMES = (*(p.name for p in _PATTERNS), _HEX_NAME, _BASE64_NAME)
"""Index = precedence (lower wins); a detector may be split over several regexes of one name."""
_HEX_PRIO, _BASE64_PRIO = len(_PATTERNS), len(_PATTERNS) + 1
PATTERN_NAMES: tuple[str, ...] = tuple(dict.fromkeys(_PRIO_NAMES))
"""Every name ``scrub`` can report, vendor patterns first, in order of precedence."""


def _by_hint(hints_of: Callable[[_Pattern], frozenset[str]]) -> dict[str, tuple[int, ...]]:
    """Hint -> the patterns it wakes up: a text wakes few, so nothing loops over all of them."""
    hints = sorted(frozenset().union(*(hints_of(p) for p in _PATTERNS)))
    return {h: tuple(i for i, p in enumerate(_PATTERNS) if h in hints_of(p)) for h in hints}


_TEXT_HINTS = _by_hint(lambda p: p.hints)
_LOWER_HINTS = _by_hint(lambda p: p.lower_hints)
_RUN_HINTS = _by_hint(lambda p: p.run_hints)
_ARMOR_PRIO = _PRIO_NAMES.index("private-key-block")  # awake when the text holds "PRIVATE KEY"

# -- high-entropy runs -----------------------------------------------------------------------------

_RUN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_SHAPE_BYTES = bytes(97 if chr(i) in _RUN_CHARS else 61 if i == 61 else 32 for i in range(256))
_LONG = re.compile(b"a" * 19 + rb"a+={0,2}")
"""Long token-like runs (20+ chars of ``[A-Za-z0-9+/_-]``, then ``=`` padding), found on a copy
of the text with every run character mapped to ``a``: sre then scans for a literal, ~4x faster
than a class."""
_HEX = re.compile(r"[0-9a-fA-F]+")
_HAS_UUID = re.compile(_UUID, re.I)
_TOKEN_BREAKS = (" ", "\t", '"', "'", "`", "(", "<", "[")
_HASH_PREFIX = re.compile(r"(?:sha-?\d*|md5)[:-]\Z", re.I)
_SRI = re.compile(r"sha(?:256|384|512)-")
"""Subresource-integrity hashes (``sha384-<base64>``) are one run, prefix included."""
_SECRET_CONTEXT = re.compile(r"key|secret|token|passw|pwd|credential|auth(?!or)|bearer|private|session|cookie")
_HASH_CONTEXT = re.compile(
    r"sha|hash|checksum|digest|commit|md5|fingerprint|thumbprint|etag|guid|uuid|revision|object"
    r"|public|integrity|key ?id|key_id|build|version|nonce")
_SSH_KEY_TYPE = re.compile(r"ssh-|ecdsa-")
_ARMOR_EDGE = re.compile(r"-----(BEGIN|END) ([A-Z0-9 ]+)-----")
_KIND = str.maketrans({**{chr(c): "a" for c in range(97, 123)}, **{chr(c): "A" for c in range(65, 91)},
                       **{chr(c): "0" for c in range(48, 58)}, "+": None, "/": None, "-": None, "_": None})


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in (value.count(c) for c in set(value)))


def _looks_random(core: str) -> bool:
    """Random base64 has near-maximal entropy and switches character class on ~2/3 of positions;
    paths, identifiers and UTF-16 base64 fall short on one or the other."""
    n = len(core)
    if not (any(c.isdigit() for c in core) and core.lower() != core and core.upper() != core):
        return False
    if _entropy(core) < min(4.8, 0.7 * math.log2(n) + 0.65):
        return False
    kinds = core.translate(_KIND)  # separators dropped: kebab-Case-Words-3 would switch a lot
    return sum(a != b for a, b in pairwise(kinds)) / max(1, len(kinds) - 1) >= 0.45


def _public_armor(text: str) -> list[tuple[int, int]]:
    """Spans of PEM/PGP blocks with no private key (certificates, public keys, CMS), in one linear
    pass pairing each BEGIN with the next END of its label (unmatched BEGINs cost nothing extra)."""
    spans: list[tuple[int, int]] = []
    open_at: dict[str, int] = {}
    for m in _ARMOR_EDGE.finditer(text):
        kind, label = m.groups()
        if kind == "BEGIN":
            open_at.setdefault(label, m.start())
        elif label in open_at and "PRIVATE" not in label:
            spans.append((open_at.pop(label), m.end()))
    return spans


def _covered(spans: list[tuple[int, int]], offset: int) -> bool:
    """Whether ``offset`` lies in one of the sorted, non-overlapping ``spans``."""
    i = bisect_left(spans, (offset + 1,)) - 1
    return i >= 0 and spans[i][0] <= offset < spans[i][1]


def _runs(text: str) -> list[tuple[int, int]]:
    """Spans of long token-like runs. ``encode("ascii", "replace")`` maps each non-ASCII character
    to one ``?``, so byte offsets are character offsets."""
    shape = text.encode("ascii", "replace").translate(_SHAPE_BYTES)
    return [m.span() for m in _LONG.finditer(shape)]


_PRIVATE_EDGE = re.compile(r"-----(BEGIN|END) ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----")
_KEY_LINE = re.compile(r"[ \t>]*+(?:[A-Za-z0-9+/]++={0,2}|=[A-Za-z0-9+/]{4})?[ \t]*+\r?")
"""A line of armored key material (base64, or a PGP checksum), or a blank one."""
_LINE_BREAK = re.compile(r"\n|\\n")
_ARMOR_REACH = 200_000
"""How far above an END line its key may start: the PGP block pattern's bound."""


def _orphan_key_ends(text: str) -> list[tuple[int, int, int]]:
    """Spans of private-key END lines whose BEGIN is not in the text (a key split over two PDF
    pages, or only its end pasted), together with the key lines just above them.

    The mirror of the block patterns' truncated-paste tail. Each END looks back no further than
    the previous BEGIN or END line, so the walk is linear however many there are."""
    spans: list[tuple[int, int, int]] = []
    opened, floor = False, 0
    for m in _PRIVATE_EDGE.finditer(text):
        if m.group(1) == "BEGIN":
            opened = True
        elif opened:
            opened = False
        else:
            low = max(floor, m.start() - _ARMOR_REACH)
            breaks = [b.span() for b in _LINE_BREAK.finditer(text, low, m.start())]
            starts = [low, *(end for _, end in breaks)]
            ends = [*(start for start, _ in breaks), m.start()]
            first = m.start()
            for line_start, line_end in zip(reversed(starts), reversed(ends), strict=True):
                line = text[line_start:line_end]
                if _KEY_LINE.fullmatch(line) is None:
                    break
                if line.strip(" \t>\r"):
                    first = line_start
            name = "pgp-private-key-block" if "PGP" in m.group(2) else "private-key-block"
            spans.append((first, m.end(), _PRIO_NAMES.index(name)))
        floor = m.end()
    return spans


_TABLE_SECRET_HEADER = re.compile(
    r"pass(?:word|wd|wort|phrase)?|pwd|pw|kennwort|contrase(?:ñ|n)a|mot de passe|senha|wachtwoord"
    r"|secret|client[ _-]?secret|api[ _-]?key|(?:access[ _-]?|auth[ _-]?)?token", re.I)
_TABLE_RULE = re.compile(r"[ \t]*\|?(?:[ \t]*:?-++:?[ \t]*\|)+(?:[ \t]*:?-++:?[ \t]*)?")
_TABLE_CELL_TRIM = " \t`*_"


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of a markdown table row's cells (between its pipes), in order."""
    line = text[start:end]
    pipes = [i for i, ch in enumerate(line) if ch == "|" and (i == 0 or line[i - 1] != "\\")]
    if line.lstrip()[:1] == "|":
        pipes = pipes[1:]
        first = line.index("|") + 1
    else:
        first = 0
    bounds = [first, *(p + 1 for p in pipes)]
    return [(start + a, start + b - 1) for a, b in pairwise(bounds)] + (
        [(start + bounds[-1], end)] if line[bounds[-1]:].strip() else [])


def _table_columns(text: str) -> list[tuple[int, int, int]]:
    """Cells under a ``password`` (``token``, ``api key``, ``Passwort``...) column of a markdown
    table: ``| service | password |`` / ``|---|---|`` / ``| router | `x` |``. One pass over the
    lines; only single-token literal cells are taken (prose in that column is kept)."""
    spans: list[tuple[int, int, int]] = []
    prio = _PRIO_NAMES.index("password-assignment")
    starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
    ends = [e - 1 for e in starts[1:]] + [len(text)]
    header: tuple[int, int] | None = None
    columns: list[int] = []
    for start, end in zip(starts, ends, strict=True):
        if "|" not in text[start:end]:
            header, columns = None, []
            continue
        if columns:
            cells = _cells(text, start, end)
            for i in columns:
                if i < len(cells):
                    a, b = cells[i]
                    raw = text[a:b]
                    value = raw.strip(_TABLE_CELL_TRIM)
                    if (len(value) >= 4 and not any(c.isspace() for c in value)
                            and not _PLACEHOLDER.match(value) and not _names_a_secret(value)
                            and "{{" not in value):
                        v_start = a + raw.index(value)
                        spans.append((v_start, v_start + len(value), prio))
            continue
        if header is not None and _TABLE_RULE.fullmatch(text, start, end):
            columns = [i for i, (a, b) in enumerate(_cells(text, *header))
                       if _TABLE_SECRET_HEADER.fullmatch(text[a:b].strip(_TABLE_CELL_TRIM)) is not None]
            header = None
            continue
        header = (start, end)
    return spans


def _entropy_spans(text: str, runs: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Spans of high-entropy hex (only in a secret-ish line context) and base64 runs."""
    found: list[tuple[int, int, int]] = []
    armored: list[tuple[int, int]] | None = None
    has_armor = "-----BEGIN" in text  # once per text: per run it made long lines quadratic
    for run_start, run_end in runs:
        if run_end - run_start < 32:
            continue
        raw = text[run_start:run_end]
        core = raw.strip("+/_-")
        start = run_start + len(raw) - len(raw.lstrip("+/_-"))
        bare = core.rstrip("=")
        if len(bare) < 32:
            continue
        line_start = text.rfind("\n", max(0, start - 200), start) + 1
        prefix = text[max(line_start, start - 200):start]
        if _HEX.fullmatch(bare):
            context = prefix.lower()
            if (_has_digit_and_letter(bare) and _entropy(bare) >= 3.0
                    and _SECRET_CONTEXT.search(context) and not _HASH_CONTEXT.search(context)):
                found.append((start, start + len(bare), _HEX_PRIO))
            continue
        token = prefix[max(map(prefix.rfind, _TOKEN_BREAKS)) + 1:]
        if ("://" in token or "base64," in token or "data:" in token or _HASH_PREFIX.search(token)
                or _SRI.match(bare) or _HAS_UUID.search(bare) or not _looks_random(bare)):
            continue
        if bare.startswith("AAAA") and _SSH_KEY_TYPE.search(text, max(0, start - 48), start):
            continue  # an SSH public key
        if bare.startswith(_B64_PEM) and b"PRIVATE" not in _base64_pem_label(bare):
            continue  # a base64-encoded certificate or public key (private ones have a pattern)
        if has_armor:
            if armored is None:
                armored = [(a, b) for a, b, _ in _merge([(a, b, 0) for a, b in _public_armor(text)])]
            if _covered(armored, start):
                continue  # a certificate, public key or CMS message body
        found.append((start, start + len(core), _BASE64_PRIO))
    return found


# -- scanning and replacing ------------------------------------------------------------------------

_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
_NEWLINE = re.compile("\n")


def _find(text: str) -> list[tuple[int, int, int]]:
    """Every candidate secret span as ``(start, end, precedence)``; spans may overlap."""
    lowered = text.lower()
    aligned = len(lowered) == len(text)  # lower() kept every offset, so spans carry over
    runs = _runs(text)
    haystack = "\n".join(text[start:end] for start, end in runs)
    awake: set[int] = set()
    for hints, where in ((_TEXT_HINTS, text), (_LOWER_HINTS, lowered), (_RUN_HINTS, haystack)):
        for hint, prios in hints.items():
            if hint in where:
                awake.update(prios)
    found: list[tuple[int, int, int]] = []
    breaks: list[int] = []  # line starts, built once for every pattern with a line word
    for prio in awake:
        pat = _PATTERNS[prio]
        regex, scanned = pat.regex, text
        if pat.ci_regex is not None:
            regex, scanned = (pat.regex, lowered) if aligned else (pat.ci_regex, text)
        if pat.line_word is not None and not breaks:
            breaks = [-1, *(b.start() for b in _NEWLINE.finditer(text))]
        found.extend(_matches(pat, prio, regex.get(), scanned, text, runs, breaks))
    found.extend(_entropy_spans(text, runs))
    if "|" in text and "--" in text and _TABLE_SECRET_HEADER.search(lowered if aligned else text):
        found.extend(_table_columns(text))
    if _ARMOR_PRIO in awake and "-----END" in text:
        found.extend(_orphan_key_ends(text))
    return found


def _matches(pat: _Pattern, prio: int, regex: re.Pattern[str], scanned: str, text: str,
             runs: list[tuple[int, int]], breaks: list[int]) -> list[tuple[int, int, int]]:
    """One pattern's accepted spans. Each character is read a bounded number of times: values
    stop at a cap and a longer one is read on by its tail once (matches starting inside it are
    skipped), and the line-word test is two bisections into indexes built once per text."""
    if pat.in_runs:
        matches: Iterable[re.Match[str]] = (
            m for s, e in runs if e - s >= pat.in_runs for m in regex.finditer(scanned, s, e))
    else:
        matches = regex.finditer(scanned)
    found: list[tuple[int, int, int]] = []
    tails = pat.tails
    words: list[int] = []
    if pat.line_word is not None:  # (``breaks``: the text's newlines, after a -1 sentinel)
        words = [w.start() for w in pat.line_word.get().finditer(scanned)]
    reach = 0
    for m in matches:
        group = next((g for g in pat.groups if m.start(g) >= 0), "")
        start, end = m.span(group) if group else m.span()
        if start < reach:
            continue  # inside a long value already read to its end
        tail = tails.get(group)
        if tail is not None:  # a value cut at its cap goes on to its end (or the match is void)
            more = tail.get().match(scanned, end)
            if more is None:
                continue
            end = reach = more.end("more")
        if pat.line_word is not None:
            word = bisect_left(words, m.start()) - 1
            line = bisect_left(breaks, m.start()) - 1
            if word < 0 or words[word] < breaks[line]:
                continue
        if start < end and (pat.check is None or pat.check(m, text[start:end], group)):
            found.append((start, end, prio))
    return found


def _merge(spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Union overlapping spans; the merged span keeps the best (lowest) precedence."""
    merged: list[tuple[int, int, int]] = []
    for start, end, prio in sorted(spans):
        if merged and start < merged[-1][1]:
            m_start, m_end, m_prio = merged[-1]
            merged[-1] = (m_start, max(m_end, end), min(m_prio, prio))
        else:
            merged.append((start, end, prio))
    return merged


def _absorb_markers(spans: list[tuple[int, int, int]], markers: list[tuple[int, int]]
                    ) -> list[tuple[int, int, int]]:
    """Grow spans over markers they touch, and drop spans made only of markers (already
    redacted)."""
    out: list[tuple[int, int, int]] = []
    i = 0
    for start, end, prio in spans:
        while i < len(markers) and markers[i][1] <= start:
            i += 1
        if i < len(markers) and markers[i][0] < start:
            start = markers[i][0]
        j, covered = i, 0
        while j < len(markers) and markers[j][0] < end:
            end = max(end, markers[j][1])
            covered += markers[j][1] - markers[j][0]
            j += 1
        if covered < end - start:
            out.append((start, end, prio))
    return _merge(out)


def _scrub_once(text: str, counts: dict[str, int]) -> str:
    spans = _find(text)
    if not spans:
        return text
    spans = _merge(spans)
    if "[REDACTED:" in text:
        spans = _absorb_markers(spans, [m.span() for m in _MARKER.finditer(text)])
        if not spans:
            return text
    parts: list[str] = []
    pos = 0
    for start, end, prio in spans:
        name = _PRIO_NAMES[prio]
        parts += (text[pos:start], "[REDACTED:", name, "]")
        counts[name] = counts.get(name, 0) + 1
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def scrub(text: str) -> Scrubbed:
    """Replace every secret in ``text`` with ``[REDACTED:<pattern-name>]`` and count them by name.

    Never raises: should scanning fail, the whole text becomes ``[REDACTED:scrub-failure]``."""
    counts: dict[str, int] = {}
    try:
        for _ in range(_MAX_PASSES):
            scrubbed = _scrub_once(text, counts)
            if scrubbed is text:
                break
            text = scrubbed
    except Exception:  # noqa: BLE001 - fail closed: never index text we could not scrub
        return Scrubbed("[REDACTED:scrub-failure]", {"scrub-failure": 1})
    return Scrubbed(text, counts)
