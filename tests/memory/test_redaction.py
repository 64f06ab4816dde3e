"""Secrets and private paths never reach the store or the journal (spec section 7)."""

from __future__ import annotations

import json
import os
import secrets
import string
from pathlib import Path

import pytest

from invincat_server.runtime.memory import MemoryService
from invincat_server.runtime.memory.redaction import mask_residual, redact, residual_secrets

from .credentials import Credential, credentials, current_formats, leaked
from .helpers import create, journal_bytes, store_bytes


def _rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def _secrets() -> list[tuple[str, str]]:
    """(kind, secret) with fresh random bodies, so the byte search cannot hit by chance."""
    upper_digits = string.ascii_uppercase + string.digits
    return [
        ("openai", "sk-proj-" + _rand(40)),
        ("openai_legacy", "sk-" + _rand(48)),
        ("github", "ghp_" + _rand(36)),
        ("github_pat", "github_pat_" + _rand(22) + "_" + _rand(59)),
        ("aws", "AKIA" + _rand(16, upper_digits)),
        ("slack", "xoxb-" + _rand(12, string.digits) + "-" + _rand(24)),
        ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi" + _rand(20) + "." + _rand(43)),
        (
            "private_key",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE" + _rand(60) + "\n-----END RSA PRIVATE KEY-----",
        ),
        ("password", "password=" + _rand(14)),
        ("secret", "secret=" + _rand(14)),
        ("token", "token=" + _rand(14)),
        ("bearer", "Authorization: Bearer " + _rand(32)),
        ("unknown_random_token", _rand(38) + "7q"),
    ]


def _distinctive(secret: str) -> str:
    """The random tail of a secret: what must never be found in a file."""
    return secret.splitlines()[1] if "PRIVATE KEY" in secret else secret[-12:]


@pytest.mark.parametrize(("kind", "secret"), _secrets(), ids=[k for k, _ in _secrets()])
def test_a_secret_in_a_create_is_redacted_or_dropped_and_never_written(
    service: MemoryService, kind: str, secret: str
) -> None:
    content = f"The staging deploy uses {secret} for the release job"
    report = service.apply("project", [create(content=content)])
    assert not report.rejected
    if report.applied:
        (entry,) = service.list("project")
        assert "[REDACTED:" in entry.content
    else:
        assert "secret" in report.dropped[0].reason
    tail = _distinctive(secret).encode()
    assert tail not in store_bytes(service) if service.store_paths()["project"].exists() else True
    assert tail not in journal_bytes(service)
    assert tail not in report.model_dump_json().encode()


def test_secrets_in_refused_fields_and_rejected_batches_stay_out_of_the_journal(
    service: MemoryService,
) -> None:
    key = "sk-" + _rand(40)
    token = "ghp_" + _rand(36)
    service.apply(
        "project",
        [
            create(id=key),  # forbidden field carrying a secret
            {"op": "update", "scope": "project", "id": "mem_p_000042", "content": token},
            {"op": "noop", "reason": f"saw {token}"},
            {"op": "create", key: "value as a key"},
        ],
    )
    service.apply("project", [create(content=key) for _ in range(21)])  # rejected batch
    data = journal_bytes(service)
    assert key[-12:].encode() not in data and token[-12:].encode() not in data


def test_update_content_is_redacted_too(service: MemoryService) -> None:
    (entry_id,) = service.apply("project", [create()]).created_ids()
    secret = "xoxp-" + _rand(30)
    service.apply(
        "project",
        [{"op": "update", "scope": "project", "id": entry_id, "content": f"webhook {secret}"}],
    )
    assert secret.encode() not in store_bytes(service)
    assert secret.encode() not in journal_bytes(service)


def test_home_and_temp_paths_are_abbreviated(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", "/home/alice")
    report = service.apply(
        "project",
        [
            create(content="The venv lives in /home/alice/work/proj/.venv"),
            create(content="Scratch files go to /tmp/build-cache/out today"),
            create(content=f"The fixture copies into {tmp_path}/fixtures now"),
        ],
    )
    assert len(report.created_ids()) == 3
    contents = [e.content for e in service.list("project")]
    assert contents[0] == "The venv lives in ~/work/proj/.venv"
    assert contents[1] == "Scratch files go to <tmp>/build-cache/out today"
    assert str(tmp_path) not in contents[2] and "<tmp>/" in contents[2]
    assert b"/home/alice" not in store_bytes(service)


def test_ordinary_text_is_left_alone() -> None:
    for text in [
        "Run ./scripts/test before pushing; it runs ruff and pytest",
        "The commit 3f2a9c1b8e7d6f5a4b3c2d1e0f9a8b7c6d5e4f3a fixed the lock",
        "TestMemoryGovernance2Integration covers bounds",
        "Use the token bucket in src/rate_limit.py for throttling",
        "Passwords are read from the OS keychain, never from env",
        "src/Components/Header2/Index.tsx holds the layout",
    ]:
        result = redact(text)
        assert result.text == text and not residual_secrets(result.text), text


def test_redaction_works_with_a_temp_dir_inside_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/tmp/u")
    assert redact("see /tmp/u/notes and /tmp/other").text == "see ~/notes and <tmp>/other"
    assert os.environ["HOME"] == "/tmp/u"


@pytest.mark.parametrize(
    "credential", credentials(), ids=[c.provider.replace(" ", "_") for c in credentials()]
)
def test_every_catalogued_format_is_redacted_in_prose_code_and_config(
    credential: Credential,
) -> None:
    # Fresh values per run, in the contexts they are pasted in.
    fresh = {c.provider: c for c in credentials()}[credential.provider]
    for text in (
        f"here is what I use: {fresh.text}\nthanks",
        f'config = """{fresh.text}"""',
        f"- `{fresh.text}`.",
        f"{{'value': {json.dumps(fresh.text)}}}",
        json.dumps(json.dumps({"config": fresh.text})),  # JSON in a JSON string (a log line)
    ):
        result = redact(text)
        assert fresh.secret not in result.text, (credential.provider, result.text)
        assert fresh.secret not in mask_residual(text)


def test_a_rule_matching_only_a_prefix_never_leaves_the_rest_behind() -> None:
    # detect-secrets' Stripe rule matches 24 characters; today's keys are much longer.
    key = "sk_live_" + _rand(99)
    assert redact(f"key {key} end").text == "key [REDACTED:stripe_key] end"


@pytest.mark.parametrize(
    "text",
    [
        "connect(host, user=user, password=password)",
        "token = self.token",
        "password: str | None = None",
        "api_key = os.environ['OPENAI_API_KEY']",
        "secret = get_secret(name)",
        "if token == ('end', key):",
        "items.sort(key=lambda item: item.score)",
        "cache_key = f'{user}:{page}'",
        "export GITHUB_TOKEN=$GITHUB_TOKEN",
        "password=${DB_PASSWORD}",
        "class _V1ValidatorWithValuesKwOnlyClsMethod(Protocol):",
        "https://github.com/Microsoft/vscode-uri/blob/e59cab84f5df6265aed18ae5f43552d3eef13bb9/lib",
        "ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'",
        "const token = tokens[index];",
        'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):',
    ],
)
def test_ordinary_source_code_is_left_alone(text: str) -> None:
    result = redact(text)
    expected = text if "PRIVATE KEY" not in text else result.text
    assert result.text == expected, result.text
    if "PRIVATE KEY" in text:  # a marker alone (code that parses keys): only the marker goes
        assert result.text == 'if line.startswith("[REDACTED:private_key]"):'


def test_typed_secrets_in_env_lines_yaml_and_headers_are_redacted() -> None:
    value = _rand(18)
    for text in (
        f"DB_PASSWORD={value}",
        f"export STRIPE_API_KEY='{value}'",
        f'password: "{value}"',
        f"  client_secret: {value}7",
        f"curl -H 'Authorization: Basic {value}' https://api.example.com",
        f"--token={value}",
    ):
        assert value not in redact(text).text, text


def test_a_password_of_letters_only_is_redacted_whatever_its_case_pattern() -> None:
    # Random letters can look like camelCase words; only lowercase names count as code.
    for _ in range(300):
        value = _rand(14, string.ascii_letters)
        if value.islower():
            continue
        text = f"The staging deploy uses password={value} for the release job"
        assert value not in redact(text).text, text


def test_current_formats_are_recognised_by_their_own_rule_not_by_chance() -> None:
    # Issue 23: Notion's `ntn_…` was caught only when its random body happened to pass
    # the entropy rule; Airtable's and Supabase's not at all. Each has a named rule now.
    for cred in current_formats():
        if cred.text != cred.secret:
            continue  # a `NAME=value` line: caught by the name
        result = redact(f"use {cred.text} here")
        assert result.text == "use [REDACTED:" + result.kinds[0] + "] here", cred.provider
        assert result.kinds[0] != "high_entropy", (cred.provider, result.kinds)


def test_the_catalogue_is_fresh_and_large() -> None:
    first, second = credentials(), credentials()
    assert len({c.provider for c in first}) >= 50
    assert all(a.secret != b.secret for a, b in zip(first, second, strict=True))
    assert leaked(redact("\n".join(c.text for c in first)).text, first) == []
