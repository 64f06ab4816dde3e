"""`invincat/rules/list` and `invincat/rules/revoke`: the 'always' approval rules of one
project, this server's session rules and the workspace's remembered ones.

Routed like `invincat/memory/*`: `folder`'s project, else the first folder's. Both wait for
the project's session (session rules live in it). Only translation: the listing, ids and
revoke are the core's (runtime/policy/rule_listing.py through `ApprovalPolicy`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from invincat_server.lsp.errors import request_handler, rpc_error
from invincat_server.lsp.protocol import (
    RULES_LIST,
    RULES_REVOKE,
    ErrorCode,
    RulesListParams,
    RulesListResult,
    RulesRevokeParams,
    RulesRevokeResult,
    parse_params,
)

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer


@request_handler(RULES_LIST)
async def invincat_rules_list(ls: InvincatLanguageServer, params: Any) -> RulesListResult:
    from invincat_server.runtime.policy.rule_listing import RuleError

    request = parse_params(RulesListParams, params, RULES_LIST)
    session = await ls.projects.for_folder(request.folder, RULES_LIST).require()
    policy = session.policy
    items = [rule.to_json() for rule in policy.listed_session_rules()]
    problems: list[str] = []
    try:  # a damaged rules file costs its rules only, not the session's
        # Off the event loop: the file read may wait for another process's lock.
        listed = await asyncio.to_thread(policy.store.listed, policy.workspace)
        items += [rule.to_json() for rule in listed]
    except RuleError as exc:
        problems.append(str(exc))
    return {"items": items, "problems": problems}


@request_handler(RULES_REVOKE)
async def invincat_rules_revoke(ls: InvincatLanguageServer, params: Any) -> RulesRevokeResult:
    from invincat_server.runtime.policy.file_lock import FileLockTimeout
    from invincat_server.runtime.policy.rule_listing import RulesFileDamaged, UnknownRule

    request = parse_params(RulesRevokeParams, params, RULES_REVOKE)
    session = await ls.projects.for_folder(request.folder, RULES_REVOKE).require()
    try:
        # Off the event loop: the revoke may wait for another process's lock (up to 30 s).
        revoked = await asyncio.to_thread(session.policy.revoke_rule, request.id)
    except UnknownRule as exc:
        message = f"Invalid params for {RULES_REVOKE}: {exc}"
        raise rpc_error(ErrorCode.INVALID_PARAMS, message) from None
    except (RulesFileDamaged, FileLockTimeout) as exc:
        raise rpc_error(ErrorCode.REFUSED, str(exc)) from None
    except OSError as exc:  # the rules file could not be replaced: unchanged
        path = session.policy.store.path
        message = f"{path}: {exc.strerror or exc}; nothing was changed."
        raise rpc_error(ErrorCode.REFUSED, message) from None
    return {"revoked": revoked.to_json()}
