"""A tool's glob argument (`role: glob`: Glob's pattern, Grep's glob) selects files: paths(@) reads path patterns."""

from __future__ import annotations

from typing import Any

import jmespath
import pytest
from jmespath.exceptions import JMESPathError

from policyengine import define_tool
from policyengine.arguments.paths import PathPattern
from policyengine.arguments.roles import Role, role_named
from policyengine.arguments.shell import glob_operands
from policyengine.language.functions import OPTIONS
from policyengine.values.frozen import freeze

SECRET = "paths(@)[?path_matches(@, ['.env', '.env.*', '*.pem', '.ssh'])] | length(@) > `0`"


def _decide(arguments: dict[str, Any], expression: str = SECRET) -> Any:
    document = freeze(
        {"name": "Glob", "arguments": arguments, "roles": {"pattern": "glob", "glob": "glob"}, "cwd": "/home/dev/p"}
    )
    return jmespath.search(expression, document, options=OPTIONS)


@pytest.mark.parametrize(
    ("arguments", "selects_a_secret"),
    [
        ({"pattern": "**/.e*"}, True),
        ({"pattern": ".env*"}, True),
        ({"pattern": "{README.md,.env}"}, True),
        ({"pattern": "**/*.pem"}, True),
        ({"pattern": ".ssh/*"}, True),
        ({"pattern": "x", "glob": ".e?v"}, True),
        ({"pattern": "src/**/*.ts"}, False),
        ({"pattern": "**/*.md"}, False),
        ({"pattern": "**/README.md"}, False),
        ({"pattern": "src/*/notes.md"}, False),  # a folder the star names is never read as a *.pem file
        ({"pattern": "TODO", "glob": "*.py"}, False),
    ],
)
def test_a_glob_argument_selects_the_files_it_may_expand_to(arguments: dict[str, Any], selects_a_secret: bool) -> None:
    assert _decide(arguments) is selects_a_secret


def test_the_glob_role_is_a_known_role() -> None:
    assert role_named("glob") is Role.GLOB


def test_a_glob_argument_that_is_not_a_string_fails_closed() -> None:
    with pytest.raises(JMESPathError, match="glob argument"):
        _decide({"pattern": 7})


def test_a_tool_glob_expands_braces_and_keeps_dollar_literal() -> None:
    assert glob_operands("{a,b}.md") == ("a.md", "b.md")
    (star,) = glob_operands("*.md")
    assert isinstance(star, PathPattern)
    (dollar,) = glob_operands("$x/*.md")
    assert dollar == "[$]x/*.md"  # a tool's glob is not a shell word: $x is a name
    assert not isinstance(glob_operands("notes.md")[0], PathPattern)


def test_a_cerberus_parameter_may_declare_the_glob_role() -> None:
    """The Cerberus dialect accepts `role: glob` as JSON Schema's `x-policy-role: glob` does."""
    tool = define_tool(
        name="find_files",
        description="d",
        parameters={"pattern": {"type": "string", "role": "glob"}},
        execute=lambda _a: None,
    )
    assert dict(tool.roles or {}) == {"pattern": "glob"}
