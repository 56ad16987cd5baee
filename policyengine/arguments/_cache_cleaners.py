"""Toolchain cleaners that empty a whole folder, the settings that name it, and text tools that write an empty file.

Data and small pure readers for `shell.py` (round fifteen, set M):

- `CLEANERS`: a toolchain subcommand that empties a whole cache or build folder (`cargo clean`,
  `uv cache clean`, `go clean -modcache`, `yarn cache clean`, `dotnet nuget locals all --clear`...)
  and the options and environment variables that name that folder. With no option and no variable
  it empties its own default folder, as ever; pointed elsewhere (`--target-dir .`,
  `UV_CACHE_DIR=~`) it is `rm -rf FOLDER`, and the walk reads it so.
- `SETTINGS`: the commands that persist such a folder in a tool's configuration (`go env -w
  GOMODCACHE=DIR`, `npm config set cache DIR`, `yarn config set cacheFolder DIR`): every later clean
  empties DIR. The walk reads the setting as the variable set for the rest of the line, and
  reports DIR as a cache folder (Command.cache_folders) for the packs to place.
- `OUTPUT_FILTERS`: text tools that write their result to a file their option or operand names
  (`sort -o FILE`, `shuf -o FILE`, `uniq IN OUT`): with nothing to read they empty it.
- `sed_empties`: whether a sed script deletes every line (`d`, `1,$d`; or prints nothing with -n).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CLEANERS",
    "OUTPUT_FILTERS",
    "SETTINGS",
    "VARIABLES",
    "Cleaner",
    "OutputFilter",
    "Setting",
    "has_words",
    "sed_empties",
    "setting_key",
]


@dataclass(frozen=True, slots=True)
class Cleaner:
    """One subcommand that empties a folder: where its words say it, and what names the folder."""

    words: tuple[str, ...]  # the subcommand's words, in order and adjacent (`cache`, `clean`)
    options: tuple[tuple[str, str], ...] = ()  # (option naming the folder, the part below it emptied)
    variables: tuple[tuple[str, str], ...] = ()  # (environment variable naming the folder, the part)
    modes: frozenset[str] = frozenset()  # one of these options selects this clean; empty: always


# Sources: `cargo help clean` (--target-dir, CARGO_TARGET_DIR, build.target-dir as
# CARGO_BUILD_TARGET_DIR); uv's CLI reference (`uv cache clean`, the older `uv clean`, --cache-dir,
# UV_CACHE_DIR); `go help clean` and `go help environment` (-cache is GOCACHE, -modcache is
# GOMODCACHE whose default is GOPATH/pkg/mod, -fuzzcache is GOCACHE/fuzz; -testcache only expires
# results); yarn v1 (`--cache-folder`, YARN_CACHE_FOLDER; berry reads the same variable); npm's
# `cache clean` (it removes CACHE/_cacache; --cache, npm_config_cache); `pip cache purge` (the http
# and wheels folders of --cache-dir, PIP_CACHE_DIR); NuGet's `locals --clear` (NUGET_PACKAGES,
# NUGET_HTTP_CACHE_PATH, NUGET_PLUGINS_CACHE_PATH); `brew cleanup` (HOMEBREW_CACHE); conda's
# `clean` (CONDA_PKGS_DIRS); `bun pm cache rm` (BUN_INSTALL_CACHE_DIR); composer's clear-cache
# (COMPOSER_CACHE_DIR); `poetry cache clear` (POETRY_CACHE_DIR); `deno clean` (DENO_DIR);
# `pre-commit clean` (PRE_COMMIT_HOME); `ccache -C` (--dir, CCACHE_DIR); `bazel clean --expunge`
# (the startup --output_base and --output_user_root). pnpm's `store prune` and maven's
# purge-local-repository remove only unreferenced or named packages, not a folder: not listed.
_NUGET = (("NUGET_PACKAGES", ""), ("NUGET_HTTP_CACHE_PATH", ""), ("NUGET_PLUGINS_CACHE_PATH", ""))
_GO_CLEAN = ("clean",)
CLEANERS: dict[str, tuple[Cleaner, ...]] = {
    "cargo": (
        Cleaner(
            ("clean",),
            options=(("--target-dir", ""),),
            variables=(("CARGO_TARGET_DIR", ""), ("CARGO_BUILD_TARGET_DIR", "")),
        ),
    ),
    "uv": (
        Cleaner(("cache", "clean"), options=(("--cache-dir", ""),), variables=(("UV_CACHE_DIR", ""),)),
        Cleaner(("clean",), options=(("--cache-dir", ""),), variables=(("UV_CACHE_DIR", ""),)),
    ),
    "go": (
        Cleaner(_GO_CLEAN, variables=(("GOCACHE", ""),), modes=frozenset({"-cache", "--cache"})),
        Cleaner(
            _GO_CLEAN,
            variables=(("GOMODCACHE", ""), ("GOPATH", "/pkg/mod")),
            modes=frozenset({"-modcache", "--modcache"}),
        ),
        Cleaner(_GO_CLEAN, variables=(("GOCACHE", "/fuzz"),), modes=frozenset({"-fuzzcache", "--fuzzcache"})),
    ),
    "yarn": (Cleaner(("cache", "clean"), options=(("--cache-folder", ""),), variables=(("YARN_CACHE_FOLDER", ""),)),),
    "npm": (
        Cleaner(
            ("cache", "clean"),
            options=(("--cache", "/_cacache"),),
            variables=(("npm_config_cache", "/_cacache"), ("NPM_CONFIG_CACHE", "/_cacache")),
        ),
    ),
    "pip": (
        Cleaner(("cache", "purge"), options=(("--cache-dir", ""),), variables=(("PIP_CACHE_DIR", ""),)),
        Cleaner(("cache", "remove"), options=(("--cache-dir", ""),), variables=(("PIP_CACHE_DIR", ""),)),
    ),
    "dotnet": (Cleaner(("nuget", "locals"), variables=_NUGET, modes=frozenset({"--clear", "-c"})),),
    "nuget": (Cleaner(("locals",), variables=_NUGET, modes=frozenset({"-clear", "--clear"})),),
    "brew": (Cleaner(("cleanup",), variables=(("HOMEBREW_CACHE", ""),)),),
    "conda": (Cleaner(("clean",), variables=(("CONDA_PKGS_DIRS", ""),)),),
    "mamba": (Cleaner(("clean",), variables=(("CONDA_PKGS_DIRS", ""),)),),
    "bun": (Cleaner(("pm", "cache", "rm"), variables=(("BUN_INSTALL_CACHE_DIR", ""),)),),
    "composer": tuple(
        Cleaner((verb,), variables=(("COMPOSER_CACHE_DIR", ""), ("COMPOSER_HOME", "/cache")))
        for verb in ("clear-cache", "clearcache", "cc")
    ),
    "poetry": (Cleaner(("cache", "clear"), variables=(("POETRY_CACHE_DIR", ""),)),),
    "deno": (Cleaner(("clean",), variables=(("DENO_DIR", ""),)),),
    "pre-commit": (Cleaner(("clean",), variables=(("PRE_COMMIT_HOME", ""),)),),
    "ccache": (
        Cleaner(
            (),
            options=(("--dir", ""), ("-d", "")),
            variables=(("CCACHE_DIR", ""),),
            modes=frozenset({"-C", "--clear"}),
        ),
    ),
    "bazel": (
        Cleaner(
            ("clean",),
            options=(("--output_base", ""), ("--output_user_root", "")),
            modes=frozenset({"--expunge", "--expunge_async"}),
        ),
    ),
}


@dataclass(frozen=True, slots=True)
class Setting:
    """A command that persists a tool's setting: its words, and the keys that name a cleaner's folder."""

    words: tuple[str, ...]  # `config`, `set`
    keys: dict[str, str]  # the key as setting_key spells it -> the variable a clean reads it as
    pairs: bool = False  # the values come as KEY=VALUE words (`go env -w`), else KEY VALUE or KEY=VALUE
    modes: frozenset[str] = frozenset()  # one of these options makes it write (`go env -w`)


# Sources: `go help env` (-w writes KEY=VALUE to the user's go.env); `npm help config` (set,
# and `npm set` its alias); yarn's `config set` (v1's cache-folder, berry's cacheFolder); `pip
# config set SECTION.cache-dir`; `poetry config cache-dir`; `composer config [-g] cache-dir`;
# `conda config --add/--append/--prepend pkgs_dirs`.
_NPM_KEYS = {"cache": "npm_config_cache"}
SETTINGS: dict[str, tuple[Setting, ...]] = {
    "go": (
        Setting(
            ("env",),
            {"gomodcache": "GOMODCACHE", "gocache": "GOCACHE", "gopath": "GOPATH"},
            pairs=True,
            modes=frozenset({"-w", "--w"}),
        ),
    ),
    "npm": (Setting(("config", "set"), _NPM_KEYS), Setting(("set",), _NPM_KEYS)),
    "yarn": (Setting(("config", "set"), {"cachefolder": "YARN_CACHE_FOLDER"}),),
    "pip": (Setting(("config", "set"), {"cachedir": "PIP_CACHE_DIR"}),),
    "poetry": (Setting(("config",), {"cachedir": "POETRY_CACHE_DIR"}),),
    "composer": (Setting(("config",), {"cachedir": "COMPOSER_CACHE_DIR"}),),
    "conda": (Setting(("config",), {"pkgsdirs": "CONDA_PKGS_DIRS"}),),
}

# Every variable a cleaner reads its folder from (the walk keeps their values along the line).
VARIABLES = frozenset(variable for rows in CLEANERS.values() for row in rows for variable, _ in row.variables)

_KEY_NOISE = re.compile(r"[-_]")


def setting_key(key: str) -> str:
    """A setting's key as SETTINGS spells it: the section off (`global.cache-dir`), no case, `-` or `_`."""
    return _KEY_NOISE.sub("", key.strip().rstrip(".").rpartition(".")[2].casefold())


def has_words(wanted: tuple[str, ...], words: list[str]) -> bool:
    """Whether the subcommand's words come in order, adjacent, among a command's words."""
    if not wanted:
        return True
    size = len(wanted)
    return any(tuple(words[index : index + size]) == wanted for index in range(len(words) - size + 1))


@dataclass(frozen=True, slots=True)
class OutputFilter:
    """A text tool that writes its result to a named file: the options naming it, those taking a value."""

    outputs: frozenset[str]  # options whose value is the output file (`-o`, `--output`)
    values: frozenset[str]  # other options that take the next word as their value
    second_operand: bool = False  # `uniq IN OUT`: the second operand is the output
    silencers: frozenset[str] = frozenset()  # options whose value 0 makes it write nothing (`shuf -n 0`)


# GNU coreutils' sort(1), shuf(1) and uniq(1): with every input empty (/dev/null) or an empty
# standard input, the output file is written empty. shuf -e/-i read their words, not files.
OUTPUT_FILTERS: dict[str, OutputFilter] = {
    "sort": OutputFilter(
        outputs=frozenset({"-o", "--output"}),
        values=frozenset(
            {"-k", "-t", "-S", "-T", "--key", "--field-separator", "--buffer-size", "--temporary-directory"}
            | {"--parallel", "--batch-size", "--compress-program", "--random-source", "--files0-from"}
        ),
    ),
    "shuf": OutputFilter(
        outputs=frozenset({"-o", "--output"}),
        values=frozenset({"-n", "--head-count", "--random-source", "-i", "--input-range"}),
        silencers=frozenset({"-n", "--head-count"}),
    ),
    "uniq": OutputFilter(
        outputs=frozenset(),
        values=frozenset({"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"}),
        second_operand=True,
    ),
}

# One sed command that deletes: an optional address or range (line numbers, `$`, /regex/ with
# its flags, first~step), an optional `!`, then `d` or `D`. Another spelling (`\%re%d`) is no
# delete here: the script is then not read as emptying (the red line is not widened by guesses).
_SED_ADDRESS = r"(?:[0-9]+(?:~[0-9]+)?|\$|/(?:[^/\\]|\\.)*/[IM]*)"
_SED_DELETE = re.compile(
    rf"\s*(?P<address>{_SED_ADDRESS}(?:\s*,\s*(?:{_SED_ADDRESS}|\+[0-9]+|~[0-9]+))?)?\s*(?P<not>!\s*)?[dD]\s*"
)
_WHOLE_RANGES = frozenset({"1,$", "0,$"})


def sed_empties(script: str, quiet: bool) -> bool:
    """Whether a sed script (its commands split on `;` and newlines) leaves no line: it deletes every one.

    Every command must be a delete, and one of them must reach every line (no address, `1,$`);
    with -n (or a first line `#n`) a script of deletes only, or an empty one, prints nothing too.
    """
    if script.startswith("#n\n") or script == "#n":
        quiet, script = True, script[3:]
    commands = [piece for piece in re.split(r"[;\n]", script) if piece.strip()]
    if not commands:
        return quiet
    whole = False
    for command in commands:
        match = _SED_DELETE.fullmatch(command)
        if match is None:
            return False
        address = re.sub(r"\s", "", match.group("address") or "")
        whole = whole or (not match.group("not") and (not address or address in _WHOLE_RANGES))
    return whole or quiet
