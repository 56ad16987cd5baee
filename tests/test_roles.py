"""Argument roles, working directories and capability tags: rules find values, not argument names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import jmespath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyengine import PolicyLayers, Registry, define_tool
from policyengine.arguments.roles import Role, key_roles
from policyengine.enforce.decider import Decider
from policyengine.enforce.evaluate import evaluate_sync
from policyengine.language.functions import OPTIONS
from policyengine.packs.loader import load_pack
from policyengine.tools.catalog import load_catalog
from policyengine.values.call import call_document
from policyengine.values.decisions import Deny
from policyengine.values.frozen import freeze
from support import write_pack


def _search(expression: str, arguments: dict[str, Any], cwd: str | None = None, roles: Any = None) -> Any:
    return jmespath.search(expression, call_document("t", freeze(arguments), "a", "1", cwd, roles), OPTIONS)


@pytest.mark.parametrize(
    ("key", "role"),
    [
        ("path", Role.PATH),
        ("file_path", Role.PATH),
        ("filePath", Role.PATH),
        ("FILE-PATH", Role.PATH),
        ("Dest", Role.PATH),
        ("targetDir", Role.PATH),
        ("file_name1", Role.PATH),
        ("url", Role.URL),
        ("webhookUrl", Role.URL),
        ("cmd", Role.COMMAND),
        ("to", Role.EMAIL),
        ("amount", Role.AMOUNT),
    ],
)
def test_a_key_named_for_a_role_gives_its_values_that_role(key: str, role: Role) -> None:
    assert role in key_roles(key)


@pytest.mark.parametrize("key", ["content", "file_content", "search_pattern", "body", "message", "description"])
def test_a_key_that_ends_in_a_content_word_is_plain_content(key: str) -> None:
    assert key_roles(key) == {Role.TEXT}


def test_paths_are_found_under_any_name_at_any_depth_and_in_lists() -> None:
    arguments = {
        "file_path": "/etc/shadow",
        "options": {"Dest": "/etc/cron.d/x", "deeper": {"items": [{"location": "/root/x"}]}},
        "files": ["/boot/a", "/boot/b"],
        "x": "/proc/self/environ",  # no role by name, a path by shape
        "content": "/var/log/syslog",  # plain content: never a path
        "count": 3,
    }
    assert _search("paths(@)", arguments) == [
        "/etc/shadow",
        "/etc/cron.d/x",
        "/root/x",
        "/boot/a",
        "/boot/b",
        "/proc/self/environ",
    ]


@pytest.mark.parametrize(
    ("value", "is_path"),
    [
        ("$HOME", True),
        ("${ENV_FILE}", True),
        ("$HOME/.env", True),
        ("${x}/y", True),
        ("$dir/.env", True),
        ("$region", False),  # a MongoDB field reference: nothing outside a command expands it
        ("$status", False),
        ("$totalAmount", False),
    ],
)
def test_an_expansion_is_a_path_by_shape_as_an_environment_variable_or_before_more_of_a_path(
    value: str, is_path: bool
) -> None:
    # Set F's false positive: {"$group": {"_id": "$region"}} in an aggregation pipeline.
    assert (len(_search("paths(@)", {"pipeline": [{"_id": value}]})) == 1) is is_path


def test_relative_paths_resolve_against_the_calls_cwd_and_climbs_against_its_root() -> None:
    arguments = {"path": "../../../../etc/shadow", "file": "notes.txt", "other": "notes.txt"}
    assert _search("paths(@)", arguments, cwd="/workspace/a") == ["/etc/shadow", "/workspace/a/notes.txt"]


def test_a_climb_with_no_cwd_is_of_unknown_place_and_may_lie_in_any_directory() -> None:
    found = _search("paths(@)[?path_within(@, '/etc')]", {"path": "../../etc/shadow"})
    assert found == ["../../etc/shadow"]
    assert _search("paths(@)[?path_surely_within(@, '/etc')]", {"path": "../../etc/shadow"}) == []


def test_a_path_with_a_nul_gives_the_c_reading_and_the_stripped_one() -> None:
    assert _search("paths(@)", {"path": ".env\x00/../notes.txt"}, cwd="/w") == ["/w/.env", "/w/notes.txt"]


def test_declared_roles_override_the_name_table() -> None:
    roles = freeze({"where": "path", "path": "text"})
    assert _search("paths(@)", {"where": "x", "path": "/etc/passwd"}, cwd="/w", roles=roles) == ["/w/x"]


def test_urls_emails_and_amounts_are_found_by_role() -> None:
    arguments = {"callback": "https://x.test/a", "recipient": "ann@example.com", "price": [5, 6], "note": "a@b.c"}
    assert _search("urls(@)", arguments) == ["https://x.test/a"]
    assert _search("emails(@)", arguments) == ["ann@example.com"]
    assert _search("amounts(@)", arguments) == [5, 6]


def test_a_tools_cerberus_roles_and_json_schema_roles_are_declared() -> None:
    tool = define_tool(
        name="put",
        description="d",
        parameters={
            "where": {"type": "string", "role": "path"},
            "opts": {"type": "dict", "schema": {"u": {"type": "string", "role": "url"}}},
        },
        execute=lambda _a: None,
    )
    assert dict(tool.roles or {}) == {"where": "path", "u": "url"}


def test_a_catalog_reads_x_policy_role_formats_tags_and_mcp_hints(tmp_path: Path) -> None:
    spec = {
        "name": "upload",
        "description": "d",
        "inputSchema": {
            "type": "object",
            "properties": {
                "where": {"type": "string", "x-policy-role": "path"},
                "u": {"type": "string", "format": "uri"},
            },
        },
        "annotations": {"destructiveHint": True, "readOnlyHint": False},
        "x-policy-tags": ["Writes"],
    }
    file = tmp_path / "tools.json"
    file.write_text(json.dumps([spec]))
    tool = load_catalog(file)["upload"]
    assert dict(tool.roles or {}) == {"where": "path", "u": "url"}
    assert tool.tags == {"destructive", "writes"}


def test_an_unknown_role_name_is_refused_when_the_tool_is_defined() -> None:
    from policyengine import DefinitionError

    with pytest.raises(DefinitionError):
        define_tool(
            name="t", description="d", parameters={"p": {"type": "string", "role": "paht"}}, execute=lambda _a: None
        )


TAGGED = {
    "rules.yaml": {
        "rules": [
            {
                "id": "deny-destructive",
                "stage": "pre-execute",
                "tools": ["tag:destructive", "rm"],
                "decision": "deny",
                "reason": "no",
            }
        ]
    }
}


def test_tag_selectors_reach_tools_by_capability_and_names_stay_a_fallback(tmp_path: Path) -> None:
    pack = write_pack(tmp_path, "p", TAGGED)
    registry = Registry()
    registry.register(
        define_tool(
            name="wipe", description="d", parameters={}, execute=lambda _a: None, annotations={"destructiveHint": True}
        )
    )
    registry.register(
        define_tool(
            name="look", description="d", parameters={}, execute=lambda _a: None, annotations={"readOnlyHint": True}
        )
    )
    layers = PolicyLayers.install(registry, [pack])
    verdict = {name: evaluate_sync(layers.registry, name, {}) for name in ("wipe", "look", "rm", "other")}
    assert {n: v.decision.value for n, v in verdict.items() if v} == {
        "wipe": "deny",
        "look": "allow",
        "rm": "deny",
        "other": "allow",
    }
    # The Decider the registry builds sees the same tags.
    assert registry.call_sync("wipe", {}).outcome.value == "denied"


def test_an_unset_hint_is_not_a_capability() -> None:
    tool = define_tool(
        name="t", description="d", parameters={}, execute=lambda _a: None, annotations={"destructiveHint": False}
    )
    assert tool.tags == frozenset()


CWD_PACK = {
    "rules.yaml": {
        "rules": [
            {
                "id": "no-etc",
                "stage": "guard",
                "tools": ["*"],
                "when": "paths(@)[?path_within(@, '/etc')] | length(@) > `0`",
                "reason": "{join(', ', paths(@))}",
            }
        ]
    },
}


def test_the_packs_cwd_applies_to_calls_that_carry_none_and_a_calls_own_cwd_wins(tmp_path: Path) -> None:
    pack = load_pack(write_pack(tmp_path, "p", CWD_PACK, cwd="/srv/app"))
    decider = Decider([pack])
    assert decider.cwd == "/srv/app"
    assert cast(Deny, decider.decide("read", {"path": "../../etc/passwd"})).reason == "/etc/passwd"
    assert decider.decide("read", {"path": "../x"}).__class__.__name__ == "Allow"
    assert cast(Deny, decider.decide("read", {"path": "passwd"}, cwd="/etc")).reason == "/etc/passwd"


def test_registry_call_passes_its_cwd_to_policy(tmp_path: Path) -> None:
    registry = Registry(cwd="/etc")
    registry.register(
        define_tool(name="read", description="d", parameters={"path": {"type": "string"}}, execute=lambda _a: "x")
    )
    PolicyLayers.install(registry, [write_pack(tmp_path, "p", CWD_PACK, cwd="/srv/app")])
    assert registry.call_sync("read", {"path": "passwd"}).outcome.value == "denied"
    assert registry.call_sync("read", {"path": "passwd"}, cwd="/home/u").outcome.value == "ok"


@given(st.text(alphabet=st.sampled_from([*"ab/.\\~$%:", "\x00", "é"]), max_size=16))
def test_a_role_view_either_answers_or_fails_closed(path: str) -> None:
    try:
        found = _search("paths(@)", {"path": path}, cwd="/w")
    except jmespath.exceptions.JMESPathError:
        return
    assert all(isinstance(p, str) for p in found)


def test_threads_deciding_different_calls_never_see_each_others_roles() -> None:
    import sys
    import threading

    calls = [{"path": f"/etc/x{i}"} if i % 2 else {"path": f"notes{i}.txt"} for i in range(200)]
    expected = [_search("paths(@)", c, cwd="/w") for c in calls]
    wrong: list[int] = []

    def work() -> None:
        for _ in range(20):
            for i, c in enumerate(calls):
                if _search("paths(@)", c, cwd="/w") != expected[i]:
                    wrong.append(i)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []


def _mcp_spec(node: dict[str, Any]) -> dict[str, Any]:
    return {"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"p": node}}}


@pytest.mark.parametrize("role", ["pth", "Path", "paths", "", 5, ["path"]])
def test_an_unknown_declared_role_is_refused_with_the_roles_one_may_use(role: Any) -> None:
    """A misspelt role would give the key no role at all, so a red line reading paths(@) would miss it."""
    from policyengine import DefinitionError, tool_from_spec

    with pytest.raises(DefinitionError) as caught:
        tool_from_spec(_mcp_spec({"type": "string", "x-policy-role": role}))
    assert "input_schema.p: unknown x-policy-role" in str(caught.value)
    assert "path, url, command" in str(caught.value.hint)


def test_a_part_with_no_cerberus_form_keeps_the_role_it_declares() -> None:
    from policyengine import tool_from_spec

    node = {"allOf": [{"type": "string"}, {"minLength": 1}], "x-policy-role": "path"}
    assert dict(tool_from_spec(_mcp_spec(node)).roles or {}) == {"p": "path"}


def test_the_role_names_a_spec_may_declare_are_the_engines_roles() -> None:
    """tools sits below language: its list of role names is a copy, kept equal here (and the Cerberus rule's)."""
    from policyengine.tools.cerberus_dialect import ParameterValidator
    from policyengine.tools.json_schema import ROLE_NAMES

    assert set(ROLE_NAMES) == {role.value for role in Role}
    assert "'allowed': " + repr(list(ROLE_NAMES)) in (ParameterValidator._validate_role.__doc__ or "")


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        # JSON text under a key with no role is read by role like the arguments it spells.
        ({"spec": '{"path": ".env"}'}, [".env"]),
        ({"options": ' {"file": "/etc/shadow"} '}, ["/etc/shadow"]),
        ({"list": '[{"target": "a/b.txt"}]'}, ["a/b.txt"]),
        # A dotfile's name with suffixes is a path by shape.
        ({"input": ".env.production"}, [".env.production"]),
        # Plain content stays content, and text that is no JSON object or array spells nothing.
        ({"content": '{"path": "/etc/x"}'}, []),
        ({"note": '{"path": ".env"}'}, []),
        ({"q": "[1, 2"}, []),
        ({"q": '"quoted"'}, []),
        ({"q": "{not json}"}, []),
    ],
)
def test_json_text_and_dotfile_suffixes_are_read_by_role(arguments: dict[str, Any], expected: list[str]) -> None:
    """A string that spells JSON is walked by role; `.env.production` is a path by its shape (h1-packs)."""
    assert _search("paths(@)", arguments) == expected


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        # `to` and `from` are addresses by name, and places too when shaped like a path.
        ({"from": "x", "to": "/usr/bin/x"}, {"paths": ["/usr/bin/x"], "programs": []}),
        ({"to": "a@example.com"}, {"paths": [], "programs": []}),
        # A notebook kernel's `!cmd`, `%sx` and `%system` lines and shell cell magics run in a shell.
        ({"code": "!rm -rf build"}, {"paths": ["/w/build", "/w/build"], "programs": ["!rm", "rm"]}),
        ({"code": "%%bash\nshred -u x"}, {"paths": ["/w/x", "/w/x"], "programs": ["%%bash", "shred", "shred"]}),
    ],
)
def test_addresses_as_paths_and_notebook_shell_lines(arguments: dict[str, Any], expected: dict[str, Any]) -> None:
    """A path under `to` is a path; a notebook's shell escapes are commands (h1-packs, round four)."""
    assert _search("paths(@)", arguments, "/w") == expected["paths"]
    assert _search("programs(@)", arguments, "/w") == expected["programs"]
