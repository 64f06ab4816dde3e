"""The JSON-RPC envelope of an incoming message: is it a request, a notification or a
response at all?

pygls trusts the envelope: an `id` that is an object reaches a dict lookup and comes back
as `-32603` with a Python traceback in `error.data`, a `method` that is a number fails in
string concatenation, and a message that is not a JSON object fails further down. Those
are the client's mistakes, so they get JSON-RPC's `-32600 Invalid Request` (or `-32700
Parse error`) with a message saying what is wrong, and never a traceback. Pure logic, no
pygls: `server.py` and `transport.py` act on the verdict.
"""

from __future__ import annotations

from typing import Any

import attrs

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

MsgId = int | str


@attrs.define
class InvalidMessage:
    """A message that is not valid JSON-RPC; answered with `code` unless it looked like a
    response (nobody waits for an answer to a response)."""

    message: str
    id: MsgId | None = None
    """The request id when it was a valid one (JSON-RPC: otherwise the answer's id is null)."""
    answer: bool = True
    code: int = INVALID_REQUEST

    def response(self) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        }


def valid_id(value: Any) -> bool:
    """LSP ids are integers or strings (JSON-RPC's null and fractions are not used)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def check_envelope(data: dict[str, Any]) -> InvalidMessage | None:
    """What is wrong with the envelope of a message object (`jsonrpc` present); None if
    it is a well-formed request, notification or response."""
    msg_id = data.get("id")
    good_id = msg_id if valid_id(msg_id) else None
    if data.get("jsonrpc") != "2.0":
        return InvalidMessage(
            f'Invalid Request: `jsonrpc` must be "2.0", got {data.get("jsonrpc")!r}.', good_id
        )
    is_response = "method" not in data and ("result" in data or "error" in data)
    if is_response:
        if "id" in data and msg_id is not None and not valid_id(msg_id):
            return InvalidMessage(
                f"a response whose `id` is {_kind(msg_id)}", answer=False, id=None
            )
        return None
    if "method" not in data:
        # Neither a request nor a response (which needs `result` or `error`); if it was
        # meant as a response, answering it would confuse the client further.
        return InvalidMessage(
            "Invalid Request: the message has no `method`, `result` or `error`.",
            answer=good_id is None,
        )
    if not isinstance(data["method"], str):
        return InvalidMessage(
            f"Invalid Request: `method` must be a string, got {_kind(data['method'])}.", good_id
        )
    if "id" in data and not valid_id(msg_id):
        return InvalidMessage(
            f"Invalid Request: the `id` of {data['method']!r} must be an integer or a string, "
            f"got {_kind(msg_id)}."
        )
    return None


def check_top_level(message: Any) -> InvalidMessage | None:
    """A decoded message that is not a JSON object (a batch, a string, a number)."""
    if isinstance(message, dict):
        msg_id = message.get("id")
        return InvalidMessage(
            "Invalid Request: the message has no `jsonrpc` member.",
            msg_id if valid_id(msg_id) else None,
        )
    if isinstance(message, list):
        return InvalidMessage(
            "Invalid Request: batches (JSON arrays) are not supported by LSP; "
            "send one message object per frame."
        )
    return InvalidMessage(
        f"Invalid Request: a message must be a JSON object, got {_kind(message)}."
    )


def parse_error(detail: str) -> InvalidMessage:
    return InvalidMessage(
        f"Parse error: the message is not valid JSON ({detail}).", code=PARSE_ERROR
    )
