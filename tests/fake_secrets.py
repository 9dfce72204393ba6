"""Realistic fake secrets, one or more for every pattern in
``vaultseek.index.credentials.PATTERN_NAMES``.

They are generated at call time from a seeded RNG and assembled from pieces, so this repository
never contains a literal that a secret scanner (or a human) would take for a real key. Each sample
says which pattern must report it, the note line it sits in, and the exact secret substring, so
tests can assert that no byte of it survives scrubbing or indexing.

Vendor tokens with a fixed prefix (the first samples: Anthropic, OpenAI, GitHub...) are caught even
on their own, and so are formats distinctive by their shape (a Twilio ``SK`` key, a new-format
Mailgun key, an Azure AD client secret); context-bound ones (an AWS secret key, a Twilio account
SID, passwords, high-entropy hex) are only recognisable with the ``line`` around them.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = DIGITS + "abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
DASHES = "-" * 5


@dataclass(frozen=True, slots=True)
class FakeSecret:
    """``secret`` occurs in ``line``; scrubbing ``line`` must remove it and report ``pattern``."""

    pattern: str
    line: str
    secret: str


class _Gen:
    """Draws characters deterministically; ``mixed`` guarantees upper, lower and digit are
    present."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def mixed(self, n: int, alphabet: str = ALNUM) -> str:
        body = list(self.chars(LOWER, 1) + self.chars(UPPER, 1) + self.chars(DIGITS, 1)
                    + self.chars(alphabet, n - 3))
        self.rng.shuffle(body)
        return "".join(body)

    def uuid(self) -> str:
        return "-".join(self.chars(HEX, n) for n in (8, 4, 4, 4, 12))

    def password(self, n: int = 14) -> str:
        return self.mixed(n - 2) + self.chars("!*^~", 1) + self.chars(DIGITS, 1)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _armored(label: str, body: str) -> str:
    return f"{DASHES}BEGIN {label}{DASHES}\n{body}\n{DASHES}END {label}{DASHES}"


def fake_secrets(seed: int = 20240611) -> list[FakeSecret]:
    """Every pattern at least once, each secret embedded in a line as it would appear in a note."""
    g = _Gen(seed)
    h = _Gen(seed + 1)  # samples added later draw from their own stream, so older ones stay put
    out: list[FakeSecret] = []

    def add(pattern: str, secret: str, template: str) -> None:
        out.append(FakeSecret(pattern, template.replace("{}", secret), secret))

    # -- vendor ----------------------------------------------------------------------------------
    add("anthropic-api-key", "sk-" + "ant-api03-" + g.mixed(93, B64URL) + "AA",
        "Claude key for the side project: {} (rotate in March)")
    add("openai-api-key", "sk-" + "proj-" + g.mixed(120, B64URL), "export OPENAI_API_KEY={}")
    add("openai-api-key", "sk-" + g.mixed(48), "old key was {} before the migration")
    add("github-pat", "gh" + "p_" + g.mixed(36), "git remote set-url origin https://{}@github.com/me/notes.git")
    add("github-pat", "github" + "_pat_" + g.mixed(22) + "_" + g.mixed(59), "fine-grained PAT: {}")
    add("github-oauth-token", "gh" + "o_" + g.mixed(36), "oauth token from the device flow {}")
    add("github-app-token", "gh" + "s_" + g.mixed(36), "installation token {} expires in 1h")
    add("aws-access-key-id", "AK" + "IA" + g.chars(UPPER + "234567", 15) + "7",
        "aws_access_key_id = {}")
    add("aws-secret-access-key", g.mixed(40, B64), "aws_secret_access_key = {}")
    add("stripe-api-key", "sk" + "_live_" + g.mixed(24), "Stripe live secret: {}")
    add("stripe-api-key", "rk" + "_test_" + g.mixed(24), "restricted test key {} for CI")
    add("stripe-webhook-secret", "wh" + "sec_" + g.mixed(32), "webhook signing secret is {}")
    add("slack-token", "xo" + "xb-" + g.chars(DIGITS, 12) + "-" + g.chars(DIGITS, 13) + "-" + g.mixed(24),
        "slack bot token {}")
    add("slack-webhook-url", "T" + g.chars(UPPER + DIGITS, 8) + "/B" + g.chars(UPPER + DIGITS, 10)
        + "/" + g.mixed(24), "alerts go to https://hooks.slack.com/services/{}")
    add("google-api-key", "AI" + "za" + g.mixed(35, B64URL), "maps key {} (restricted to our domain)")
    add("google-oauth-client-secret", "GOC" + "SPX-" + g.mixed(28, B64URL), "client secret {}")
    add("google-oauth-access-token", "ya" + "29." + g.mixed(120, B64URL), "access token {}")
    add("gitlab-token", "gl" + "pat-" + g.mixed(20, B64URL), "gitlab: {}")
    add("npm-token", "np" + "m_" + g.mixed(36), "//registry.npmjs.org/:_authToken={}")
    pypi_head = base64.b64encode(b"\x02\x01\x08" + b"pypi.org").decode().rstrip("=")
    add("pypi-token", "py" + "pi-" + pypi_head + g.mixed(150, B64URL), "password = {}")
    add("twilio-api-key", "S" + "K" + g.chars(HEX, 32), "TWILIO_API_KEY={}")
    add("twilio-api-key", "S" + "K" + h.chars(HEX, 32), "API key SID for the SMS sender: {}")
    add("sendgrid-api-key", "S" + "G." + g.mixed(22, B64URL) + "." + g.mixed(43, B64URL),
        "sendgrid key: {}")
    add("azure-storage-key", g.mixed(86, B64) + "==",
        "DefaultEndpointsProtocol=https;AccountName=notesbackup;AccountKey={};EndpointSuffix=core.windows.net")
    add("azure-sas-token", g.mixed(40, ALNUM + "%") + "%3D",
        "https://notesbackup.blob.core.windows.net/c/a.zip?sv=2022-11-02&sr=b&sp=r&sig={}")
    add("azure-ad-client-secret", h.mixed(3) + h.chars(DIGITS, 1) + "Q" + "~" + h.mixed(33, ALNUM + "_~.-") + "x",
        "The app registration's client secret is {} and it expires in June.")
    add("huggingface-token", "h" + "f_" + g.mixed(34, LOWER + UPPER), "HF token {}")
    add("discord-bot-token", "M" + g.mixed(25, B64URL) + "." + g.mixed(6, B64URL) + "." + g.mixed(38, B64URL),
        "discord bot: {}")
    add("discord-webhook-url", g.mixed(68, B64URL),
        "https://discord.com/api/webhooks/" + g.chars(DIGITS, 18) + "/{}")
    add("mailgun-api-key", "ke" + "y-" + g.chars(HEX, 32), "mailgun {}")
    add("mailgun-api-key", "-".join(h.chars(HEX, n) for n in (32, 8, 8)), "sending key (new format) {} for eu")
    add("shopify-token", "sh" + "pat_" + g.chars(HEX, 32), "shopify admin token {}")
    add("digitalocean-token", "do" + "p_v1_" + g.chars(HEX, 64), "doctl auth init -t {}")
    add("heroku-api-key", g.uuid(), "HEROKU_API_KEY={}")
    add("heroku-api-key", "HR" + "KU-" + g.mixed(60, B64URL), "heroku token {}")
    add("databricks-token", "da" + "pi" + g.chars(HEX, 32), "databricks PAT {}")
    add("telegram-bot-token", g.chars("123456789", 1) + g.chars(DIGITS, 9) + ":A" + "A" + g.mixed(33, B64URL),
        "telegram bot {} for alerts")
    add("age-secret-key", "AGE-" + "SECRET-KEY-1" + g.chars(UPPER + DIGITS, 58), "backup identity: {}")
    add("hashicorp-vault-token", "hv" + "s." + g.mixed(90, B64URL), "VAULT_TOKEN={}")
    add("linear-api-key", "lin" + "_api_" + g.mixed(40), "linear {}")
    add("groq-api-key", "gs" + "k_" + g.mixed(52), "groq {}")
    add("replicate-api-token", "r" + "8_" + g.mixed(37), "replicate {}")
    add("postman-api-key", "PM" + "AK-" + g.chars(HEX, 24) + "-" + g.chars(HEX, 34), "postman {}")
    add("notion-token", "nt" + "n_" + g.chars(DIGITS, 11) + g.mixed(35), "notion integration {}")
    add("atlassian-api-token", "ATA" + "TT3" + g.mixed(180, B64URL), "jira token {}")

    # -- generic ---------------------------------------------------------------------------------
    body = "\n".join(g.mixed(64, B64) for _ in range(6)) + "\n" + g.mixed(20, B64) + "=="
    add("private-key-block", _armored("OPENSSH " + "PRIVATE KEY", body), "deploy key:\n{}\nend of key")
    pgp_body = "\n" + "\n".join(g.mixed(64, B64) for _ in range(8)) + "\n=" + g.mixed(4, B64)
    add("pgp-private-key-block", _armored("PGP " + "PRIVATE KEY BLOCK", pgp_body), "my gpg key\n{}\n")
    # The second half of a key whose BEGIN line is on the previous page of a PDF.
    key_end = "\n".join(h.mixed(64, B64) for _ in range(3)) + "\n" + h.mixed(24, B64) + "=="
    add("private-key-block", f"{key_end}\n{DASHES}END RSA " + f"PRIVATE KEY{DASHES}", "(page 2)\n{}\nInstalled 2024.")
    pem = _armored("RSA " + "PRIVATE KEY", "\n".join(h.mixed(64, B64) for _ in range(20)) + "\n" + h.mixed(40, B64))
    add("private-key-base64", base64.b64encode(pem.encode()).decode(), "  tls.key: {}")
    add("private-key-base64", base64.b64encode(pem.replace("RSA ", "EC ").encode()).decode(),
        "    client-key-data: {}")
    add("database-url-password", g.mixed(20), "DATABASE_URL=postgres://app:{}@db.internal:5432/app")
    add("database-url-password", g.mixed(16), "mongo: mongodb+srv://admin:{}@cluster0.example.net/notes")
    add("basic-auth-url", g.mixed(18), "mirror at https://deploy:{}@git.example.com/repo.git")
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = _b64url(json.dumps({"sub": g.chars(DIGITS, 10), "name": "me", "iat": 1700000000}).encode())
    add("jwt", header + "." + claims + "." + g.mixed(43, B64URL), "session cookie value {} from devtools")
    add("bearer-token", g.mixed(40, B64URL + "."),
        'curl -H "Authorization: Bearer {}" https://api.example.com/v1/notes')
    add("basic-auth-header", base64.b64encode(f"deploy:{g.password()}".encode()).decode(),
        "Authorization: Basic {}")
    add("securestring-plaintext", g.password(),
        '$pw = ConvertTo-SecureString -String "{}" -AsPlainText -Force')
    add("cli-password", g.password(), "mysql -u root --password={} notes_db")
    add("cli-password", g.password(), "curl -u admin:{} https://nas.local/api")
    add("netrc-password", g.password(), "machine api.example.com login deploy password {}")
    add("password-assignment", g.password(), 'DB_PASSWORD="{}"')
    add("password-assignment", g.password(), "  password: {}")
    add("password-assignment", h.password(), "wifi pw: {}")
    add("password-assignment", h.mixed(700, ALNUM + "!*^~"), 'vault_password = "{}"')
    add("secret-assignment", g.mixed(32), "client_secret: {}")
    add("token-assignment", g.mixed(40), 'access_token = "{}"')
    add("token-assignment", h.mixed(900, B64URL + "."), "REFRESH_TOKEN={}")
    add("api-key-assignment", g.mixed(32), '{"api_key": "{}", "region": "eu"}')
    add("high-entropy-hex", g.chars(HEX, 61) + "a1f", "the old session key was {} until rotation")
    add("high-entropy-base64", g.mixed(44, B64), "restic repository unlock material {} (offline copy)")
    add("high-entropy-base64", h.mixed(800, B64), "sealed recovery blob {} (printed copy in the safe)")

    # -- forms added later (issue 29), from their own stream ------------------------------------
    k = _Gen(seed + 2)
    add("openai-api-key", "sk-" + k.chars(HEX, 31) + "a", "deepseek key {} for the summariser")
    add("password-assignment", k.password(), "wifi password: `{}`")
    add("password-assignment", k.password(), "| router | password | `{}` |")
    add("password-assignment", k.password(), "**Password:** `{}`")
    add("password-assignment", k.password(), "<password>{}</password>")
    add("password-assignment", k.password(), "WLAN-Passwort: {}")
    add("password-assignment", k.password(), "contraseña: {}")
    add("password-assignment", k.password(), "mot de passe : {}")
    add("cli-password", k.password(), "mysql -u root -p{} notes_db")
    add("cli-password", k.password(), "docker login -u deploy -p {} registry.example.com")
    add("cli-password", k.password(), "redis-cli -h cache.internal -a {} ping")
    add("bearer-token", k.chars(HEX, 39) + "f", "Authorization: Token {}")
    add("cookie-header", "sessionid=" + k.mixed(32) + "; csrftoken=" + k.mixed(32),
        "curl -H 'Cookie: {}' https://app.example.com/admin")
    return out
