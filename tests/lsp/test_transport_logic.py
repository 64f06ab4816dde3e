"""Pure logic of the transports: which hosts count as local, which first messages carry
the token, what a refused envelope says. The end-to-end behaviour is in
test_network_transports.py and test_invalid_messages.py."""

from __future__ import annotations

import pytest

from invincat_server.lsp.envelope import check_envelope
from invincat_server.lsp.transport import TransportError, check_token, is_loopback, make_token

TOKEN = "t" * 43


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "192.168.1.5", "example.com", "127.1"])
def test_hosts_others_can_reach_or_that_may_resolve_anywhere(host: str) -> None:
    assert not is_loopback(host)


def _initialize(options: object) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"rootUri": None, "initializationOptions": options},
    }


def test_the_token_is_checked_and_removed_before_anyone_else_sees_the_params() -> None:
    cleaned, why = check_token(_initialize({"token": TOKEN, "other": 1}), TOKEN)
    assert why == "" and cleaned is not None
    assert cleaned["params"]["initializationOptions"] == {"other": 1}
    assert cleaned["params"]["rootUri"] is None


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (_initialize({"token": TOKEN[:-1] + "x"}), "wrong token"),
        (_initialize({"token": TOKEN + "x"}), "wrong token"),
        (_initialize({"token": 42}), "no `initializationOptions.token`"),
        (_initialize(None), "no `initializationOptions.token`"),
        (_initialize("token"), "no `initializationOptions.token`"),
        ({**_initialize({"token": TOKEN}), "method": "invincat/chat"}, "not `initialize`"),
        ([_initialize({"token": TOKEN})], "not `initialize`"),
        ({**_initialize({}), "params": [TOKEN]}, "no `initializationOptions.token`"),
    ],
)
def test_anything_but_initialize_with_the_token_is_refused(message: object, reason: str) -> None:
    cleaned, why = check_token(message, TOKEN)
    assert cleaned is None and reason in why


def test_tokens() -> None:
    made = make_token({})
    assert len(made) >= 40 and made != make_token({})
    assert make_token({"INVINCAT_LSP_TOKEN": TOKEN}) == TOKEN
    with pytest.raises(TransportError, match="at least 16"):
        make_token({"INVINCAT_LSP_TOKEN": "short"})


def test_valid_envelopes_pass() -> None:
    assert check_envelope({"jsonrpc": "2.0", "id": 1, "method": "x", "params": "odd"}) is None
    assert check_envelope({"jsonrpc": "2.0", "id": "a", "result": None}) is None
    assert check_envelope({"jsonrpc": "2.0", "id": None, "error": {"code": 1}}) is None
    assert check_envelope({"jsonrpc": "2.0", "method": "x"}) is None


def test_a_response_with_a_bad_id_is_dropped_not_answered() -> None:
    invalid = check_envelope({"jsonrpc": "2.0", "id": {"a": 1}, "result": 1})
    assert invalid is not None and not invalid.answer
