"""Round eleven (set J): places a string argument spells inside itself (embedded_places)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import embedded_places
from policyengine.arguments.roles import Role, collect_all
from policyengine.language import functions
from support import ROOT, load_yaml


def _paths(arguments: dict[str, object], cwd: str | None = "/w") -> list[str]:
    """paths(@) of a call document."""
    return list(functions._by_role({"arguments": arguments, "cwd": cwd}, "paths"))


def test_yaml_playbook_names_its_destination() -> None:
    """A playbook's copy destination is a path of the call."""
    found = collect_all({"playbook": "- hosts: localhost\n  tasks:\n    - copy: {dest: /etc/sudoers.d/dev}\n"})
    assert "/etc/sudoers.d/dev" in found.values[Role.PATH]


def test_toml_and_ini_keys_are_read_by_role() -> None:
    """TOML's `path = "/x"` and INI's `dir=/x` are paths."""
    assert "/etc/profile.d/a.sh" in _paths({"settings_toml": '[output]\npath = "/etc/profile.d/a.sh"\n'})
    assert "/home/dev/.aws" in _paths({"job_ini": "[source]\ndir=/home/dev/.aws\n"})


def test_xml_attributes_are_read() -> None:
    """An MSBuild project's DestinationFolder attribute is a path by its shape."""
    tree = embedded_places.structured_text('<Project><Copy DestinationFolder="C:\\Windows\\System32" /></Project>')
    assert tree == [[{"DestinationFolder": "C:\\Windows\\System32"}]]


def test_yaml_alias_is_never_expanded() -> None:
    """An alias reads as empty: a billion-laughs document stays linear."""
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)
    )
    start = time.process_time()
    trees = embedded_places.structured_text(laughs)
    assert time.process_time() - start < 1.0
    assert trees and isinstance(trees[0], dict)
    assert trees[0]["c"] == [""] * 10


def test_content_keys_are_not_read_as_structure() -> None:
    """A message's `path: /etc/hosts` line is prose, not a place."""
    assert _paths({"text": "note: /etc/hosts changed\npath: /etc/hosts"}) == []


def test_option_strings_name_their_paths() -> None:
    """--opt=/x, -C /x, key=/x, key:/x, a sqlite URL's file and a volume's host side."""
    assert embedded_places.option_paths("--output=/etc/motd") == ["/etc/motd"]
    assert embedded_places.option_paths("-C /etc/nginx") == ["/etc/nginx"]
    assert "/var/log/syslog" in embedded_places.option_paths("level=debug;file=/var/log/syslog")
    assert embedded_places.option_paths("out:/Library/x.plist") == ["/Library/x.plist"]
    assert "/var/lib/app.db" in embedded_places.option_paths("sqlite:////var/lib/app.db")
    assert "/etc" in embedded_places.option_paths("/etc:/host-etc")


def test_option_strings_leave_prose_and_urls() -> None:
    """A sentence naming a path, a URL's path and a relative option value name no rooted place."""
    assert embedded_places.option_paths("Fix /etc/hosts parsing") == []
    assert embedded_places.option_paths("https://example.com/a/b?x=1") == []
    assert embedded_places.option_paths("--config=.eslintrc.json") == []
    assert embedded_places.option_paths("postgresql://db.internal:5432/app") == []


def test_split_fields_join() -> None:
    """{dir, name, ext}, a nested {name, ext} and a segment list name the file they join to."""
    assert "/w/deploy/production.env" in embedded_places.joined_names(
        {"dir": "/w/deploy", "name": "production", "ext": "env"}
    )
    nested = embedded_places.joined_names({"parts": ["/w", "docker"], "file": {"name": "web", "ext": "env"}})
    assert "/w/docker/web.env" in nested
    assert "/home/dev/.ssh/id_rsa" in embedded_places.joined_names({"segments": ["home", "dev", ".ssh", "id_rsa"]})


def test_format_alone_is_no_extension() -> None:
    """A report's {name, format} names no file; beside a folder it does."""
    assert embedded_places.joined_names({"name": "quarterly", "format": "pdf"}) == []
    assert "/w/env.yaml" in embedded_places.joined_names({"base": "/w", "name": "env", "format": "yaml"})


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_readers_never_raise_and_give_strings(text: str) -> None:
    """Any text: the readers return (never raise), and option paths are strings found in the text."""
    for path in embedded_places.option_paths(text):
        assert isinstance(path, str)
        assert path in text or path.lstrip("/") in text
    embedded_places.structured_text(text)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["dir", "name", "ext", "segments", "x"]), st.text(max_size=20), max_size=4))
def test_joined_names_only_add(fields: dict[str, str]) -> None:
    """Joining never loses what the walk found: every original path value is still read."""
    found = collect_all(fields).values[Role.PATH]
    for key in ("dir",):
        value = fields.get(key)
        if value:
            assert value in found


def test_long_text_is_bounded() -> None:
    """A megabyte of YAML-looking text is not parsed (left as a string) and answers fast."""
    big = "a: /etc/x\n" * 200_000
    start = time.process_time()
    assert embedded_places.structured_text(big) == []
    embedded_places.option_paths(big)
    assert time.process_time() - start < 2.0


def test_a_config_files_own_interpolation_is_no_place() -> None:
    # Round eleven's merge: `primary: ${PRIMARY_TOKEN}` in a YAML body was read as a path of unknown name.
    text = "tokens:\n  primary: ${PRIMARY_TOKEN}\n  home: ${HOME}/.env\n  port: ${PORT:-80}\n"
    trees = embedded_places.structured_text(text)
    assert trees[0] == {"tokens": {"primary": None, "home": "${HOME}/.env", "port": None}}


def test_a_drive_letters_colon_is_no_option_key() -> None:
    assert embedded_places.option_paths("C:\\Users\\Dev\\Proj\\src\\x.py") == []
    assert embedded_places.option_paths("c:/users/dev/x.py") == []
    assert embedded_places.option_paths("out:/etc/motd") == ["/etc/motd"]


def _objects(value: Any) -> Iterator[Mapping[Any, Any]]:
    """Every object in a JSON-like value, itself included."""
    if isinstance(value, Mapping):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


def test_the_joined_names_fast_path_answers_as_the_full_reading_over_the_corpus() -> None:
    documents: list[Any] = [load_yaml(path) for path in sorted((ROOT / "tests" / "adversarial").glob("*.yaml"))]
    for path in [*sorted((ROOT / "benchmarks" / "redteam").glob("*.jsonl")), ROOT / "examples" / "bfcl-calls.jsonl"]:
        documents.extend(json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip())
    compared = joined = 0
    for document in documents:
        for value in _objects(document):
            expected = embedded_places._joined_names(value)
            assert embedded_places.joined_names(value) == expected, value
            compared += 1
            joined += bool(expected)
    assert compared > 20_000 and joined > 40, (compared, joined)  # 43,176 and 52 here
