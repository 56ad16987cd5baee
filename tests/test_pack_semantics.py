"""YAML rule semantics on a real registry: every stage, layers, sources, digests and reload.

Each test writes a small pack into tmp_path (tests/support.py), installs it with
PolicyLayers.install on a registry of counting tools, and calls tools through
registry.call_sync (or registry.call inside asyncio.run for calls in flight).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, cast

import pytest

from policyengine import (
    Outcome,
    PackLoadError,
    PolicyLayers,
    Signal,
    Source,
    SourceKind,
    Stage,
    accept,
    allow,
    deny,
    load_pack,
    load_packs,
)
from support import SECRET_TOKEN, RecordingApproval, make_kit, rules_pack, write_pack

# A condition that raises a JMESPath type error when `arguments.count` is an integer.
BOOM = "length(arguments.count) > `1`"


def rule(
    rule_id: str, stage: str = "pre-execute", tools: tuple[str, ...] = ("probe",), **fields: Any
) -> dict[str, Any]:
    return {"id": rule_id, "stage": stage, "tools": list(tools), **fields}


def probe(kit: Any, path: str = "a", count: int = 1, **kwargs: Any) -> Any:
    return kit.call("probe", {"path": path, "count": count}, **kwargs)


# -- pre-execute: order and short-circuit ----------------------------------------------------


def test_first_matching_deny_wins(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule("first-deny", decision="deny", reason="first says no to {arguments.path}"),
                rule("second-deny", decision="deny", reason="second says no"),
            ],
        )
    )
    result = probe(kit)
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert result.source.name == "first-deny"
    assert result.reason == "first says no to a"
    assert kit.runs["probe"] == 0


def test_rules_after_a_deny_are_never_evaluated(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule("deny-path-a", when="arguments.path == 'a'", decision="deny", reason="no {arguments.path}"),
                rule("would-raise", when=BOOM, decision="allow"),
            ],
        )
    )
    result = probe(kit, path="a")
    assert result.source.name == "deny-path-a"
    assert result.reason == "no a"
    assert "would-raise" not in result.reason
    # Control: when the first rule does not match, the second one is evaluated and raises.
    control = probe(kit, path="b")
    assert control.outcome is Outcome.DENIED
    assert control.source.name == "would-raise"


def test_ask_ends_the_chain_so_a_later_deny_never_applies(tmp_path: Path) -> None:
    approval = RecordingApproval()
    kit = make_kit(approval=approval)
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule("ask-probe", decision="ask", reason="probe {arguments.path}?"),
                rule("deny-probe", decision="deny", reason="never reached"),
            ],
        )
    )
    result = probe(kit, path="x")
    assert result.outcome is Outcome.OK
    assert kit.runs["probe"] == 1
    assert [r.reason for r in approval.requests] == ["probe x?"]
    assert approval.requests[0].source is not None
    assert approval.requests[0].source.name == "ask-probe"


def test_rules_apply_only_to_the_tools_they_name_by_name_glob_or_list(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule("deny-fs-glob", tools=("fs_*",), decision="deny", reason="fs"),
                rule("deny-listed", tools=("@talkers",), decision="deny", reason="talk"),
            ],
            lists={"talkers": ["send_message"]},
        )
    )
    assert cast(Source, kit.call("fs_read", {"path": "x"}).source).name == "deny-fs-glob"
    assert cast(Source, kit.call("send_message", {"message": "hi"}).source).name == "deny-listed"
    assert kit.call("read", {"path": "x"}).outcome is Outcome.OK
    assert kit.runs == {"read": 1}


# -- pre-execute: allow vs final allow ----------------------------------------------------------


def test_non_final_allow_does_not_skip_a_later_deny(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule("allow-probe", decision="allow"),
                rule("deny-probe", decision="deny", reason="stricter rule below"),
            ],
        )
    )
    result = probe(kit)
    assert result.outcome is Outcome.DENIED
    assert result.source.name == "deny-probe"
    assert kit.runs["probe"] == 0


def test_final_allow_skips_every_later_rule(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule("allow-probe-final", decision="allow", final=True),
                rule("deny-probe", decision="deny", reason="skipped"),
                rule("would-raise", when=BOOM, decision="deny"),
            ],
        )
    )
    result = probe(kit)
    assert result.outcome is Outcome.OK
    assert kit.runs["probe"] == 1


def test_default_deny_is_closed_by_a_matching_non_final_allow(tmp_path: Path) -> None:
    kit = make_kit()
    layers = kit.install(
        rules_pack(
            tmp_path,
            "p",
            [rule("allow-docs", tools=("read",), when="starts_with(arguments.path, 'docs/')", decision="allow")],
            default="deny",
            default_reason="Only docs/ may be read.",
        )
    )
    assert kit.call("read", {"path": "docs/a.md"}).outcome is Outcome.OK
    denied = kit.call("read", {"path": "src/a.py"})
    assert denied.outcome is Outcome.DENIED
    assert denied.reason == "Only docs/ may be read."
    assert denied.source is not None
    assert denied.source.kind is SourceKind.DEFAULT
    assert denied.source.pack == "p"
    assert denied.source.digest == layers.packs[0].digest
    assert kit.runs["read"] == 1


# -- guards -----------------------------------------------------------------------------------------


def test_guard_denies_after_a_final_allow_of_the_same_pack(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule("allow-all-final", tools=("*",), decision="allow", final=True),
                rule(
                    "red-line-etc",
                    stage="guard",
                    tools=("read",),
                    when="starts_with(arguments.path, '/etc')",
                    reason="Red line: {arguments.path}",
                ),
            ],
        )
    )
    result = kit.call("read", {"path": "/etc/passwd"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.source is not None
    assert result.source.name == "red-line-etc"
    assert result.reason == "Red line: /etc/passwd"
    assert kit.runs["read"] == 0
    assert kit.call("read", {"path": "/home/a"}).outcome is Outcome.OK


def test_guard_denies_after_a_python_allow_installed_before_the_pack(tmp_path: Path) -> None:
    kit = make_kit()
    asked: list[str] = []

    @kit.registry.on_pre_execute(name="python-allow-everything")
    async def allow_everything(call: Any, next: Any) -> Any:
        asked.append(call.name)
        return allow()  # ends the chain without next(): the pack's pre-execute rules never run

    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule("deny-read", tools=("read",), decision="deny", reason="pre-execute deny"),
                rule(
                    "red-line-etc",
                    stage="guard",
                    tools=("read",),
                    when="starts_with(arguments.path, '/etc')",
                    reason="Red line",
                ),
            ],
        )
    )
    guarded = kit.call("read", {"path": "/etc/shadow"})
    assert guarded.outcome is Outcome.DENIED
    assert guarded.stage is Stage.GUARD
    assert guarded.source is not None
    assert guarded.source.name == "red-line-etc"
    assert asked == ["read"]
    # The python allow did overturn the (negotiable) pre-execute deny, just not the guard.
    assert kit.call("read", {"path": "/home/a"}).outcome is Outcome.OK


def test_a_call_a_guard_refuses_is_never_put_to_a_person(tmp_path: Path) -> None:
    approval = RecordingApproval()
    kit = make_kit(approval=approval)
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule("ask-shell", tools=("shell",), decision="ask", reason="run {arguments.command}?"),
                rule(
                    "no-rm-rf",
                    stage="guard",
                    tools=("shell",),
                    when="contains(arguments.command, 'rm -rf')",
                    reason="Red line: rm -rf",
                ),
            ],
        )
    )
    result = kit.call("shell", {"command": "rm -rf /"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert approval.requests == []
    assert kit.call("shell", {"command": "ls"}).outcome is Outcome.OK
    assert len(approval.requests) == 1


# -- post-execute ---------------------------------------------------------------------------------


def test_redaction_rewrites_the_canonical_value_that_observers_see(tmp_path: Path) -> None:
    kit = make_kit()
    layers = kit.install(
        rules_pack(
            tmp_path,
            "p",
            [rule("redact-token", stage="post-execute", tools=("secrets",), redact=[{"keys": ["*token*"]}])],
        )
    )
    result = kit.call("secrets")
    assert result.outcome is Outcome.OK
    assert result.value == {"user": "ada", "api_token": "[REDACTED]", "count": 3}
    assert SECRET_TOKEN not in result.text  # content rendered again from the redacted value
    observed = kit.observed(result.call_id)
    assert observed.value["api_token"] == "[REDACTED]"
    assert SECRET_TOKEN not in repr(observed)
    assert [(s.name, s.pack, s.digest) for s in result.rewrites] == [("redact-token", "p", layers.packs[0].digest)]


def test_content_replacement_is_display_only_observers_still_see_the_secret(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule(
                    "hide-in-display",
                    stage="post-execute",
                    tools=("secrets",),
                    content="credentials of {result.value.user} (hidden)",
                )
            ],
        )
    )
    result = kit.call("secrets")
    assert result.outcome is Outcome.OK
    assert result.text == "credentials of ada (hidden)"
    # Display is not confidentiality: the canonical value still carries the secret.
    assert result.value["api_token"] == SECRET_TOKEN
    assert kit.observed(result.call_id).value["api_token"] == SECRET_TOKEN
    assert [s.name for s in result.rewrites] == ["hide-in-display"]


def test_mask_keeps_only_the_last_characters(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule(
                    "mask-token", stage="post-execute", tools=("login",), redact=[{"path": "api_token", "keep_last": 4}]
                )
            ],
        )
    )
    result = kit.call("login", {"user": "ada"})
    assert result.value == {"user": "ada", "api_token": "*" * (len(SECRET_TOKEN) - 4) + "0042"}


def test_rewrites_compose_in_order_each_rule_sees_the_value_rewritten_so_far(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule("redact-first", stage="post-execute", tools=("login",), redact=[{"keys": ["api_token"]}]),
                rule(
                    "then-display", stage="post-execute", tools=("login",), content="token is {result.value.api_token}"
                ),
            ],
        )
    )
    result = kit.call("login", {"user": "ada"})
    assert result.text == "token is [REDACTED]"
    assert result.value["api_token"] == "[REDACTED]"
    assert [s.name for s in result.rewrites] == ["redact-first", "then-display"]


def test_a_redaction_that_breaks_the_output_schema_never_passes(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule(
                    "bad-rewrite",
                    stage="post-execute",
                    tools=("secrets",),
                    redact=[{"path": "count", "replace_with": "many"}],
                )
            ],
        )
    )
    result = kit.call("secrets")
    assert result.outcome is Outcome.BLOCKED
    assert result.stage is Stage.POST_EXECUTE
    assert result.value is None
    assert SECRET_TOKEN not in repr(kit.observed(result.call_id))


def test_block_turns_the_result_into_the_rendered_feedback(tmp_path: Path) -> None:
    kit = make_kit()
    layers = kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule(
                    "block-credentials",
                    stage="post-execute",
                    tools=("login",),
                    when="result.value.api_token != null",
                    block="{name} returned a token for {result.value.user}; use {{the vault}} instead.",
                )
            ],
        )
    )
    result = kit.call("login", {"user": "ada"})
    assert result.outcome is Outcome.BLOCKED
    assert result.stage is Stage.POST_EXECUTE
    assert result.text == "login returned a token for ada; use {the vault} instead."
    assert result.reason == result.text
    assert result.value is None
    assert result.source is not None
    assert (result.source.name, result.source.pack, result.source.digest) == (
        "block-credentials",
        "p",
        layers.packs[0].digest,
    )
    assert SECRET_TOKEN not in repr(kit.observed(result.call_id))
    assert kit.runs["login"] == 1


# -- execute: timeouts and retries --------------------------------------------------------------


def test_yaml_timeout_stops_a_body_that_runs_too_long(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(rules_pack(tmp_path, "p", [rule("slow-deadline", stage="execute", tools=("slow",), timeout=0.05)]))
    started = time.monotonic()
    result = kit.call("slow", {"seconds": 5})
    assert time.monotonic() - started < 2
    assert result.outcome is Outcome.TIMED_OUT
    assert result.stage is Stage.EXECUTE
    assert result.reason is not None
    assert "'slow'" in result.reason
    assert "rule slow-deadline" in result.reason
    assert "0.05s" in result.reason


def test_yaml_timeout_applies_only_when_its_condition_matches(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [rule("long-sleeps-only", stage="execute", tools=("slow",), when="arguments.seconds > `1`", timeout=0.02)],
        )
    )
    assert kit.call("slow", {"seconds": 0.06}).outcome is Outcome.OK
    assert kit.call("slow", {"seconds": 3}).outcome is Outcome.TIMED_OUT


def test_yaml_retries_rerun_a_failing_body_until_it_succeeds(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(rules_pack(tmp_path, "p", [rule("retry-flaky", stage="execute", tools=("flaky",), retries=2)]))
    result = kit.call("flaky")
    assert result.outcome is Outcome.OK
    assert result.value == "ok"
    assert kit.runs["flaky"] == 3


def test_yaml_retries_give_up_after_the_last_attempt(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(rules_pack(tmp_path, "p", [rule("retry-once", stage="execute", tools=("flaky",), retries=1)]))
    result = kit.call("flaky")
    assert result.outcome is Outcome.ERROR
    assert result.reason is not None
    assert "transient failure #2" in result.reason
    assert kit.runs["flaky"] == 2


def test_no_execute_rule_means_no_retry(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(rules_pack(tmp_path, "p", [rule("retry-other", stage="execute", tools=("slow",), retries=3)]))
    assert kit.call("flaky").outcome is Outcome.ERROR
    assert kit.runs["flaky"] == 1


def test_yaml_backoff_doubles_between_attempts(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(tmp_path, "p", [rule("retry-backoff", stage="execute", tools=("flaky",), retries=2, backoff=0.04)])
    )
    started = time.monotonic()
    assert kit.call("flaky").outcome is Outcome.OK
    assert time.monotonic() - started >= 0.04 + 0.08 - 0.005


def test_yaml_retries_rerun_after_the_rules_own_deadline(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(tmp_path, "p", [rule("deadline-retry", stage="execute", tools=("slow",), timeout=0.03, retries=1)])
    )
    result = kit.call("slow", {"seconds": 2})
    assert result.outcome is Outcome.TIMED_OUT
    assert kit.runs["slow"] == 2


def test_yaml_retries_never_retry_a_caller_cancel(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(rules_pack(tmp_path, "p", [rule("retry-a-lot", stage="execute", tools=("slow",), retries=5)]))

    async def main() -> Any:
        signal = Signal()
        asyncio.get_running_loop().call_later(0.05, signal.abort, "user pressed stop")
        return await kit.registry.call("slow", {"seconds": 5}, signal=signal)

    started = time.monotonic()
    result = asyncio.run(main())
    assert time.monotonic() - started < 2
    assert result.outcome is Outcome.CANCELLED
    assert "user pressed stop" in result.reason
    assert kit.runs["slow"] == 1


# -- fail-closed evaluation errors ---------------------------------------------------------------


def test_pre_execute_evaluation_error_denies_naming_the_rule(tmp_path: Path) -> None:
    kit = make_kit()
    layers = kit.install(rules_pack(tmp_path, "p", [rule("count-check", when=BOOM, decision="allow", final=True)]))
    result = probe(kit, count=5)
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert "count-check" in result.reason
    assert (result.source.name, result.source.digest) == ("count-check", layers.packs[0].digest)
    assert kit.runs["probe"] == 0


def test_guard_evaluation_error_denies_naming_the_rule(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(rules_pack(tmp_path, "p", [rule("count-guard", stage="guard", when=BOOM, reason="too many")]))
    result = probe(kit, count=5)
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert "count-guard" in result.reason
    assert result.source.name == "count-guard"
    assert kit.runs["probe"] == 0


def test_post_execute_evaluation_error_blocks_naming_the_rule(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(
        rules_pack(
            tmp_path,
            "p",
            [
                rule(
                    "size-check",
                    stage="post-execute",
                    tools=("number",),
                    when="length(result.value) > `1`",
                    content="fine",
                )
            ],
        )
    )
    result = kit.call("number")
    assert result.outcome is Outcome.BLOCKED
    assert result.stage is Stage.POST_EXECUTE
    assert result.reason is not None
    assert "size-check" in result.reason
    assert result.source is not None
    assert result.source.name == "size-check"
    assert result.value is None


def test_execute_evaluation_error_never_runs_the_body(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(rules_pack(tmp_path, "p", [rule("count-deadline", stage="execute", when=BOOM, timeout=5)]))
    result = probe(kit, count=5)
    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.EXECUTE
    assert kit.runs["probe"] == 0


def test_execute_evaluation_error_names_the_rule(tmp_path: Path) -> None:
    kit = make_kit()
    kit.install(rules_pack(tmp_path, "p", [rule("count-deadline", stage="execute", when=BOOM, timeout=5)]))
    result = probe(kit, count=5)
    assert "count-deadline" in result.reason


# -- layers ------------------------------------------------------------------------------------------


def test_org_deny_ends_the_chain_before_the_project_pack(tmp_path: Path) -> None:
    org = rules_pack(tmp_path, "org", [rule("org-deny-probe", decision="deny", reason="org says no")])
    project = rules_pack(
        tmp_path,
        "project",
        [rule("project-would-raise", when=BOOM, decision="deny"), rule("project-allow", decision="allow", final=True)],
    )
    kit = make_kit()
    kit.install(org, project)
    result = probe(kit, count=5)
    assert result.outcome is Outcome.DENIED
    assert (result.source.name, result.source.pack) == ("org-deny-probe", "org")
    assert result.reason == "org says no"


def test_project_guard_applies_after_an_org_final_allow(tmp_path: Path) -> None:
    org = rules_pack(tmp_path, "org", [rule("org-allow-all", tools=("*",), decision="allow", final=True)])
    project = rules_pack(
        tmp_path,
        "project",
        [
            rule(
                "project-red-line",
                stage="guard",
                tools=("read",),
                when="contains(arguments.path, 'secret')",
                reason="project red line",
            )
        ],
    )
    kit = make_kit()
    kit.install(org, project)
    result = kit.call("read", {"path": "secret.txt"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.source is not None
    assert (result.source.name, result.source.pack) == ("project-red-line", "project")
    assert kit.call("read", {"path": "notes.txt"}).outcome is Outcome.OK


def test_an_earlier_layer_is_consulted_before_a_later_one(tmp_path: Path) -> None:
    org = rules_pack(tmp_path, "org", [rule("org-ask", decision="ask", reason="org asks")])
    project = rules_pack(tmp_path, "project", [rule("project-deny", decision="deny", reason="project denies")])
    approval = RecordingApproval()
    kit = make_kit(approval=approval)
    kit.install(org, project)
    assert probe(kit).outcome is Outcome.OK  # the org's ask ended the chain; a person allowed it
    assert [cast(Source, r.source).name for r in approval.requests] == ["org-ask"]


@pytest.mark.parametrize(
    ("org_default", "project_default", "strict_pack", "stage"),
    [
        ("allow", "deny", "project", Stage.PRE_EXECUTE),
        ("deny", "allow", "org", Stage.PRE_EXECUTE),
        ("ask", "allow", "org", Stage.APPROVAL),
        ("ask", "deny", "project", Stage.PRE_EXECUTE),
        ("allow", "ask", "project", Stage.APPROVAL),
    ],
)
def test_the_strictest_default_of_all_layers_closes_the_chain(
    tmp_path: Path, org_default: str, project_default: str, strict_pack: str, stage: Stage
) -> None:
    org = rules_pack(tmp_path, "org", [rule("org-other", tools=("fs_write",), decision="deny")], default=org_default)
    project = rules_pack(
        tmp_path, "project", [rule("project-other", tools=("fs_edit",), decision="deny")], default=project_default
    )
    kit = make_kit()  # no approval service: an ask denies
    kit.install(org, project)
    result = kit.call("read", {"path": "x"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is stage
    assert result.source is not None
    assert result.source.kind is SourceKind.DEFAULT
    assert result.source.pack == strict_pack
    assert kit.runs["read"] == 0


def test_all_allow_defaults_let_an_undecided_call_through(tmp_path: Path) -> None:
    org = rules_pack(tmp_path, "org", [rule("org-other", tools=("fs_write",), decision="deny")])
    project = rules_pack(tmp_path, "project", [rule("project-other", tools=("fs_edit",), decision="deny")])
    kit = make_kit()
    kit.install(org, project)
    assert kit.call("read", {"path": "x"}).outcome is Outcome.OK


def test_rule_ids_duplicated_across_layers_are_refused_and_nothing_is_installed(tmp_path: Path) -> None:
    org = rules_pack(tmp_path, "org", [rule("deny-probe", decision="deny", reason="org")])
    project = rules_pack(tmp_path, "project", [rule("deny-probe", decision="deny", reason="project")])
    # Each pack alone is fine.
    assert load_pack(org).rule("deny-probe") is not None
    assert load_pack(project).rule("deny-probe") is not None
    with pytest.raises(PackLoadError) as loaded:
        load_packs([org, project])
    assert "PE401" in loaded.value.codes
    assert {p.rule_id for p in loaded.value.errors if p.code == "PE401"} == {"deny-probe"}

    kit = make_kit()
    with pytest.raises(PackLoadError) as installed:
        PolicyLayers.install(kit.registry, [org, project])
    assert "PE401" in installed.value.codes
    # Nothing was installed: the org's deny does not apply.
    assert probe(kit).outcome is Outcome.OK


def test_python_listeners_interleave_with_packs_in_installation_order(tmp_path: Path) -> None:
    kit = make_kit()
    seen: list[str] = []

    @kit.registry.on_pre_execute(name="py-before")
    async def before(call: Any, next: Any) -> Any:
        seen.append("before")
        return await next()

    kit.install(rules_pack(tmp_path, "p", [rule("deny-probe", decision="deny", reason="pack")]))

    @kit.registry.on_pre_execute(name="py-after")
    async def after(call: Any, next: Any) -> Any:
        seen.append("after")
        if call.name == "fs_read":
            return deny("python says no")
        return await next()

    assert probe(kit).source.name == "deny-probe"
    assert seen == ["before"]  # the pack's deny ended the chain: py-after never ran
    seen.clear()
    assert kit.call("read", {"path": "x"}).outcome is Outcome.OK
    assert seen == ["before", "after"]
    denied = kit.call("fs_read", {"path": "x"})
    assert denied.reason == "python says no"
    assert denied.source is not None
    assert denied.source.name == "py-after"


def test_python_post_listeners_before_and_after_a_pack_see_the_value_before_and_after_its_rewrite(
    tmp_path: Path,
) -> None:
    kit = make_kit()
    seen: dict[str, Any] = {}

    @kit.registry.on_post_execute(name="py-before")
    async def before(call: Any, result: Any, next: Any) -> Any:
        seen["before"] = result.value["api_token"]
        return await next()

    kit.install(
        rules_pack(
            tmp_path, "p", [rule("redact", stage="post-execute", tools=("login",), redact=[{"keys": ["*token"]}])]
        )
    )

    @kit.registry.on_post_execute(name="py-after")
    async def after(call: Any, result: Any, next: Any) -> Any:
        seen["after"] = result.value["api_token"]
        return accept()

    result = kit.call("login", {"user": "ada"})
    assert result.outcome is Outcome.OK
    assert seen == {"before": SECRET_TOKEN, "after": "[REDACTED]"}
    assert result.value["api_token"] == "[REDACTED]"


# -- sources and digests ---------------------------------------------------------------------------


DECIDING_PACK = [
    rule("src-deny", tools=("fs_write",), decision="deny", reason="no writes"),
    rule("src-ask", tools=("shell",), decision="ask", reason="ask"),
    rule("src-guard", stage="guard", tools=("read",), when="arguments.path == '/etc'", reason="guard"),
    rule("src-block", stage="post-execute", tools=("login",), block="blocked"),
    rule("src-redact", stage="post-execute", tools=("secrets",), redact=[{"keys": ["api_token"]}]),
    rule("src-deadline", stage="execute", tools=("slow",), timeout=0.02),
]


@pytest.mark.parametrize(
    ("tool", "arguments", "rule_id", "outcome"),
    [
        ("fs_write", {"path": "x"}, "src-deny", Outcome.DENIED),
        ("shell", {"command": "ls"}, "src-ask", Outcome.DENIED),
        ("read", {"path": "/etc"}, "src-guard", Outcome.DENIED),
        ("login", {"user": "ada"}, "src-block", Outcome.BLOCKED),
    ],
)
def test_every_decision_records_rule_id_pack_and_digest(
    tmp_path: Path, tool: str, arguments: dict[str, Any], rule_id: str, outcome: Outcome
) -> None:
    kit = make_kit()
    layers = kit.install(rules_pack(tmp_path, "deciding", DECIDING_PACK))
    digest = layers.packs[0].digest
    assert digest.startswith("sha256:") and len(digest) == len("sha256:") + 64
    result = kit.call(tool, arguments)
    assert result.outcome is outcome
    assert result.source is not None
    assert result.source.kind is SourceKind.RULE
    assert (result.source.name, result.source.pack, result.source.digest) == (rule_id, "deciding", digest)
    assert kit.observed(result.call_id).source == result.source


def test_a_value_rewrite_records_rule_id_pack_and_digest(tmp_path: Path) -> None:
    kit = make_kit()
    layers = kit.install(rules_pack(tmp_path, "deciding", DECIDING_PACK))
    result = kit.call("secrets")
    assert [(s.name, s.pack, s.digest) for s in result.rewrites] == [("src-redact", "deciding", layers.packs[0].digest)]


def test_an_allowed_call_records_the_rule_that_allowed_it(tmp_path: Path) -> None:
    # Under default deny, the final allow is the decision that let this call run; the audited
    # result must say so (SPEC §4: a result records which stage and which rule decided it).
    kit = make_kit()
    layers = kit.install(
        rules_pack(tmp_path, "p", [rule("allow-read", tools=("read",), decision="allow", final=True)], default="deny")
    )
    result = kit.call("read", {"path": "x"})
    assert result.outcome is Outcome.OK
    # Recorded as the result's source, or in a field naming who admitted the call.
    decider = getattr(result, "admitted_by", None) or result.source
    assert decider is not None
    assert (decider.name, decider.pack, decider.digest) == ("allow-read", "p", layers.packs[0].digest)
    assert kit.observed(result.call_id) == result


BLOCK_STYLE = """\
# a comment that does not count
lists:
  writers:
    - fs_write
    - fs_edit
rules:
  - id: deny-writes
    description: no writes
    stage: pre-execute
    tools:
      - "@writers"
    decision: deny
    reason: "No {name} here."
"""

FLOW_STYLE = """\
rules: [{reason: 'No {name} here.', decision: "deny", tools: ['@writers'],
         stage: pre-execute, description: "no writes", id: deny-writes}]   # trailing comment
lists: {writers: [fs_write, "fs_edit"]}
"""

MANIFEST_BLOCK = """\
name: fmt
version: 1.0.0
description: formatting test
default: allow
files: [rules.yaml]
"""

MANIFEST_REORDERED = """\
# reordered, quoted, block list
files:
  - 'rules.yaml'
default: "allow"
description: 'formatting test'
version: "1.0.0"
name: fmt
"""


def test_digest_does_not_change_with_formatting(tmp_path: Path) -> None:
    a = write_pack(tmp_path / "a", "fmt", {"rules.yaml": BLOCK_STYLE}, manifest=MANIFEST_BLOCK)
    b = write_pack(tmp_path / "b", "fmt", {"rules.yaml": FLOW_STYLE}, manifest=MANIFEST_REORDERED)
    assert (a / "rules.yaml").read_text() != (b / "rules.yaml").read_text()
    assert load_pack(a).digest == load_pack(b).digest


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('reason: "No {name} here."', 'reason: "No {name} here!"'),
        ("decision: deny", "decision: ask"),
        ("    - fs_edit\n", "    - fs_edit\n    - fs_delete\n"),
        ('- "@writers"', '- "@writers"\n      - shell'),
    ],
)
def test_digest_changes_with_a_semantic_edit(tmp_path: Path, old: str, new: str) -> None:
    assert old in BLOCK_STYLE
    a = write_pack(tmp_path / "a", "fmt", {"rules.yaml": BLOCK_STYLE}, manifest=MANIFEST_BLOCK)
    b = write_pack(tmp_path / "b", "fmt", {"rules.yaml": BLOCK_STYLE.replace(old, new)}, manifest=MANIFEST_BLOCK)
    assert load_pack(a).digest != load_pack(b).digest


def test_digest_changes_with_the_manifest_default(tmp_path: Path) -> None:
    a = write_pack(tmp_path / "a", "fmt", {"rules.yaml": BLOCK_STYLE}, manifest=MANIFEST_BLOCK)
    b = write_pack(tmp_path / "b", "fmt", {"rules.yaml": BLOCK_STYLE}, manifest=MANIFEST_BLOCK.replace("allow", "deny"))
    assert load_pack(a).digest != load_pack(b).digest


# -- reload -----------------------------------------------------------------------------------------


def _marker_pack(root: Path, marker: str, *, extra: list[dict[str, Any]] | None = None, version: str = "1.0.0") -> Path:
    """A pack whose post-execute rewrite stamps `marker` into the token of `gated` and `login`."""
    return rules_pack(
        root,
        "live",
        [
            rule(
                "stamp",
                stage="post-execute",
                tools=("gated", "login"),
                redact=[{"keys": ["api_token"], "replace_with": marker}],
            ),
            *(extra or []),
        ],
        version=version,
    )


def test_reload_swaps_later_calls_to_the_new_version(tmp_path: Path) -> None:
    kit = make_kit()
    folder = _marker_pack(tmp_path, "v1")
    layers = kit.install(folder)
    old_digest = layers.packs[0].digest
    assert kit.call("login", {"user": "ada"}).value["api_token"] == "v1"

    _marker_pack(tmp_path, "v2", extra=[rule("deny-probe", decision="deny", reason="new in v2")], version="2.0.0")
    report = layers.reload()
    assert report.swapped is True
    assert report.error is None
    assert [p.version for p in report.packs] == ["2.0.0"]
    assert layers.packs[0].digest != old_digest

    result = kit.call("login", {"user": "ada"})
    assert result.value["api_token"] == "v2"
    assert result.rewrites[0].digest == layers.packs[0].digest
    assert probe(kit).source.name == "deny-probe"


def test_a_call_in_flight_keeps_the_installation_it_started_with(tmp_path: Path) -> None:
    kit = make_kit()
    folder = _marker_pack(tmp_path, "old")
    layers = kit.install(folder)
    old_digest = layers.packs[0].digest

    async def main() -> tuple[Any, Any]:
        kit.started, kit.release = asyncio.Event(), asyncio.Event()
        in_flight = asyncio.create_task(kit.registry.call("gated"))
        await asyncio.wait_for(kit.started.wait(), 2)
        _marker_pack(tmp_path, "new")
        report = layers.reload()
        assert report.swapped is True
        after = await kit.registry.call("login", {"user": "ada"})  # a call that starts after the reload
        kit.release.set()
        return await asyncio.wait_for(in_flight, 2), after

    during, after = asyncio.run(main())
    assert during.outcome is Outcome.OK
    assert during.value["api_token"] == "old"
    assert during.rewrites[0].digest == old_digest
    assert after.value["api_token"] == "new"
    assert after.rewrites[0].digest != old_digest


@pytest.mark.parametrize(
    ("broken", "code"),
    [
        ("rules: [ {id: stamp, stage: post-execute\n", "PE101"),  # YAML syntax
        (
            'rules:\n  - id: stamp\n    stage: pre-execute\n    tools: [login]\n    when: "arguments.user =="\n'
            "    decision: deny\n",
            "PE301",
        ),  # JMESPath syntax
        (
            'rules:\n  - id: stamp\n    stage: pre-execute\n    tools: [login]\n    when: "no_such_fn(name)"\n'
            "    decision: deny\n",
            "PE302",
        ),  # unknown function
    ],
)
def test_a_broken_edit_keeps_the_last_good_pack_and_reports_why(tmp_path: Path, broken: str, code: str) -> None:
    kit = make_kit()
    folder = _marker_pack(tmp_path, "good")
    layers = kit.install(folder)
    good = layers.packs

    (folder / "rules.yaml").write_text(broken, encoding="utf-8")
    report = layers.reload()
    assert report.swapped is False
    assert report.packs == good
    assert layers.packs == good
    assert report.error is not None
    assert code in report.error.codes
    problem = next(p for p in report.error.errors if p.code == code)
    assert problem.location is not None
    assert problem.location.file.endswith("rules.yaml")
    # The running pack still applies.
    assert kit.call("login", {"user": "ada"}).value["api_token"] == "good"


def test_reload_async_compiles_in_a_thread_while_the_loop_keeps_serving(tmp_path: Path) -> None:
    kit = make_kit()
    folder = _marker_pack(tmp_path, "v1")
    layers = kit.install(folder)
    # Enough rules that compiling them takes a while (every one of them a full compile).
    many = [rule(f"r{i}", when=f"arguments.path == 'p{i}'", decision="deny", reason="r") for i in range(300)]
    _marker_pack(tmp_path, "v2", extra=many)

    async def main() -> tuple[Any, int, Any]:
        served = 0
        reloading = asyncio.create_task(layers.reload_async())
        while not reloading.done():  # calls keep being served while the new packs compile
            result = await kit.registry.call("login", {"user": "ada"})
            assert result.value["api_token"] in ("v1", "v2")
            served += 1
            await asyncio.sleep(0)
        after = await kit.registry.call("login", {"user": "ada"})
        return await reloading, served, after

    report, served, after = asyncio.run(main())
    assert report.swapped is True
    assert served > 1
    assert after.value["api_token"] == "v2"
    assert len(layers.packs[0].rules) > 300


def test_reload_async_keeps_the_running_packs_on_a_broken_edit(tmp_path: Path) -> None:
    kit = make_kit()
    folder = _marker_pack(tmp_path, "good")
    layers = kit.install(folder)
    (folder / "rules.yaml").write_text("rules: [\n", encoding="utf-8")
    report = asyncio.run(layers.reload_async())
    assert report.swapped is False and report.error is not None
    assert kit.call("login", {"user": "ada"}).value["api_token"] == "good"


def test_reload_succeeds_once_the_broken_edit_is_fixed(tmp_path: Path) -> None:
    kit = make_kit()
    folder = _marker_pack(tmp_path, "good")
    layers = kit.install(folder)
    (folder / "rules.yaml").write_text("rules: [\n", encoding="utf-8")
    assert layers.reload().swapped is False
    _marker_pack(tmp_path, "fixed")
    assert layers.reload().swapped is True
    assert kit.call("login", {"user": "ada"}).value["api_token"] == "fixed"


def test_a_broken_layer_keeps_every_layer_as_it_was(tmp_path: Path) -> None:
    org = rules_pack(tmp_path, "org", [rule("org-deny-fs-write", tools=("fs_write",), decision="deny", reason="v1")])
    project = _marker_pack(tmp_path, "good")
    kit = make_kit()
    layers = kit.install(org, project)
    # The org edit is fine, the project edit is broken: neither may be swapped in.
    rules_pack(tmp_path, "org", [rule("org-deny-fs-write", tools=("fs_write",), decision="deny", reason="v2")])
    (project / "rules.yaml").write_text("rules: {\n", encoding="utf-8")
    report = layers.reload()
    assert report.swapped is False
    assert kit.call("fs_write", {"path": "x"}).reason == "v1"
