"""Round twelve: places mentioned anywhere in a value that is not plain content (embedded_places.mentioned_tokens)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine import PolicyLayers, Registry
from policyengine.adapters.claude_code import BUILTIN_CATALOG
from policyengine.arguments.embedded_places import mentioned_tokens
from policyengine.arguments.roles import Role, collect_all
from policyengine.enforce.evaluate import evaluate_sync
from policyengine.tools.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent


def test_a_drive_colon_stays_and_its_rest_is_read_too() -> None:
    """`C:\\x` is a drive path; `s:/etc/x` is a drive path and /etc/x."""
    assert mentioned_tokens("see C:\\Windows\\System32 now") == ["C:\\Windows\\System32", "\\Windows\\System32"]
    assert mentioned_tokens("x s:/etc/x") == ["s:/etc/x", "/etc/x"]


def test_a_key_or_host_colon_splits() -> None:
    """`out:/x`, `host:/etc/y` name /x and /etc/y; a volume names its host side only."""
    assert mentioned_tokens("out:/x host:/etc/y /etc:/host-etc") == ["/x", "/etc/y", "/etc"]
    assert mentioned_tokens("- ./site:/usr/share/nginx/html:ro") == ["./site"]


def test_a_url_keeps_its_scheme_and_ipv6_host() -> None:
    """A URL is one token, its IPv6 host in brackets too; a scheme after a key's colon is found."""
    assert mentioned_tokens("url http://[fd00:ec2::254]/latest") == ["http://[fd00:ec2::254]/latest"]
    assert mentioned_tokens("cfg:http://169.254.169.254/x") == ["http://169.254.169.254/x"]
    assert mentioned_tokens("see http://h/a.") == ["http://h/a.", "http://h/a"]


def test_a_bare_ipv6_address_spells_nothing() -> None:
    """`fe80::1` splits into hex words with no shape."""
    assert mentioned_tokens("addr fe80::1 ok") == []


def test_quotes_parentheses_and_brackets_split() -> None:
    """SQL quotes, a markdown link's parentheses, `k=v;` pairs and `@file` all give the place alone."""
    assert mentioned_tokens("COPY t FROM '/etc/shadow'") == ["/etc/shadow"]
    assert mentioned_tokens("[x](/etc/shadow)") == ["/etc/shadow"]
    assert mentioned_tokens("k=v;k2=/etc/x") == ["/etc/x"]
    assert mentioned_tokens("curl -d @/etc/shadow") == ["/etc/shadow"]
    assert mentioned_tokens("copy it from /etc/shadow please.") == ["/etc/shadow"]


def test_noise_is_left() -> None:
    """Env references alone, lone separators, `~5`, money and percentages mention no place."""
    assert mentioned_tokens("Bearer ${GITHUB_TOKEN} $DB_PASSWORD costs $5000, 50% off ~5 min a / b />") == []
    assert mentioned_tokens("${HOME}/.ssh/id_rsa x") == ["${HOME}/.ssh/id_rsa"]


def test_the_whole_value_is_not_read_again() -> None:
    """A token that is the whole value is left: its key and shape read it already."""
    assert mentioned_tokens("C:\\Users\\Dev\\x.py") == []


def test_dotfiles_only_under_path_keys() -> None:
    """`fix: load .env lazily` under a key naming no path mentions no file; under a path key it does."""
    assert mentioned_tokens("use .env and .npmrc", dotfiles=False) == []
    assert mentioned_tokens("use .env and .npmrc") == [".env", ".npmrc"]


def test_shape_only_lookalikes_are_relative_places() -> None:
    """`text/plain`, `3/4`, dates and `and/or` pass the shape test as relative paths (never weakened)."""
    assert mentioned_tokens("text/plain 3/4 2026/12/06 and/or") == ["text/plain", "3/4", "2026/12/06", "and/or"]


def test_the_reader_is_bounded() -> None:
    """Padding with 100,000 relative pairs stops the weak reading; a root after it is still read."""
    value = " ".join(f"a{i}/b" for i in range(5000)) + " /etc/shadow"
    found = mentioned_tokens(value)
    assert "/etc/shadow" in found
    assert len(found) <= 256 + 1024


PLACES: dict[str, list[tuple[str, str | None]]] = {
    "claude-code": [
        ("/etc/shadow", None),
        ("~/.ssh/id_rsa", "no-secret-files"),
        ("http://169.254.169.254/latest/meta-data/", "no-cloud-metadata"),
    ],
    "baseline": [("/etc/shadow", "no-system-dirs"), ("/etc/sudoers", "no-system-dirs")],
    "bfcl": [("/etc/shadow", "fs-no-system-paths"), ("/root/.aws/credentials", "fs-no-system-paths")],
}
TOOLS = {"claude-code": "mcp__ops__run_job", "baseline": "run_job", "bfcl": "run_job"}
KEYS = ["source", "target", "config", "spec", "options", "location", "ref", "input", "setting", "conf"]
KEYS += ["job", "manifest", "definition", "template", "plan", "step", "stage", "params", "payload", "origin"]
FORMS = [
    "please copy it from {p} before the run",
    "host=db;port=5432;sslcert={p};mode=full",
    "COPY staging FROM '{p}' WITH CSV",
    'resource "local_file" "x" {{ filename = "{p}" }}',
    "ADD {p} /app/data",
    "see [the notes]({p}) first",
]
FILLER = st.lists(st.sampled_from(["alpha", "beta", "report", "weekly", "build", "ok"]), max_size=4)


@cache
def _registry(pack: str) -> Registry:
    """The shipped pack on a registry (claude-code with Claude Code's built-in tools)."""
    registry = Registry()
    if pack == "claude-code":
        for definition in load_catalog(BUILTIN_CATALOG).values():
            registry.register(definition)
    return PolicyLayers.install(registry, [ROOT / "policies" / pack]).registry


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    pack=st.sampled_from(sorted(PLACES)),
    key=st.sampled_from(KEYS),
    form=st.sampled_from(FORMS),
    index=st.integers(0, 2),
    before=FILLER,
    after=FILLER,
)
def test_a_mentioned_forbidden_place_gets_the_red_line(
    pack: str, key: str, form: str, index: int, before: list[str], after: list[str]
) -> None:
    """A forbidden place inside a sentence, a connection string, SQL, HCL, a Dockerfile line or a link is denied."""
    place, rule = PLACES[pack][index % len(PLACES[pack])]
    value = " ".join([*before, form.format(p=place), *after])
    evaluation = evaluate_sync(_registry(pack), TOOLS[pack], {key: value}, call_id="mentions", cwd="/home/dev/project")
    assert evaluation is not None
    assert evaluation.decision.value == "deny", (value, evaluation.rule, evaluation.reason)
    if rule is not None:
        assert evaluation.rule == rule, (value, evaluation.rule)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    key=st.sampled_from(["content", "message", "description", "text", "comment", "notes"]),
    form=st.sampled_from(FORMS),
    place=st.sampled_from(["/etc/shadow", "~/.ssh/id_rsa", "http://169.254.169.254/latest/"]),
)
def test_content_keys_never_add_a_mentioned_place(key: str, form: str, place: str) -> None:
    """Under a content key the place written is prose: no path or URL comes from it."""
    found = collect_all({key: form.format(p=place)})
    assert place not in found.values[Role.PATH]
    assert place not in found.values[Role.URL]
