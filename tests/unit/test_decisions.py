"""The core's decision constructors (runtime/policy/decisions.py) and deny rules
(runtime/policy/deny_rules.py): what each front end's choice becomes, and the language
server's list of decision names is the core's."""

from __future__ import annotations

import pytest

from invincat_server.lsp.protocol import DECISIONS
from invincat_server.runtime.events import AlwaysOption, ApprovalRequested
from invincat_server.runtime.policy import decisions, deny_rules
from invincat_server.runtime.policy.decisions import DECISIONS_BY_KIND, Decision, DecisionError


def _request(tool: str = "execute", **extra: object) -> ApprovalRequested:
    return ApprovalRequested(approval_id="ap_1", thread_id="t_1", tool_name=tool, **extra)


def test_the_language_server_accepts_exactly_the_core_decisions() -> None:
    assert set(DECISIONS) == set().union(*DECISIONS_BY_KIND.values())


def test_each_constructor_builds_a_valid_decision_of_its_type() -> None:
    made = [
        decisions.approve(),
        decisions.approve_always("workspace"),
        decisions.reject("no"),
        decisions.reject_always(),
        decisions.denied_by_rule(),
        decisions.edit({"path": "a"}),
        decisions.refine("shorter"),
        decisions.answer(["yes"]),
    ]
    assert [d.type for d in made] == [
        "approve",
        "approve_always",
        "reject",
        "reject_always",
        "reject",
        "edit",
        "refine",
        "answer",
    ]
    for decision in made:  # the JSON form parses back to the same decision
        assert Decision.parse(decision.model_dump(exclude_none=True)) == decision
    assert decisions.reject("").message is None  # an empty reason is no reason
    assert [d.rejects for d in made[2:5]] == [True, True, True]


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        "reject",
        {"type": "reject_always", "scope": "workspace"},
        {"type": "approve_always"},
        {"type": "refine", "feedback": "  "},
        {"type": "edit"},
        {"type": "nope"},
        {"type": "reject", "message": "\x00" * 3, "scope": 7},
    ],
)
def test_a_bad_decision_is_a_clear_error(bad: object) -> None:
    with pytest.raises(DecisionError, match="Invalid decision"):
        Decision.parse(bad)


def test_reply_maps_text_to_a_refinement_or_one_answer_per_question() -> None:
    plan = ApprovalRequested(approval_id="ap_2", thread_id="t", kind="plan")
    assert decisions.reply(plan, "  ") == decisions.refine("(no details given)")
    two = ApprovalRequested(
        approval_id="ap_3", thread_id="t", kind="question", questions=[{"question": "a"}] * 2
    )
    assert decisions.reply(two, "x\n\n") == decisions.answer(["x", "(no answer)"])
    assert decisions.headless(two) == decisions.answer(["(no answer: headless)"] * 2)


def test_a_deny_rule_covers_what_the_workspace_always_option_would_allow() -> None:
    touch = [
        AlwaysOption(scope=s, label=s, tool="execute", command_prefix="touch")
        for s in ("session", "workspace")
    ]
    asked = _request(always_options=touch, args={"command": "touch a"})
    rule = deny_rules.rule_for(asked)
    assert rule == deny_rules.DenyRule("execute", "touch")
    assert rule.covers(_request(always_options=touch, args={"command": "touch b"}))
    other = [o.model_copy(update={"command_prefix": "ls"}) for o in touch]
    assert not rule.covers(_request(always_options=other))
    # No 'always' option (rm, a chain): the rule covers such calls only.
    bare = deny_rules.rule_for(_request())
    assert bare == deny_rules.DenyRule("execute", None)
    assert bare.covers(_request()) and not bare.covers(_request(always_options=touch))
    assert deny_rules.offer(_request()).label == (  # type: ignore[union-attr]
        "Reject, and reject `execute` calls offered no 'always' rule for the rest of this session"
    )
    plan = ApprovalRequested(approval_id="ap_4", thread_id="t", kind="plan")
    assert deny_rules.rule_for(plan) is None
