"""Install as the README says, from a wheel, in a fresh virtual environment; then decide a recorded event.

Run: python scripts/check_install.py [--keep]   (.ci/run runs it before the test suite)

1. builds a wheel of this checkout (`pip wheel --no-deps`);
2. creates a fresh virtual environment;
3. runs the README's install block (the fenced block after `<!-- install: ... -->`, read from
   README.md, so the README cannot drift from what is checked) in an empty project folder, each
   `pip` pointed at the wheel's folder (`--find-links`), with no PYTHONPATH: what runs is what
   was installed;
4. checks the installed package is that wheel (the same files, the same hashes) and its version;
5. feeds the recorded Claude Code PreToolUse event `Read .env` (tests/data/claude_code) through
   the hook command `init claude-code` wrote into the project's .claude/settings.json, and through
   the README's Claude Code recipe: both must deny it, and allow (or leave to Claude Code) a
   `Read README.md`.

Exit 0 and one summary line with the time each step took, or exit 1 saying what failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
EVENTS = ROOT / "tests" / "data" / "claude_code" / "pre_tool_use.json"
RECORDED_HOME = "/home/dev/project"  # the recorded events' project folder
DISTRIBUTION = "agent-policyengine"


class Failed(Exception):
    """A step did not do what the README says."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (printed) to look at")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="check-install-"))
    timings: dict[str, float] = {}
    try:
        wheel = _timed(timings, "wheel", lambda: build_wheel(work / "wheels"))
        venv = _timed(timings, "venv", lambda: make_venv(work / "venv"))
        project = work / "my-project"
        project.mkdir()
        (project / "README.md").write_text("# my project\n", "utf-8")
        _timed(timings, "install", lambda: run_install_block(venv, wheel.parent, project))
        _timed(timings, "verify", lambda: check_installed(venv, wheel))
        _timed(timings, "hook", lambda: check_claude_code(venv, project))
    except Failed as failure:
        print(f"check_install: FAILED: {failure}", file=sys.stderr)
        print(f"check_install: the work folder is kept: {work}", file=sys.stderr)
        return 1
    if args.keep:
        print(f"check_install: the work folder is kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in timings.items())
    print(f"check_install: ok in {sum(timings.values()):.1f} s ({steps})")
    return 0


def _timed(timings: dict[str, float], name: str, step: Any) -> Any:
    started = time.monotonic()
    result = step()
    timings[name] = time.monotonic() - started
    return result


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)
    if done.returncode != 0:
        raise Failed(f"`{shlex.join(argv)}` exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done


def _clean_env(venv: Path) -> dict[str, str]:
    """The environment of a user of the fresh venv: its bin first, nothing of this checkout's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "POLICYENGINE_", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(venv)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["POLICYENGINE_HOOK_HELPER"] = "off"  # no background helper outlives the check
    return env


def build_wheel(folder: Path) -> Path:
    """The wheel of this checkout."""
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(ROOT), "-w", str(folder)])
    wheels = list(folder.glob("*.whl"))
    if len(wheels) != 1:
        raise Failed(f"pip wheel built {len(wheels)} wheels in {folder}, not one")
    return wheels[0]


def make_venv(folder: Path) -> Path:
    """A fresh virtual environment (with pip, nothing else)."""
    _run([sys.executable, "-m", "venv", str(folder)])
    return folder


def install_block() -> list[str]:
    """The README's install lines: the fenced block after `<!-- install: ... -->`."""
    text = README.read_text("utf-8")
    found = re.search(r"<!-- install:[^>]*-->\n```bash\n(.*?)\n```", text, re.S)
    if found is None:
        raise Failed("README.md has no `<!-- install: ... -->` block (a fenced bash block after the marker)")
    lines = [line for line in found.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not any(re.match(r"pip install\b", line) for line in lines):
        raise Failed("README.md's install block has no `pip install` line")
    return lines


def run_install_block(venv: Path, wheels: Path, project: Path) -> None:
    """The README's install lines, as a user types them in the project, pip pointed at the wheel's folder."""
    lines = install_block()
    # A function, so each line runs as written; --find-links adds the wheel's folder to where pip looks.
    script = "\n".join(
        ["set -euo pipefail", f'pip() {{ command pip "$@" --find-links {shlex.quote(str(wheels))}; }}']
        + [f"echo {shlex.quote('$ ' + line)}\n{line}" for line in lines]
    )
    done = subprocess.run(
        ["bash", "-c", script], cwd=project, env=_clean_env(venv), capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        raise Failed(f"the README's install block failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")


def _record(lines: str) -> set[tuple[str, str]]:
    """(path, hash) of every file of the package in a RECORD (not the bytecode pip compiled, which has no hash)."""
    rows = (line.split(",") for line in lines.splitlines() if line)
    return {(row[0], row[1]) for row in rows if row[0].startswith("policyengine/") and row[1]}


def check_installed(venv: Path, wheel: Path) -> None:
    """The installed `policyengine` is the wheel's: the same files with the same hashes, and its version."""
    with zipfile.ZipFile(wheel) as archive:
        (record,) = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        built = _record(archive.read(record).decode("utf-8"))
    version = wheel.name.split("-")[1]
    python = str(venv / "bin" / "python")
    code = (
        "import importlib.metadata as m, policyengine, sys; "
        f"d = m.distribution({DISTRIBUTION!r}); "
        "print(d.version); print(policyengine.__file__); sys.stdout.write(d.read_text('RECORD'))"
    )
    done = _run([python, "-c", code], cwd="/", env=_clean_env(venv))
    installed_version, location, installed = done.stdout.split("\n", 2)
    if installed_version != version:
        raise Failed(f"{DISTRIBUTION} {installed_version} is installed, not the wheel's {version}")
    if not Path(location).resolve().is_relative_to(venv.resolve()):
        raise Failed(f"policyengine was imported from {location}, not from the fresh venv {venv}")
    if _record(installed) != built:
        raise Failed(f"the installed files differ from the wheel's {wheel.name}: the index's copy was installed?")
    shipped = _run([str(venv / "bin" / "policyengine"), "--version"], cwd="/", env=_clean_env(venv)).stdout.strip()
    if shipped != f"policyengine {version}":
        raise Failed(f"`policyengine --version` says {shipped!r}, not 'policyengine {version}'")


def _event(name: str, project: Path) -> dict[str, Any]:
    cases = json.loads(EVENTS.read_text("utf-8"))
    event = next((c["event"] for c in cases if c["name"] == name), None)
    if event is None:
        raise Failed(f"{EVENTS.relative_to(ROOT)} has no recorded event {name!r}")
    moved: dict[str, Any] = json.loads(json.dumps(event).replace(RECORDED_HOME, str(project)))
    return moved


def _decide(command: str, event: dict[str, Any], venv: Path, project: Path) -> str | None:
    """The hook command through a shell in the project, as Claude Code runs it: its permissionDecision."""
    done = subprocess.run(
        ["bash", "-c", command],
        input=json.dumps(event),
        cwd=project,
        env=_clean_env(venv),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise Failed(f"the hook `{command}` exited {done.returncode}: {done.stderr}")
    decided: str | None = json.loads(done.stdout).get("hookSpecificOutput", {}).get("permissionDecision")
    return decided


def _recipe_command() -> str:
    """The README's Claude Code recipe's PreToolUse command."""
    found = re.search(r"<!-- recipe: claude-code -->\n```json\n(.*?)\n```", README.read_text("utf-8"), re.S)
    if found is None:
        raise Failed("README.md has no Claude Code recipe (`<!-- recipe: claude-code -->`)")
    command: str = json.loads(found.group(1))["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    return command


def check_claude_code(venv: Path, project: Path) -> None:
    """The recorded `Read .env` denied, and `Read README.md` let through, by init's hook and by the recipe."""
    settings = project / ".claude" / "settings.json"
    if not settings.is_file():
        raise Failed(f"the install block wrote no {settings} (it should run `policyengine init claude-code`)")
    init_command = json.loads(settings.read_text("utf-8"))["hooks"]["PreToolUse"][-1]["hooks"][0]["command"]
    read_env = _event("reading .env", project)
    read_readme = {**read_env, "tool_input": {"file_path": str(project / "README.md")}}
    for source, command in (("init claude-code", init_command), ("the README's recipe", _recipe_command())):
        if (decided := _decide(command, read_env, venv, project)) != "deny":
            raise Failed(f"{source}'s hook decided the recorded `Read .env` as {decided!r}, not deny")
        if (decided := _decide(command, read_readme, venv, project)) not in (None, "allow"):
            raise Failed(f"{source}'s hook decided `Read README.md` as {decided!r}")


if __name__ == "__main__":
    sys.exit(main())
