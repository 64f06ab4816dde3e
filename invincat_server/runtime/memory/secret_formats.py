"""The catalogue of credential formats that redaction recognises by shape.

Two sources:
- detect-secrets (Yelp, PyPI): the regexes of its per-format plugins (`denylist`), so
  formats it learns (new GitLab prefixes, PyPI tokens, ...) arrive with the package. Its
  keyword and entropy plugins work line by line with file-type context, so they are not
  used; `redaction.py` has its own assignment and entropy rules.
- `EXTRA_FORMATS`, hand-written: detect-secrets has no rule for most current providers
  (Google `AIza…`, Shopify, DigitalOcean, Hugging Face, Anthropic, Heroku, Mailgun, npm
  `npm_…` outside `.npmrc`, Vault, Databricks, ...), and some of its rules match only a
  prefix of today's tokens (Stripe keys are longer than its 24 characters). The shapes
  follow the providers' published formats and gitleaks' rule set (a Go tool, so its rules
  cannot be imported from Python).

Every match is widened to the whole token it sits in (`_extend`), so a rule that matches a
prefix never leaves the rest of a secret behind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class SecretFormat:
    kind: str
    pattern: re.Pattern[str]
    # Which group is the secret (0: the whole match); the rest of the match is kept.
    group: int = 0
    # Widen the secret to the end of the token it starts, which must start a token
    # (token-shaped formats only; checked in code, see `find_formats`).
    extend: bool = True
    # Run the pattern only when one of these (lowercase) occurs in the text: a cheap
    # `in` test that spares the regex pass over text that cannot match (as gitleaks does).
    keywords: tuple[str, ...] = ()
    # Can match in text without a 16-character token run (`_LONG_RUN`): a key marker, a
    # short password in a URL or header. The others are skipped in such text, which is
    # what most memory entries and reasons are (a 20-op batch redacts ~150 of them).
    short: bool = False


def _f(
    kind: str,
    regex: str,
    group: int = 0,
    *,
    extend: bool = True,
    flags: int = 0,
    keywords: tuple[str, ...] = (),
    short: bool = False,
) -> SecretFormat:
    return SecretFormat(kind, re.compile(regex, flags), group, extend, keywords, short)


_LITERAL = re.compile(r"(?:[A-Za-z0-9_~\-]|\\[.-])+")


def _prefixed(kind: str, regex: str, keywords: tuple[str, ...] = ()) -> SecretFormat:
    """A token format gated on its literal prefix (`sbp_`, `dt0c01.`), or on `keywords`
    when given: the cheap `in` test skips the regex pass over text that holds neither."""
    if not keywords:
        literal = _LITERAL.match(regex)
        if literal is None:
            raise ValueError(f"{kind}: {regex!r} does not start with a literal prefix")
        prefix = literal.group(0)
        if regex[literal.end() : literal.end() + 1] in ("{", "?", "*", "+"):
            prefix = prefix[:-1]  # the last character is quantified, so not certain
        keywords = (prefix.replace("\\", "").lower(),)
    return _f(kind, regex, keywords=keywords)


# Token regexes start with their literal prefix and no lookbehind, so `re` can scan for
# the literal quickly; that the prefix starts a token is checked afterwards.

EXTRA_FORMATS: tuple[SecretFormat, ...] = (
    # The block, or an unterminated one up to where its base64 body ends (a marker alone,
    # as in code that parses keys, redacts only the marker).
    _f(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[A-Za-z0-9+/=\s:,\\-]*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?![A-Za-z0-9+/=\s:,\\-]))",
        extend=False,
        short=True,
    ),
    _f(
        "putty_private_key",
        r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: \S+|\Z)",
        flags=re.S,
        short=True,
    ),
    _f("openai_key", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"),
    _f("anthropic_key", r"sk-ant-[a-z]{3,6}\d{2}-[A-Za-z0-9_-]{20,}"),
    _f("openai_key", r"sk-[A-Za-z0-9_-]{20,}"),
    _f("stripe_key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _f("stripe_webhook_secret", r"whsec_[A-Za-z0-9]{24,}"),
    _f("google_api_key", r"AIza[0-9A-Za-z_-]{35}"),
    _f("google_oauth_secret", r"GOCSPX-[A-Za-z0-9_-]{28}"),
    _f("google_oauth_token", r"ya29\.[A-Za-z0-9_-]{20,}"),
    _f("github_token", r"gh[pousr]_[A-Za-z0-9]{20,}"),
    _f("github_token", r"github_pat_[A-Za-z0-9_]{20,}"),
    _f("gitlab_token", r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|oas|agent)-[A-Za-z0-9_-]{20,}"),
    _f("npm_token", r"npm_[A-Za-z0-9]{36}"),
    _f("pypi_token", r"pypi-[A-Za-z0-9_-]{50,}"),
    _f("slack_token", r"xox[abposre]-[A-Za-z0-9-]{10,}"),
    _f(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
    ),
    _f(
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+",
    ),
    # The secret half of `<bot id>:AA…` (the id is public).
    _f("telegram_bot_token", r":(AA[A-Za-z0-9_-]{33})", 1),
    _f("twilio_key", r"(?:AC|SK)[0-9a-f]{32}(?![A-Za-z0-9])"),
    _f("sendgrid_key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    _f("mailgun_key", r"(?:key|pubkey)-[0-9a-f]{32}(?![A-Za-z0-9])"),
    _f(
        "mailgun_key",
        r"(?<![A-Za-z0-9])[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}(?![A-Za-z0-9])",
        keywords=("-",),
    ),
    _f("mailchimp_key", r"[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])", keywords=("-us",)),
    _f("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _f("square_token", r"sq0(?:atp|csp|idp)-[A-Za-z0-9_-]{22,}"),
    _f("square_token", r"EAAA[A-Za-z0-9_-]{60}"),
    _f(
        "aws_key",
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}"
        r"(?![A-Z0-9])",
        keywords=(
            "akia",
            "asia",
            "abia",
            "acca",
            "agpa",
            "aida",
            "aroa",
            "aipa",
            "anpa",
            "anva",
            "apka",
        ),
    ),
    _f(
        "azure_key",
        r"(?i)(?<![A-Za-z])(?:AccountKey|SharedAccessKey|SharedSecret|sig)=([A-Za-z0-9+/%]{20,}={0,2})",
        1,
        extend=False,
        keywords=("accountkey=", "sharedaccesskey=", "sharedsecret=", "sig="),
    ),
    _f(
        "azure_ad_secret",
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}",
        keywords=("q~",),
    ),
    _f("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}"),
    _f("heroku_key", r"HRKU-[A-Za-z0-9_-]{40,}"),
    _f("huggingface_token", r"hf_[A-Za-z0-9]{30,}"),
    _f("databricks_token", r"dapi[a-f0-9]{32}(?:-\d)?"),
    _f("atlassian_token", r"ATATT3[A-Za-z0-9_=-]{100,}"),
    _f("linear_key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),
    _f("vault_token", r"hv[sb]\.[A-Za-z0-9_-]{24,}"),
    _f("doppler_token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    _f("postman_key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _f("grafana_token", r"gl(?:c|sa)_[A-Za-z0-9_+/=-]{32,}"),
    _f("newrelic_key", r"NRA[KIJ]-[A-Z0-9]{27}"),
    _f("sentry_token", r"sntry[su]_[A-Za-z0-9_=+/-]{40,}"),
    _f("pulumi_token", r"pul-[a-f0-9]{40}"),
    _f(
        "terraform_token",
        r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
        keywords=(".atlasv1.",),
    ),
    _f("groq_key", r"gsk_[A-Za-z0-9]{40,}"),
    _f("replicate_token", r"r8_[A-Za-z0-9]{37}"),
    _f("xai_key", r"xai-[A-Za-z0-9]{70,}"),
    _f("perplexity_key", r"pplx-[A-Za-z0-9]{40,}"),
    _f("flyio_token", r"fo1_[A-Za-z0-9_-]{40,}"),
    _f("age_secret_key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _f("alibaba_key", r"LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])"),
    # Issue 23: current formats of providers neither list had (exact shapes, so a token
    # is recognised by its format, not by chance through the entropy rule). Each runs
    # only where its literal prefix occurs (`_prefixed`): 40 more regex passes over every
    # text would double redaction's time.
    _prefixed("airtable_token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])"),
    _prefixed("supabase_token", r"sb(?:p|_secret)_[A-Za-z0-9_-]{32,}"),
    _prefixed("notion_token", r"ntn_[A-Za-z0-9]{40,}"),
    _prefixed("slack_app_token", r"xapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]{20,}"),
    _prefixed("figma_token", r"fig[dou]_[A-Za-z0-9_-]{30,}"),
    _prefixed("planetscale_token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,}"),
    _prefixed("cloudflare_origin_ca_key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    _prefixed("vercel_blob_token", r"vercel_blob_rw_[A-Za-z0-9]{16}_[A-Za-z0-9]{20,}"),
    _prefixed("netlify_token", r"nf[pcoub]_[A-Za-z0-9]{36,}"),
    _prefixed("langsmith_key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    _prefixed("pinecone_key", r"pcsk_[A-Za-z0-9_]{50,}"),
    _prefixed("tailscale_key", r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9-]{20,}"),
    _prefixed("render_key", r"rnd_[A-Za-z0-9]{32,}"),
    _prefixed("neon_key", r"napi_[a-z0-9]{64}(?![A-Za-z0-9])"),
    _prefixed("resend_key", r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}(?![A-Za-z0-9])"),
    _prefixed("docker_hub_token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}"),
    _prefixed("rubygems_key", r"rubygems_[a-f0-9]{48}"),
    _prefixed("clojars_token", r"CLOJARS_[a-z0-9]{60}"),
    _prefixed("sonarqube_token", r"sq[pua]_[a-f0-9]{40}(?![A-Za-z0-9])"),
    _prefixed("sourcegraph_token", r"sgp_(?:[a-f0-9]{16}_)?[a-f0-9]{40}(?![A-Za-z0-9])"),
    _prefixed("buildkite_token", r"bkua_[a-f0-9]{40}(?![A-Za-z0-9])"),
    _prefixed("contentful_token", r"CFPAT-[A-Za-z0-9_-]{43}"),
    _prefixed("dynatrace_token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    _prefixed("frameio_token", r"fio-u-[A-Za-z0-9_=-]{64}"),
    _prefixed("easypost_key", r"EZ[AT]K[A-Za-z0-9]{54}"),
    _prefixed("shippo_token", r"shippo_(?:live|test)_[a-f0-9]{40}"),
    _prefixed("typeform_token", r"tfp_[A-Za-z0-9_.=-]{59}"),
    _prefixed("prefect_key", r"pnu_[A-Za-z0-9]{36}"),
    _prefixed("readme_key", r"rdme_[a-z0-9]{70}"),
    _prefixed("scalingo_token", r"tk-us-[A-Za-z0-9_-]{48}"),
    _prefixed("adafruit_key", r"aio_[A-Za-z0-9]{28}(?![A-Za-z0-9])"),
    _prefixed("infracost_key", r"ico-[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
    _prefixed("huggingface_token", r"api_org_[A-Za-z0-9]{34}"),
    _prefixed("onepassword_token", r"ops_eyJ[A-Za-z0-9+/=_-]{100,}"),
    _prefixed("mapbox_token", r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
    _prefixed("dropbox_token", r"sl\.[A-Za-z0-9_-]{130,}"),
    _prefixed("octopus_key", r"API-(?=[A-Z]*[0-9])[A-Z0-9]{26}(?![A-Za-z0-9])"),
    _prefixed("twitter_bearer_token", r"A{22}[A-Za-z0-9%]{60,}", ("a" * 22,)),
    _prefixed(
        "yandex_token", r"y[0-3]_[A-Za-z0-9_-]{55}(?![A-Za-z0-9_-])", ("y0_", "y1_", "y2_", "y3_")
    ),
    _prefixed("harness_token", r"pat\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    _f("jwt", r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
    _f("jwt", r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),
    _f(
        "authorization",
        r"(?i)\b(?:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?"
        r"(?:bearer|basic|token|digest|bot)\s+([A-Za-z0-9._~+/=-]{8,})",
        1,
        extend=False,
        keywords=("authorization",),
        short=True,
    ),
    _f(
        "bearer_token",
        r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*)",
        1,
        extend=False,
        keywords=("bearer",),
        short=True,
    ),
    # scheme://user:PASSWORD@host (databases, brokers, git remotes).
    _f(
        "url_password",
        r"://[^\s:/@]+:([^\s@/]+)@",
        1,
        extend=False,
        short=True,
    ),
)

# detect-secrets plugins whose rules we take. Left out: IPPublicDetector (an IP address is
# not a credential), MailchimpDetector (ours, hex only, is stricter), and the keyword and
# entropy plugins (see above).
# (module, class, our kind, keywords: see `SecretFormat.keywords`; the IBM, SoftLayer and
# Cloudant rules look for names such as `ibm_api_key`, so they run only where the
# provider is named, which keeps their slow lookbehind-led regexes off ordinary text).
_LIBRARY_PLUGINS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("artifactory", "ArtifactoryDetector", "artifactory_token", ()),
    ("aws", "AWSKeyDetector", "aws_key", ("aws", "a3t", "abia", "acca", "akia", "asia")),
    ("azure_storage_key", "AzureStorageKeyDetector", "azure_key", ("accountkey=",)),
    ("basic_auth", "BasicAuthDetector", "url_password", ("://",)),
    ("cloudant", "CloudantDetector", "cloudant_key", ("cloudant",)),
    ("discord", "DiscordBotTokenDetector", "discord_token", ()),
    ("github_token", "GitHubTokenDetector", "github_token", ()),
    ("gitlab_token", "GitLabTokenDetector", "gitlab_token", ()),
    ("ibm_cloud_iam", "IbmCloudIamDetector", "ibm_key", ("ibm",)),
    ("ibm_cos_hmac", "IbmCosHmacDetector", "ibm_key", ("ibm", "cos_hmac", "cos-hmac")),
    ("jwt", "JwtTokenDetector", "jwt", ("eyj",)),
    ("npm", "NpmDetector", "npm_token", ("_authtoken",)),
    ("openai", "OpenAIDetector", "openai_key", ()),
    ("private_key", "PrivateKeyDetector", "private_key", ("private key", "putty")),
    ("pypi_token", "PypiTokenDetector", "pypi_token", ()),
    ("sendgrid", "SendGridDetector", "sendgrid_key", ()),
    ("slack", "SlackDetector", "slack_token", ("xox", "hooks.slack")),
    ("softlayer", "SoftlayerDetector", "softlayer_key", ("softlayer",)),
    ("square_oauth", "SquareOAuthDetector", "square_token", ()),
    ("stripe", "StripeDetector", "stripe_key", ("k_live_",)),
    ("telegram_token", "TelegramBotTokenDetector", "telegram_bot_token", (":aa",)),
    ("twilio", "TwilioKeyDetector", "twilio_key", ()),
)


@lru_cache(maxsize=1)
def library_formats() -> tuple[SecretFormat, ...]:
    """detect-secrets' per-format rules, imported on first use (the package pulls in
    `requests`, ~100 ms, which the memory CLI should not pay before it redacts)."""
    import importlib

    formats: list[SecretFormat] = []
    for module, name, kind, keywords in _LIBRARY_PLUGINS:
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        for pattern in plugin.denylist:
            # Group 1 is the secret where the rule has one (`://user:(password)@`),
            # unless it is the token's prefix (see `find_formats`).
            group = 1 if pattern.groups else 0
            # Its private key rule only names the marker; ours redacts the whole block.
            extend = kind != "private_key"
            short = kind in ("private_key", "url_password")
            formats.append(SecretFormat(kind, pattern, group, extend, keywords, short))
    return tuple(formats)


@lru_cache(maxsize=1)
def all_formats() -> tuple[SecretFormat, ...]:
    return EXTRA_FORMATS + library_formats()


# Every token-shaped format has at least this: 16 characters without a space or quote.
_LONG_RUN = re.compile(r"[A-Za-z0-9_+/=.:~-]{16,}")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_TRIM = " \t\r\n\"'=:`,;"


def _extend(text: str, start: int, end: int) -> tuple[int, int]:
    """Trim delimiters a rule matched around the secret, then widen to the token's end."""
    while start < end and text[start] in _TRIM:
        start += 1
    while end > start and text[end - 1] in _TRIM:
        end -= 1
    while end < len(text) and text[end] in _TOKEN_CHARS:
        end += 1
    return start, end


def find_formats(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every catalogued secret in `text` (may overlap)."""
    found: list[tuple[int, int, str]] = []
    lowered = text.lower()
    has_long_run = _LONG_RUN.search(text) is not None
    for fmt in all_formats():
        if not (has_long_run or fmt.short):
            continue
        if fmt.keywords and not any(k in lowered for k in fmt.keywords):
            continue
        for match in fmt.pattern.finditer(text):
            if fmt.group and match.group(fmt.group) is None:
                continue
            start, end = match.span(fmt.group)
            if start == match.start():
                start, end = match.span()  # a group that is the prefix (`(ghp|gho)_…`)
            if fmt.extend:
                start, end = _extend(text, start, end)
                if start > 0 and text[start - 1] in _TOKEN_CHARS:
                    continue  # inside a longer token: not this format
            if end > start:
                found.append((start, end, fmt.kind))
    return found
