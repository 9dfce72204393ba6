"""Credential scrubbing: every secret goes, everything else stays, and scrub is total and
idempotent."""

from __future__ import annotations

import base64
import math
import random
import string
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_secrets import B64, DASHES, HEX, FakeSecret, fake_secrets
from vaultseek.index.credentials import PATTERN_NAMES, Scrubbed, scrub

FAKES = fake_secrets()
GENERIC = {"private-key-block", "pgp-private-key-block", "private-key-base64", "database-url-password",
           "basic-auth-url", "jwt", "bearer-token", "basic-auth-header", "cookie-header", "securestring-plaintext", "cli-password",
           "netrc-password", "password-assignment", "secret-assignment", "token-assignment",
           "api-key-assignment", "high-entropy-hex", "high-entropy-base64"}


def marker(name: str) -> str:
    return f"[REDACTED:{name}]"


def _rand(alphabet: str, n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


KEY16 = _rand(string.ascii_letters, 12, 7) + "4" + _rand(string.digits, 3, 8)
"""A random-looking 16-character key, generated so the source holds no literal one."""


# -- the pattern inventory -------------------------------------------------------------------------

def test_pattern_names_are_unique_kebab_case_vendor_first() -> None:
    assert len(set(PATTERN_NAMES)) == len(PATTERN_NAMES)
    assert all(n == n.lower() and " " not in n and "_" not in n for n in PATTERN_NAMES)
    vendor = [n for n in PATTERN_NAMES if n not in GENERIC]
    assert set(PATTERN_NAMES) - set(vendor) == GENERIC
    assert len(vendor) >= 21 and len(GENERIC) >= 11
    assert list(PATTERN_NAMES[: len(vendor)]) == vendor


def test_every_pattern_has_a_fake_secret() -> None:
    assert {f.pattern for f in FAKES} == set(PATTERN_NAMES)


def test_fake_secrets_are_deterministic() -> None:
    assert fake_secrets() == FAKES


# -- every secret goes, under its own name, and nothing else changes -------------------------------

@pytest.mark.parametrize("fake", FAKES, ids=lambda f: f.pattern)
def test_fake_secret_is_removed_and_named(fake: FakeSecret) -> None:
    result = scrub(fake.line)
    assert fake.secret not in result.text
    assert result.counts == {fake.pattern: 1}
    assert result.text == fake.line.replace(fake.secret, marker(fake.pattern))


@pytest.mark.parametrize("fake", FAKES, ids=lambda f: f.pattern)
def test_fake_secret_is_removed_inside_a_note(fake: FakeSecret) -> None:
    note = f"# Setup\n\nSome prose before.\n\n```\n{fake.line}\n```\n\nAnd after, with [[links]].\n"
    result = scrub(note)
    assert fake.secret not in result.text
    assert result.counts.get(fake.pattern) == 1
    assert result.text.startswith("# Setup\n\nSome prose before.\n\n```\n")
    assert result.text.endswith("\n```\n\nAnd after, with [[links]].\n")


CONTEXT_BOUND = GENERIC | {"aws-secret-access-key", "azure-storage-key", "azure-sas-token",
                          "slack-webhook-url", "discord-bot-token", "discord-webhook-url", "heroku-api-key"}


@pytest.mark.parametrize("fake", [f for f in FAKES if f.pattern not in CONTEXT_BOUND], ids=lambda f: f.pattern)
def test_prefixed_vendor_secret_is_caught_on_its_own(fake: FakeSecret) -> None:
    # A frontmatter value or a heading may hold the bare token, without the line it came with.
    for text in (fake.secret, f"title: {fake.secret}", f"## Keys for {fake.secret}", f"({fake.secret})"):
        assert fake.secret not in scrub(text).text


def test_all_fake_secrets_in_one_note() -> None:
    note = "\n\n".join(f.line for f in FAKES)
    result = scrub(note)
    for fake in FAKES:
        assert fake.secret not in result.text, fake.pattern
    assert set(result.counts) == set(PATTERN_NAMES)


def test_counts_never_contain_secret_text() -> None:
    for fake in FAKES:
        counts = scrub(fake.line).counts
        assert all(name in PATTERN_NAMES and type(n) is int and n > 0 for name, n in counts.items())
        assert fake.secret not in repr(counts)


# -- multi-line blocks -----------------------------------------------------------------------------

def _key_body(seed: int) -> list[str]:
    return [_rand(B64, 64, seed + i) for i in range(5)]


def test_private_key_block_is_removed_whole() -> None:
    body = _key_body(1)
    block = f"{DASHES}BEGIN RSA PRIVATE KEY{DASHES}\n" + "\n".join(body) + f"\n{DASHES}END RSA PRIVATE KEY{DASHES}"
    result = scrub(f"server key:\n\n{block}\n\nInstalled on 2024-01-02.")
    assert result.text == "server key:\n\n[REDACTED:private-key-block]\n\nInstalled on 2024-01-02."
    assert result.counts == {"private-key-block": 1}
    assert not any(line in result.text for line in body)


def test_truncated_private_key_still_loses_its_body() -> None:
    body = _key_body(2)
    text = f"{DASHES}BEGIN PRIVATE KEY{DASHES}\n" + "\n".join(body) + "\n\n(the rest got cut off)"
    result = scrub(text)
    assert not any(line in result.text for line in body)
    assert result.text.endswith("\n\n(the rest got cut off)")


def test_truncated_pgp_key_loses_headers_and_body() -> None:
    body = _key_body(5)
    text = (f"{DASHES}BEGIN PGP PRIVATE KEY BLOCK{DASHES}\nComment: laptop\n\n" + "\n".join(body)
            + "\n\nThat is all I copied.")
    result = scrub(text)
    assert result.counts == {"pgp-private-key-block": 1}
    assert not any(line in result.text for line in body) and "laptop" not in result.text
    assert result.text.endswith("\n\nThat is all I copied.")


def test_json_escaped_service_account_key() -> None:
    body = "\\n".join(_key_body(3))
    text = ('{"type": "service_account", "private_key": "' + f"{DASHES}BEGIN PRIVATE KEY{DASHES}\\n"
            + body + f"\\n{DASHES}END PRIVATE KEY{DASHES}\\n" + '", "client_email": "x@y.iam"}')
    result = scrub(text)
    assert not any(line in result.text for line in _key_body(3))
    assert '"client_email": "x@y.iam"' in result.text


def test_public_certificate_block_is_kept() -> None:
    body = "\n".join(_key_body(4))
    cert = f"{DASHES}BEGIN CERTIFICATE{DASHES}\n{body}\n{DASHES}END CERTIFICATE{DASHES}"
    assert scrub(cert) == Scrubbed(cert, {})


def test_private_key_split_over_two_pages_loses_both_halves() -> None:
    """A PDF's pages are scrubbed one by one: the BEGIN half and the END half must each go."""
    body = [*_key_body(6), _rand(B64, 22, 60) + "=="]
    first = f"Server notes\r\n{DASHES}BEGIN RSA PRIVATE KEY{DASHES}\r\n" + "\r\n".join(body[:3])
    second = "\r\n".join(body[3:]) + f"\r\n{DASHES}END RSA PRIVATE KEY{DASHES}\r\nInstalled 2024."
    pages = [scrub(first), scrub(second)]
    assert not any(line in page.text for line in body for page in pages)
    assert pages[0].text == "Server notes\r\n[REDACTED:private-key-block]"
    assert pages[1] == Scrubbed("[REDACTED:private-key-block]\r\nInstalled 2024.", {"private-key-block": 1})


def test_key_end_after_prose_on_its_line_takes_only_the_marker() -> None:
    text = f"the key ends {DASHES}END PRIVATE KEY{DASHES} here"
    assert scrub(text).text == "the key ends [REDACTED:private-key-block] here"


def _b64_pem(label: str, seed: int) -> str:
    pem = f"{DASHES}BEGIN {label}{DASHES}\n" + "\n".join(_key_body(seed)) + f"\n{DASHES}END {label}{DASHES}\n"
    return base64.b64encode(pem.encode()).decode()


def test_base64_encoded_private_key_wrapped_over_lines() -> None:
    encoded = _b64_pem("PRIVATE KEY", 7)
    lines = [encoded[i:i + 76] for i in range(0, len(encoded), 76)]
    text = "tls.key: |\n  " + "\n  ".join(lines) + "\ntls.crt: none"
    result = scrub(text)
    assert result == Scrubbed("tls.key: |\n  [REDACTED:private-key-base64]\ntls.crt: none", {"private-key-base64": 1})


def test_base64_encoded_certificate_is_kept() -> None:
    line = f"    certificate-authority-data: {_b64_pem('CERTIFICATE', 8)}"
    assert scrub(line) == Scrubbed(line, {})


# -- assignments keep the key, lose the value ------------------------------------------------------

@pytest.mark.parametrize(("line", "expected"), [
    ('password = "hunter2!x"', 'password = "[REDACTED:password-assignment]"'),
    ("PASSWORD: hunter2!x", "PASSWORD: [REDACTED:password-assignment]"),
    ("db.password=hunter2!x # prod", "db.password=[REDACTED:password-assignment] # prod"),
    ("Server=db;Uid=sa;Pwd=hunter2!x;", "Server=db;Uid=sa;Pwd=[REDACTED:password-assignment];"),
    (f"export SECRET_KEY={KEY16}", "export SECRET_KEY=[REDACTED:secret-assignment]"),
    (f'"api_key": "{KEY16}",', '"api_key": "[REDACTED:api-key-assignment]",'),
    (f"X-API-Key: {KEY16}", "X-API-Key: [REDACTED:api-key-assignment]"),
    (f"GITLAB_TOKEN := '{KEY16}'", "GITLAB_TOKEN := '[REDACTED:token-assignment]'"),
])
def test_assignment_keeps_key_name(line: str, expected: str) -> None:
    assert scrub(line).text == expected


@pytest.mark.parametrize(("line", "expected"), [
    # Quoted, a leading "#" or "!" is part of the password; unquoted it is a comment or a YAML tag.
    ('password = "#Secr3t!x"', 'password = "[REDACTED:password-assignment]"'),
    ("password: '!Qaz2wsx'", "password: '[REDACTED:password-assignment]'"),
    ("password: !vault |", "password: !vault |"),
    ("PASSWORD=Secret123", "PASSWORD=[REDACTED:password-assignment]"),
    ("**Password:** hunter2!x", "**Password:** [REDACTED:password-assignment]"),
    ("| VPN password | hunter2!x |", "| VPN password | [REDACTED:password-assignment] |"),
    ("| password | string | The account password. |", "| password | string | The account password. |"),
    ("$env:DB_PASSWORD | Out-Null", "$env:DB_PASSWORD | Out-Null"),
    ("def login(user: str, password: str):", "def login(user: str, password: str):"),
    ("Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey="
     + KEY16 * 3 + "=",
     ("Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey="
      "[REDACTED:azure-storage-key]")),
])
def test_value_edge_cases(line: str, expected: str) -> None:
    assert scrub(line).text == expected


def test_vendor_pattern_wins_inside_a_generic_one() -> None:
    pat = "gh" + "p_" + _rand(string.ascii_letters + string.digits, 36, 5)
    result = scrub(f'password = "{pat}"')
    assert result == Scrubbed('password = "[REDACTED:github-pat]"', {"github-pat": 1})


def test_overlap_is_redacted_as_a_union() -> None:
    pat = "gh" + "p_" + _rand(string.ascii_letters + string.digits, 36, 6)
    result = scrub(f'password = "old {pat}"')
    assert result == Scrubbed('password = "[REDACTED:github-pat]"', {"github-pat": 1})


def test_offsets_survive_lowercasing_that_changes_length() -> None:
    # "İ".lower() is two characters, so case-insensitive patterns run on the original text.
    result = scrub("İstanbul office: DB_PASSWORD=hunter2!x\nmore İ: api_key=" + KEY16)
    assert result.text == ("İstanbul office: DB_PASSWORD=[REDACTED:password-assignment]\n"
                           "more İ: api_key=[REDACTED:api-key-assignment]")


# -- what is deliberately redacted -----------------------------------------------------------------

@pytest.mark.parametrize("line", [
    # A literal in ConvertTo-SecureString is a plaintext password; in a personal vault it may be
    # real.
    '$pw = ConvertTo-SecureString "P@ssw0rd" -AsPlainText -Force',
    "'P@ssw0rd' | ConvertTo-SecureString -AsPlainText -Force",
    # Well-known defaults are still credentials; redacting one costs nothing.
    "postgres://postgres:postgres@localhost:5432/app",
    "password: changeme",
])
def test_literal_example_passwords_are_redacted(line: str) -> None:
    result = scrub(line)
    assert result.counts and "[REDACTED:" in result.text


# -- what must survive -----------------------------------------------------------------------------

SHA1 = _rand(HEX, 40, 10)
SHA256 = _rand(HEX, 64, 11)
UUID = "-".join(_rand(HEX, n, 12 + n) for n in (8, 4, 4, 4, 12))
IMAGE = base64.b64encode(random.Random(13).randbytes(900)).decode()
SRI = base64.b64encode(random.Random(14).randbytes(48)).decode()
SSH_PUB = "AAAAC3NzaC1lZDI1NTE5AAAAI" + _rand(string.ascii_letters + string.digits, 43, 15)

NON_SECRETS = [
    f"Fixed in commit {SHA1[:7]} ({SHA1}), see the changelog.",
    f"https://github.com/PowerShell/PowerShell/commit/{SHA1}",
    f"Correlation id {UUID} in the logs.",
    f"$id = [guid]'{UUID}'",
    f"sha256: {SHA256}  vaultseek-0.1.0.tar.gz",
    f"echo '{SHA256}  vaultseek.tar.gz' | sha256sum -c",
    f"Algorithm : SHA256\nHash      : {SHA256.upper()}\nPath      : C:\\dl\\setup.exe",
    f"docker pull ghcr.io/org/app@sha256:{SHA256}",
    f"Thumbprint: {SHA1.upper()}",
    f"![chart](data:image/png;base64,{IMAGE})",
    f"![tiny](data:image/png;base64,{IMAGE[:120]})",
    f'<script src="app.js" integrity="sha384-{SRI}"></script>',
    f"ssh-ed25519 {SSH_PUB} me@laptop",
    "password: <your password here>",
    "Password: Enter your password and press Enter.",
    "- **Password**: the password of the service account.",
    "password = os.environ['DB_PASSWORD']",
    "password=getpass.getpass()",
    "password: ${{ secrets.DB_PASSWORD }}",
    "token: ${GITHUB_TOKEN}",
    "PASSWORD=$(cat /run/secrets/db)",
    "api_key = settings.api_key",
    "password: ********",
    "$env:PATH += ';C:\\tools'",
    "$cred = Get-Credential\nInvoke-Command -ComputerName srv -Credential (Get-Credential)",
    "$password = Read-Host -AsSecureString",
    "$secure = ConvertTo-SecureString -String $plain -AsPlainText -Force",
    "New-LocalUser -Name u -Password $password -PassThru",
    "passwordless: true\nbypass: enabled\ncd $PWD",
    "Type: SecureString\ntoken: string\nsecret: true",
    "System.Management.Automation, Version=3.0.0.0, PublicKeyToken=31bf3856ad364e35",
    ("See https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.security/"
     "convertto-securestring?view=powershell-7.4#example-2"),
    "https://user@example.com/path and http://[::1]:8080/ and postgres://localhost:5432/db",
    "X509SubjectAlternativeNameExtension Win32_NetworkAdapterConfiguration",
    "The bearer token goes in the Authorization header.",
    "Pass them with the --username and --password options.",
    "user.password = new_password\nconnect(password=proposed_password)\nhide_password=hide_password",
    'auth = {"username": auth[0], "password": auth[1]}',
    "mysqldump --user root --password --all-databases > dump.sql",
    "ssh-rsa\n  AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + _rand(string.ascii_letters + string.digits, 60, 16),
    "License: BSD-3-Clause-No-Military-License and Apache-2.0-With-LLVM-Exception",
    "[REDACTED:password-assignment] was already scrubbed",
    "pwsh -NoProfile -Command Get-Date\nppw=abc123def456",
    "AC" + _rand(HEX, 32, 17) + " is the account SID shown on the console",
    f"A long value that never ends its statement: password={_rand(string.ascii_letters, 600, 18)} and then prose",
    f"Author: someone, 2024-01-02, {SHA1}",
    "```powershell\nSet-Secret -Name db -Secret $value\n$secret = Get-Secret -Name db -AsPlainText\n```",
]


@pytest.mark.parametrize("text", NON_SECRETS)
def test_non_secret_survives_unchanged(text: str) -> None:
    assert scrub(text) == Scrubbed(text, {})


# -- total and idempotent --------------------------------------------------------------------------

FRAGMENTS = [f.line for f in FAKES] + [f.secret for f in FAKES] + NON_SECRETS + [
    "[REDACTED:", "]", "[REDACTED:jwt]", "password = ", '"', "'", "\n", " ", "=", ":", "@", "://",
    "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "İ", "ẞ", "\ud800", "\x00", "eyJ",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_arbitrary_text_never_raises_and_is_idempotent(text: str) -> None:
    once = scrub(text)
    assert isinstance(once.text, str)
    assert scrub(once.text) == Scrubbed(once.text, {})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=12))
def test_mixed_fragments_never_raise_and_are_idempotent(parts: list[str]) -> None:
    glued = scrub("".join(parts))  # glued fragments make odd boundaries: only totality is checked
    assert scrub(glued.text) == Scrubbed(glued.text, {})
    text = "\n".join(parts)
    once = scrub(text)
    assert scrub(once.text) == Scrubbed(once.text, {})
    for fake in FAKES:
        if fake.line in parts and fake.secret not in parts:  # a bare secret alone is not detectable
            assert fake.secret not in once.text, fake.pattern


@pytest.mark.parametrize("text", [f.line for f in FAKES] + NON_SECRETS)
def test_known_inputs_are_idempotent(text: str) -> None:
    once = scrub(text)
    assert scrub(once.text) == Scrubbed(once.text, {})


def test_empty_and_huge_inputs() -> None:
    assert scrub("") == Scrubbed("", {})
    big = ("word " * 200_000) + "x" * 100_000 + "\n" + "=" * 50_000
    assert scrub(big).text == big


@pytest.mark.parametrize("text", [
    f"{DASHES}BEGIN PRIVATE KEY{DASHES}" + " " * 200_000 + "x",
    f"{DASHES}BEGIN PGP PRIVATE KEY BLOCK{DASHES}\n" + "\n" * 100_000 + "x",
    f"{DASHES}BEGIN CERTIFICATE{DASHES}\n" * 2_000 + _rand(B64, 40, 20) + "x9Q",
    ("password=" + "a" * 600 + " ") * 2_000,
    "://a:b@" * 20_000,
    "-" * 200_000,
    f"{DASHES}BEGIN PRIVATE KEY{DASHES}\n" * 10_000,
    f"{DASHES}BEGIN PGP PRIVATE KEY BLOCK{DASHES}\n" * 10_000,
])
def test_pathological_inputs_stay_fast(text: str) -> None:
    started = time.perf_counter()
    once = scrub(text)
    assert scrub(once.text).text == once.text
    assert time.perf_counter() - started < 5


def test_false_positive_rate_on_real_documentation() -> None:
    """The PowerShell reference (3,088 real pages, full of GUIDs, hashes and example code)
    must come through nearly untouched: only literal example passwords may be redacted."""
    from conftest import SHARED_DATA

    root = SHARED_DATA / "powershell-docs" / "reference"
    if not root.is_dir():
        pytest.skip(f"{root} is not available")
    files = sorted(root.rglob("*.md"))
    flagged: dict[str, int] = {}
    kinds: dict[str, int] = {}
    for path in files:
        counts = scrub(path.read_text("utf-8", errors="replace")).counts
        if counts:
            flagged[str(path.relative_to(root))] = sum(counts.values())
            for name, n in counts.items():
                kinds[name] = kinds.get(name, 0) + n
    rate = len(flagged) / len(files)
    print(f"\nfalse-positive check: {len(flagged)}/{len(files)} files ({rate:.2%}) redacted: {kinds}")  # noqa: T201 - shown with pytest -s
    assert len(files) > 3000
    assert rate < 0.01
    # What is flagged is literal example passwords, never GUIDs, hashes or identifiers.
    assert set(kinds) <= {"securestring-plaintext", "password-assignment"}


# -- linear time -----------------------------------------------------------------------------------
# Each check times scrub on a line and on the same line 8x longer, in process CPU time (the best of
# three, so other processes on the machine barely matter): linear scrubbing takes ~8x as long, a
# quadratic scan ~64x. The bound is 3x8, with a 2 ms floor on the small run so that timer noise on
# tiny inputs cannot fail it.

def _cpu_seconds(text: str) -> float:
    best = math.inf
    for _ in range(3):
        started = time.process_time()
        scrub(text)
        best = min(best, time.process_time() - started)
    return best


def _assert_linear(unit: str, size: int = 8_000, factor: int = 8) -> None:
    small = unit * (size // len(unit) + 1)
    small_s, big_s = _cpu_seconds(small), _cpu_seconds(small * factor)
    assert big_s < 3 * factor * max(small_s, 0.002), (unit, small_s, big_s)


def _curl_commands(seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(f"curl -sS -X POST -H 'Content-Type: application/json' -d '{{\"n\": {rng.randint(0, 999)}}}' "
                    f"https://api.example.com/v1/items/{rng.randint(0, 9999)}" for _ in range(40))


@pytest.mark.parametrize("unit", [
    "curl ",  # the report: one line of "curl curl curl ..."
    _curl_commands(1),  # ordinary curl commands joined on one line
    "curl -u a:b ", "HRKU-", "gldt-", "pass=", "password=\"", "key: ", "pw: ", "sshpass -p ",
    f"{DASHES}END PRIVATE KEY{DASHES}\nAbCd\n", "LS0tLS1CRUdJTi", "sk-ant-", "://a:", "Q~1",
], ids=lambda unit: repr(unit[:16]))
def test_scrub_time_grows_linearly(unit: str) -> None:
    _assert_linear(unit)


ADVERSARIAL_PIECES = [
    "curl", "-u", "--user", "password", "pass", "pw", "pwd", "key", "token", "secret", "api_key", "bearer",
    "machine", "login", "://", "@", "sk-ant-", "ghp_", "HRKU-", "gldt-", "xoxb-", "LS0tLS1CRUdJTi", "SK", "key-",
    f"{DASHES}BEGIN PRIVATE KEY{DASHES}", f"{DASHES}END PRIVATE KEY{DASHES}", "PGP", "Q~", "AKIA", "hvs.",
    "heroku", "twilio", "discord", "convertto-securestring", "--password", "sshpass", "-p", "sig=", "eyJ",
    "=", ":", ":=", "|", '"', "'", "`", " ", "\t", "\n", "\\n", "a", "A1", "0f", "Zz9+/", "#", "//", "{{", "$",
]


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(ADVERSARIAL_PIECES), min_size=1, max_size=4).map("".join))
def test_scrub_time_grows_linearly_on_adversarial_repetitions(unit: str) -> None:
    _assert_linear(unit)


FILLER = "curl " * 2_000 + "password=" * 500 + "HRKU-" * 400


@pytest.mark.parametrize("fake", FAKES, ids=lambda f: f.pattern)
def test_fake_secret_is_caught_beside_adversarial_text(fake: FakeSecret) -> None:
    result = scrub(f"{FILLER}\n{fake.line}\n{FILLER}")
    assert fake.secret not in result.text
    assert result.counts.get(fake.pattern, 0) >= 1
