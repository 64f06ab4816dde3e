"""Realistic fake credentials of many providers, with fresh random bodies on every call.

Each is `Credential(provider, text, secret)`: `text` is how it shows up (a bare token, an
`.env` line, a JSON field, a connection string, a URL, a key block) and `secret` is the
random part that must never appear in anything Invincat writes or sends elsewhere. The
shapes follow the providers' documented formats (prefix, alphabet, length), not the
redactor's rules, so a test cannot pass by matching a list tuned to it.
"""

from __future__ import annotations

import base64
import json
import secrets
import string
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Credential:
    provider: str
    text: str
    secret: str


def rand(n: int, alphabet: str = ALNUM) -> str:
    # Both cases and a digit up front, so a short body is never an ordinary word.
    while True:
        body = "".join(secrets.choice(alphabet) for _ in range(n))
        if alphabet is not ALNUM or n < 8:
            return body
        if any(c.isdigit() for c in body) and any(c.isupper() for c in body):
            return body


def _b64json(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def _private_key(label: str) -> tuple[str, str]:
    lines = [rand(64, B64) for _ in range(6)]
    block = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"
    return block, lines[2]


def credentials() -> list[Credential]:
    """Over 40 formats from over 30 providers, fresh on every call."""
    out: list[Credential] = []

    def add(provider: str, text: str, secret: str | None = None) -> None:
        out.append(Credential(provider, text, secret if secret is not None else text))

    add("stripe secret key", "sk_live_" + rand(99))
    add("stripe restricted key", "rk_live_" + rand(99))
    add("google api key", "AIza" + rand(35, B64URL))
    add("github classic token", "ghp_" + rand(36))
    add("github oauth token", "gho_" + rand(36))
    add("github fine-grained token", "github_pat_" + rand(22) + "_" + rand(59))
    add("gitlab token", "glpat-" + rand(20, B64URL))
    add("npm token", "npm_" + rand(36))
    add("pypi token", "pypi-AgEIcHlwaS5vcmc" + rand(140, B64URL))
    add("slack bot token", f"xoxb-{rand(12, string.digits)}-{rand(13, string.digits)}-{rand(24)}")
    hook = rand(24)
    add(
        "slack webhook",
        f"https://hooks.slack.com/services/T{rand(10, UPPER_DIGITS)}"
        f"/B{rand(10, UPPER_DIGITS)}/{hook}",
        hook,
    )
    add(
        "discord bot token",
        secrets.choice("MNO") + rand(25, B64URL) + "." + rand(6, B64URL) + "." + rand(38, B64URL),
    )
    hook = rand(68, B64URL)
    add(
        "discord webhook",
        f"https://discord.com/api/webhooks/{rand(18, string.digits)}/{hook}",
        hook,
    )
    bot = "AA" + rand(33, B64URL)
    add("telegram bot token", f"{rand(10, string.digits)}:{bot}", bot)
    add("twilio api key", "SK" + rand(32, HEX))
    token = rand(32, HEX)
    add("twilio auth token", f"TWILIO_AUTH_TOKEN={token}", token)
    add("sendgrid key", f"SG.{rand(22, B64URL)}.{rand(43, B64URL)}")
    add("mailgun key", "key-" + rand(32, HEX))
    add("mailchimp key", rand(32, HEX) + "-us" + str(secrets.randbelow(20) + 1))
    add("shopify token", "shpat_" + rand(32, HEX))
    add("square access token", "EAAA" + rand(60, B64URL))
    add("aws access key id", "AKIA" + rand(16, UPPER_DIGITS))
    aws_secret = rand(40, B64)
    add("aws secret key", f"aws_secret_access_key = {aws_secret}", aws_secret)
    account_key = base64.b64encode(secrets.token_bytes(64)).decode()
    add(
        "azure storage connection string",
        "DefaultEndpointsProtocol=https;AccountName=prodassets;"
        f"AccountKey={account_key};EndpointSuffix=core.windows.net",
        account_key[10:50],
    )
    key_block, key_line = _private_key("PRIVATE KEY")
    service_account = {
        "type": "service_account",
        "project_id": "billing-prod",
        "private_key_id": rand(40, HEX),
        "private_key": key_block + "\n",
        "client_email": "deployer@billing-prod.iam.gserviceaccount.com",
    }
    add("gcp service account", json.dumps(service_account, indent=2), key_line)
    add("digitalocean token", "dop_v1_" + rand(64, HEX))
    add("heroku api key", "HRKU-AA" + rand(58, B64URL))
    add("hugging face token", "hf_" + rand(34, string.ascii_letters))
    add("openai project key", "sk-proj-" + rand(74, B64URL) + "T3BlbkFJ" + rand(74, B64URL))
    add("anthropic key", "sk-ant-api03-" + rand(93, B64URL) + "AA")
    header = _b64json({"alg": "HS256", "typ": "JWT"})
    payload = _b64json({"sub": rand(12), "role": "admin", "iat": 1767225600})
    signature = rand(43, B64URL)
    add("jwt", f"{header}.{payload}.{signature}", signature)
    block, line = _private_key("OPENSSH PRIVATE KEY")
    add("ssh private key", block, line)
    password = rand(20)
    add("postgres url", f"postgres://app:{password}@db.internal:5432/prod", password)
    password = rand(20)
    add("redis url", f"rediss://default:{password}@cache.example.net:6380/0", password)
    add("atlassian token", "ATATT3xFfGF0" + rand(180, B64URL))
    add("databricks token", "dapi" + rand(32, HEX))
    add("vault token", "hvs." + rand(90, B64URL))
    add("linear key", "lin_api_" + rand(40))
    add("groq key", "gsk_" + rand(52))
    add("postman key", f"PMAK-{rand(24, HEX)}-{rand(34, HEX)}")
    value = rand(32)
    add("generic env secret", f"PAYMENTS_SIGNING_KEY={value}", value)
    value = rand(28)
    add("json api key", json.dumps({"service": "geo", "api_key": value}), value)
    value = rand(40, B64URL)
    add("bearer header", f"Authorization: Bearer {value}", value)
    return out
