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
import re
import secrets
import string
from collections.abc import Callable
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


_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z_]+\]")
CHUNK = 12


def leaked(text: str, creds: list[Credential]) -> list[str]:
    """The providers of `creds` whose secret, or any 12-character piece of it, is in
    `text` (a secret cut in half before redaction leaves such a piece). Placeholders are
    ignored: `[REDACTED:vercel_blob_token]` names a prefix, not the secret."""
    text = _PLACEHOLDER.sub(" ", text)
    return [
        c.provider
        for c in creds
        if any(c.secret[i : i + CHUNK] in text for i in range(max(1, len(c.secret) - CHUNK + 1)))
    ]


def current_formats() -> list[Credential]:
    """Only the formats added for issue 23 (fresh)."""
    out: list[Credential] = []

    def add(provider: str, text: str, secret: str | None = None) -> None:
        out.append(Credential(provider, text, secret if secret is not None else text))

    add_current_formats(add)
    return out


def credentials() -> list[Credential]:
    """Over 90 formats from over 80 providers, fresh on every call."""
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
    add_current_formats(add)
    return out


def add_current_formats(add: Callable[..., None]) -> None:
    """Formats of providers added for issue 23 (and ones detect-secrets lacks)."""
    add("airtable personal access token", "pat" + rand(14) + "." + rand(64, HEX))
    add("supabase access token", "sbp_" + rand(40, HEX))
    add("notion integration token", "ntn_" + rand(46))
    add("gitlab deploy token", "gldt-" + rand(20, B64URL))
    app = f"xapp-1-A{rand(10, UPPER_DIGITS)}-{rand(13, string.digits)}-"
    add("slack app token", app + rand(64, HEX))
    add("stripe webhook secret", "whsec_" + rand(32))
    add("figma token", "figd_" + rand(40, B64URL))
    add("planetscale token", "pscale_tkn_" + rand(43, B64URL))
    add("planetscale password", "pscale_pw_" + rand(43, B64URL))
    add("planetscale oauth token", "pscale_oauth_" + rand(43, B64URL))
    add("cloudflare origin ca key", "v1.0-" + rand(24, HEX) + "-" + rand(146, HEX))
    value = rand(40, B64URL)
    add("cloudflare api token", f"CLOUDFLARE_API_TOKEN={value}", value)
    add("vercel blob token", "vercel_blob_rw_" + rand(16) + "_" + rand(30))
    value = rand(24)
    add("vercel token", f"VERCEL_TOKEN={value}", value)
    add("netlify token", "nfp_" + rand(40))
    add("openrouter key", "sk-or-v1-" + rand(64, HEX))
    add("langsmith key", "lsv2_pt_" + rand(32, HEX) + "_" + rand(10, HEX))
    add("pinecone key", "pcsk_" + rand(6) + "_" + rand(63))
    add("tailscale auth key", "tskey-auth-" + rand(17) + "-" + rand(33))
    add("render api key", "rnd_" + rand(32))
    add("neon api key", "napi_" + rand(64, string.ascii_lowercase + string.digits))
    add("resend key", "re_" + rand(8) + "_" + rand(24))
    add("docker hub token", "dckr_pat_" + rand(27, B64URL))
    add("rubygems key", "rubygems_" + rand(48, HEX))
    add("clojars token", "CLOJARS_" + rand(60, string.ascii_lowercase + string.digits))
    add("sonarqube token", "sqp_" + rand(40, HEX))
    add("sourcegraph token", "sgp_" + rand(16, HEX) + "_" + rand(40, HEX))
    add("buildkite token", "bkua_" + rand(40, HEX))
    add("contentful token", "CFPAT-" + rand(43, B64URL))
    add("dynatrace token", f"dt0c01.{rand(24, UPPER_DIGITS)}.{rand(64, UPPER_DIGITS)}")
    add("frameio token", "fio-u-" + rand(64, B64URL))
    add("easypost key", "EZAK" + rand(54))
    add("shippo token", "shippo_live_" + rand(40, HEX))
    add("typeform token", "tfp_" + rand(59, B64URL))
    add("prefect key", "pnu_" + rand(36))
    add("readme key", "rdme_" + rand(70, string.ascii_lowercase + string.digits))
    add("scalingo token", "tk-us-" + rand(48, B64URL))
    add("adafruit key", "aio_" + rand(28))
    add("infracost key", "ico-" + rand(32))
    add("hugging face org token", "api_org_" + rand(34, string.ascii_letters))
    add("1password service account", "ops_eyJ" + rand(200, B64URL))
    add("mapbox secret token", "sk.eyJ1Ijoi" + rand(60, B64URL) + "." + rand(22, B64URL))
    add("dropbox token", "sl." + rand(140, B64URL))
    add("octopus deploy key", "API-" + rand(26, UPPER_DIGITS))
    add("twitter bearer token", "A" * 22 + rand(90))
    add("yandex oauth token", "y0_" + rand(55, B64URL))
    add("harness token", f"pat.{rand(22)}.{rand(24)}.{rand(20)}")
    add("grafana service account", "glsa_" + rand(32) + "_" + rand(8, HEX))
    add("doppler token", "dp.pt." + rand(43))
    add("sentry token", "sntrys_eyJ" + rand(120, B64URL))
    add("new relic key", "NRAK-" + rand(27, UPPER_DIGITS))
    add("pulumi token", "pul-" + rand(40, HEX))
    add("replicate token", "r8_" + rand(37))
    add("fly.io token", "fo1_" + rand(43, B64URL))
    add("google oauth secret", "GOCSPX-" + rand(28, B64URL))
    add("alibaba key", "LTAI" + rand(20))
    add("age secret key", "AGE-SECRET-KEY-1" + rand(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"))


def filler(n: int) -> str:
    """`n` characters of ordinary words ending in a space (so a token placed after it
    starts a token), to put a secret exactly where a cut falls."""
    words = ("word " * (n // 5 + 1))[: n - 1]
    return words + " " if n > 0 else ""


def straddlers(creds: list[Credential], count: int) -> list[Credential]:
    """`count` bare tokens (the secret is the whole text, one line, 40+ characters) of
    different kinds: each is placed across a cut."""
    bare = [c for c in creds if c.text == c.secret and "\n" not in c.text and len(c.text) >= 40]
    return bare[:: max(1, len(bare) // count)][:count]
