"""The programs table of policyengine.arguments.shell: how known programs read their words (data only).

Every entry is data the walk in `shell.py` interprets; adding a program means adding a row here.

- `WRAPPERS`: programs that run the rest of their words as a command (`sudo`, `env`, `nice`,
  `uv run`...), with the option grammar that tells where that command starts. A wrapper word
  that is not literal, or an option not listed, makes the command unknown (CommandError): it
  could change which word is the program.
- `SUBCOMMAND_WRAPPERS`: `uv run`, `poetry run`, `pnpm exec`...: a program whose subcommand is
  a wrapper; other subcommands are ordinary programs.
- `RUNS_COMMANDS`: programs known to run their arguments as a command whose grammar is not
  described here: with any non-option word they are unknown.
- `GRAMMARS`: how other programs read options and operands: values that are not paths
  (`grep -e PAT`), values that are paths (`curl -o FILE`), `@FILE` data (`curl -d @.env`),
  URLs, directories later operands are relative to (`tar -C DIR`), code for the program
  (`python -c`), and a first operand that is a pattern or script rather than a file (`grep`,
  `sed`, `awk`, `jq`). A program not listed keeps the default: every non-option word may be a path.
- `INVOCATIONS`: where a program with subcommands says what it will do (`git daemon`, `npm init
  vite`, `python -m http.server`, `gpg --send-keys`, `cmake -E rm`): the walk reports each as an
  invocation string (Command.invocations, `invocations(@)`) for a pack's allow-list of placed ones.
- `ALIASES` and `canonical_names`: other names of one program (`nc.openbsd` is `nc`).
- `CODE_VARIABLES`, `PATH_VARIABLES`, `GIT_CODE_KEYS`: environment variables and git config keys
  whose value is shell code or a path; by class, `variable_kind`: names ending in
  `CODE_VARIABLE_SUFFIXES` (`*_EDITOR`, `*_PAGER`, `*_COMMAND`...), `PROMPT_VARIABLES` (PS0-PS4,
  expanded as in double quotes), `OPTION_VARIABLES` (`TAR_OPTIONS` is more of tar's options) and
  `LOADED_VARIABLES` (libraries and config files loaded unseen: code).
- `RUNNER_OPTION`: long options named for a command (`--pre`, `--exec`, `--*-command`...): their
  value is a command for a program whose row does not list them. `JOINS_WORDS`: wrappers that
  hand their words to `sh -c` (`npm explore`).
- `CREDENTIAL_OPTIONS`, `CREDENTIAL_VARIABLES`: options and variables whose value is a password
  (a `password=VALUE` word for the secret scan); `DECODERS`: programs whose literal input is
  decoded into a word (`xxd -r`, `base64 -d`, `uudecode`).
- `PYTHON_STDIN_MODULES`, `PYTHON_CODE_MODULES`, `REPL_WORDS`, `SQL_CODE`: REPLs and SQL that run
  code or open files.
- `COMMAND_READERS`, `READER_VERBS`: programs that read commands of their own (sftp, ftp,
  smbclient, sqlite3...) from standard input or an option, and which operands of each verb are
  local paths (`put .env` reads .env; `!CMD` runs CMD in a shell).
- `CMD_*`, `POWERSHELL_*`: the switches of Windows' `cmd` and `powershell`/`pwsh` (casefolded),
  and PowerShell's names for programs the packs know (`ri` is Remove-Item).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = [
    "ACTING_PROGRAMS",
    "ALIASES",
    "CMAKE_DELETERS",
    "CMAKE_PROGRAM_VERBS",
    "CMD_RUNS",
    "CMD_SWITCHES",
    "CODE_FILE",
    "CODE_OPTION",
    "CODE_SUBCOMMANDS",
    "CODE_VARIABLES",
    "CODE_VARIABLE_PREFIXES",
    "CODE_VARIABLE_SUFFIXES",
    "COMMAND_READERS",
    "COMPOSE_PLUGINS",
    "CONTAINER_EXEC_PROGRAMS",
    "CONTAINER_RUN",
    "CONTAINER_RUN_OPTIONS",
    "COREUTILS",
    "CREDENTIAL_OPTIONS",
    "CREDENTIAL_VARIABLES",
    "DECODERS",
    "DELETING_VERBS",
    "DELETING_VERB_WORDS",
    "ENVIRONMENT_PRINTERS",
    "GIT_BANG_CODE_KEYS",
    "GIT_CODE_KEYS",
    "GIT_CODE_OPTIONS",
    "GIT_CONFIG_OPTIONS",
    "GIT_EXACT_OPTIONS",
    "GIT_MESSAGE_SUBCOMMANDS",
    "GIT_NO_PATHSPECS",
    "GIT_PATCH_READERS",
    "GIT_PATH_KEYS",
    "GIT_RANGE_FILES",
    "GIT_RUNS",
    "GIT_RUNS_ATTACHED",
    "GIT_SAFETY_KEYS",
    "GIT_STDIN_CONTENT",
    "GIT_STDIN_NAMES",
    "GIT_TRUE",
    "GIT_WORKTREE_WRITERS",
    "GLUED_DELETING_VERBS",
    "GRAMMARS",
    "INVOCATIONS",
    "JOINS_WORDS",
    "KEEPING_OPTIONS",
    "LOADED_VARIABLES",
    "LONG_FLAGS",
    "METADATA_CLIENTS",
    "NAME_LISTS",
    "OPTION_DELETERS",
    "OPTION_VARIABLES",
    "OWN_GLOBS",
    "PATCH_PROGRAMS",
    "PATH_VARIABLES",
    "PLAIN_PROGRAMS",
    "POWERSHELL_ALIASES",
    "POWERSHELL_CODE",
    "POWERSHELL_ENCODED",
    "POWERSHELL_FILE",
    "POWERSHELL_FLAGS",
    "POWERSHELL_VALUES",
    "PROMPT_VARIABLES",
    "PYTHON_CODE_MODULES",
    "PYTHON_STDIN_MODULES",
    "READER_VERBS",
    "RECURSIVE_SEARCHERS",
    "REPL_CODE_OPTIONS",
    "REPL_WORDS",
    "RUNNER_OPTION",
    "RUNS_COMMANDS",
    "RUNS_SUBCOMMANDS",
    "SCHEDULERS",
    "SCRIPT_FILE",
    "SCRIPT_FILE_OPTIONS",
    "SCRIPT_RUNNERS",
    "SCRIPT_SETTERS",
    "SCRIPT_SETTER_PROGRAMS",
    "SECRET_RUNNERS",
    "SQL_CLIENTS",
    "SQL_CODE",
    "SQL_FILE_ACCESS",
    "SQL_OPERAND_CLIENTS",
    "STDIN_COMMANDS",
    "STDIN_SCRIPTS",
    "STDIN_WRITERS",
    "SUBCOMMAND_GLOBALS",
    "SUBCOMMAND_LEVELS",
    "SUBCOMMAND_WRAPPERS",
    "TEXT_PROGRAMS",
    "TREE_SEARCHERS",
    "UNKNOWN_VARIABLES",
    "WRAPPERS",
    "WRITERS",
    "WRITTEN_KEYS",
    "WRITTEN_OPTIONS",
    "Invocation",
    "Writes",
]


@dataclass(frozen=True, slots=True)
class Wrapper:
    """How a wrapper reads its options before the command it runs."""

    values: str = ""  # short options that take a value (attached or next word)
    flags: str | None = ""  # short options without a value; None: any other letter is a flag
    optional: str = ""  # short options whose value, if any, is attached (`xargs -i{}`)
    long_values: frozenset[str] = frozenset()
    long_flags: frozenset[str] | None = frozenset({"--help", "--version"})  # None: any
    paths: frozenset[str] = frozenset()  # options whose value is a path operand
    dirs: frozenset[str] = frozenset()  # options whose value is the directory the command runs in
    code: frozenset[str] = frozenset()  # options whose value is shell code (`flock -c CMD`)
    assignments: bool = False  # NAME=VALUE words may come before the command (env, sudo)
    positionals: int = 0  # words before the command (timeout's duration, chroot's new root)
    positional_paths: bool = False
    no_command: str = ""  # short options after which the remaining words are not a command


# Programs that read a cloud instance-metadata service, and the endpoint each reads (round six,
# set E, metadata-clients): the endpoint is one of the command's URLs, so a red line on metadata
# addresses meets the client as it meets `curl http://169.254.169.254/` (amazon-ec2-utils'
# ec2-metadata, cloud-utils' ec2metadata, oci-utils' tools, Google's guest environment).
METADATA_CLIENTS: dict[str, str] = {
    **dict.fromkeys(("ec2-metadata", "ec2metadata", "ec2-imds"), "http://169.254.169.254/latest/meta-data/"),
    **dict.fromkeys(("oci-metadata", "oci-instanceid", "oci-public-ip"), "http://169.254.169.254/opc/v2/instance/"),
    **dict.fromkeys(
        ("google_metadata_script_runner", "gce-metadata", "google_guest_agent"),
        "http://metadata.google.internal/computeMetadata/v1/",
    ),
}

# Programs whose arguments are text they print, never files they open: `echo $HOME` names no
# path (its redirections still do, and a `$(...)` inside still runs).
TEXT_PROGRAMS = frozenset({"echo", "printf"})


def _set(*names: str) -> frozenset[str]:
    """A frozenset of option names (short letters and long names alike)."""
    return frozenset(names)


# The namespaces `unshare` makes and `nsenter` enters, each a long flag of both.
_NAMESPACES = ("--mount", "--uts", "--ipc", "--net", "--pid", "--user", "--cgroup", "--time")

WRAPPERS: dict[str, Wrapper] = {
    "env": Wrapper(
        values="uCP",
        flags="i0v",
        long_values=frozenset({"--unset", "--chdir"}),
        long_flags=frozenset(
            {
                "--ignore-environment",
                "--null",
                "--debug",
                "--block-signal",
                "--default-signal",
                "--ignore-signal",
                "--list-signal-handling",
                "--help",
                "--version",
            }
        ),
        paths=frozenset({"C", "--chdir"}),
        dirs=frozenset({"C", "--chdir"}),
        assignments=True,
    ),
    "command": Wrapper(flags="pvV"),
    "builtin": Wrapper(),
    "exec": Wrapper(values="a", flags="cl"),
    "nohup": Wrapper(),
    # watch runs its command again and again (through `sh -c` with the words joined, unless -x).
    "watch": Wrapper(
        values="nq",
        flags="bcdegptwx",
        long_values=frozenset({"--interval", "--differences", "--equexit"}),
        long_flags=frozenset(
            {
                "--beep",
                "--color",
                "--no-color",
                "--errexit",
                "--chgexit",
                "--precise",
                "--no-title",
                "--no-wrap",
                "--no-linewrap",
                "--exec",
                "--help",
                "--version",
            }
        ),
    ),
    "setsid": Wrapper(flags="cfw", long_flags=frozenset({"--ctty", "--fork", "--wait", "--help", "--version"})),
    "coproc": Wrapper(assignments=True),  # a reserved word before a whole simple command
    "nice": Wrapper(values="n", flags="0123456789", long_values=frozenset({"--adjustment"})),
    "timeout": Wrapper(
        values="ks",
        flags="v",
        long_values=frozenset({"--kill-after", "--signal"}),
        long_flags=frozenset({"--preserve-status", "--foreground", "--verbose", "--help", "--version"}),
        positionals=1,
    ),
    "sudo": Wrapper(
        values="aCcDgpRrTtUu",
        flags="ABbEeHiKklNnPSsVv",
        optional="h",
        long_values=frozenset(
            {
                "--auth-type",
                "--close-from",
                "--login-class",
                "--chdir",
                "--group",
                "--host",
                "--prompt",
                "--chroot",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--user",
            }
        ),
        long_flags=frozenset(
            {
                "--askpass",
                "--background",
                "--bell",
                "--preserve-env",
                "--edit",
                "--set-home",
                "--login",
                "--remove-timestamp",
                "--reset-timestamp",
                "--list",
                "--non-interactive",
                "--preserve-groups",
                "--stdin",
                "--shell",
                "--validate",
                "--no-update",
                "--help",
                "--version",
            }
        ),
        paths=frozenset({"D", "R", "--chdir", "--chroot"}),
        dirs=frozenset({"D", "--chdir"}),
        assignments=True,
        no_command="e",  # sudo -e FILE...: sudoedit, the words are files
    ),
    "doas": Wrapper(values="uC", flags="Lns", paths=frozenset({"C"})),
    "pkexec": Wrapper(long_values=frozenset({"--user"}), long_flags=frozenset({"--disable-internal-agent"})),
    "xargs": Wrapper(
        values="aEdIJLnPRsS",
        flags="0oprtx",
        optional="eil",
        long_values=frozenset(
            {"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}
        ),
        long_flags=frozenset(
            {
                "--null",
                "--open-tty",
                "--interactive",
                "--no-run-if-empty",
                "--verbose",
                "--exit",
                "--show-limits",
                "--eof",
                "--replace",
                "--max-lines",
                "--help",
                "--version",
            }
        ),
        paths=frozenset({"a", "--arg-file"}),
    ),
    "time": Wrapper(
        values="fo",
        flags="apqvV",
        long_values=frozenset({"--format", "--output"}),
        long_flags=frozenset({"--append", "--verbose", "--quiet", "--portability", "--help", "--version"}),
        paths=frozenset({"o", "--output"}),
        assignments=True,  # bash's `time` is a reserved word before a whole simple command
    ),
    "stdbuf": Wrapper(values="ioe", long_values=frozenset({"--input", "--output", "--error"})),
    "busybox": Wrapper(flags=None, long_flags=None),
    "toybox": Wrapper(flags=None, long_flags=None),  # busybox's kin: `toybox nc host port` runs nc
    "chroot": Wrapper(
        long_values=frozenset({"--userspec", "--groups"}),
        long_flags=frozenset({"--skip-chdir", "--help", "--version"}),
        positionals=1,
        positional_paths=True,
    ),
    # -- wrappers added for issue 22 (their options from the man pages of util-linux, strace...)
    "ionice": Wrapper(
        values="cnpPu",
        flags="t",
        long_values=_set("--class", "--classdata", "--pid", "--pgid", "--uid"),
        long_flags=_set("--ignore", "--help", "--version"),
        no_command="pPu",  # ionice -p PID: the words are process ids
    ),
    "chrt": Wrapper(
        values="TPD",
        flags="abdefiorRv",
        long_values=_set("--sched-runtime", "--sched-period", "--sched-deadline"),
        long_flags=_set(
            "--all-tasks",
            "--batch",
            "--deadline",
            "--fifo",
            "--idle",
            "--other",
            "--rr",
            "--reset-on-fork",
            "--verbose",
            "--help",
            "--version",
        ),
        positionals=1,  # the priority
        no_command="pm",  # chrt -p PRIO PID, chrt -m: no command
    ),
    "taskset": Wrapper(
        flags="ac",
        long_flags=_set("--all-tasks", "--cpu-list", "--help", "--version"),
        positionals=1,  # the mask or list
        no_command="p",
    ),
    "flock": Wrapper(
        values="wEc",
        flags="sxunoFe",
        long_values=_set("--timeout", "--wait", "--conflict-exit-code", "--command"),
        long_flags=_set(
            "--shared",
            "--exclusive",
            "--unlock",
            "--nonblock",
            "--nb",
            "--close",
            "--no-fork",
            "--verbose",
            "--help",
            "--version",
        ),
        code=_set("c", "--command"),
        positionals=1,  # the lock file or directory
        positional_paths=True,
    ),
    "unshare": Wrapper(
        values="SGRw",
        flags="muinpUCTfrc",
        long_values=_set(
            "--propagation",
            "--setgroups",
            "--map-user",
            "--map-group",
            "--map-users",
            "--map-groups",
            "--setuid",
            "--setgid",
            "--root",
            "--wd",
            "--monotonic",
            "--boottime",
        ),
        long_flags=_set(
            *_NAMESPACES,
            "--fork",
            "--kill-child",
            "--mount-proc",
            "--map-root-user",
            "--map-current-user",
            "--map-auto",
            "--keep-caps",
            "--help",
            "--version",
        ),
        paths=_set("R", "w", "--root", "--wd"),
        dirs=_set("w", "--wd"),
    ),
    "nsenter": Wrapper(
        values="tSG",
        flags="aFZ",
        optional="muinpUCTrw",
        long_values=_set("--target", "--setuid", "--setgid"),
        long_flags=_set(
            "--all",
            *_NAMESPACES,
            "--root",
            "--wd",
            "--preserve-credentials",
            "--no-fork",
            "--follow-context",
            "--help",
            "--version",
        ),
    ),
    "firejail": Wrapper(flags="", long_flags=None),  # every option is --name or --name=value
    "proxychains": Wrapper(values="f", flags="q", paths=_set("f")),
    "proxychains4": Wrapper(values="f", flags="q", paths=_set("f")),
    "torsocks": Wrapper(
        values="upaP",
        flags="idq6",
        long_values=_set("--user", "--pass", "--address", "--port"),
        long_flags=_set("--isolate", "--debug", "--quiet", "--ipv6", "--help", "--version"),
    ),
    "strace": Wrapper(
        values="abeEIoOpPsSuUX",
        flags="cCdDfFhikKnqrtTvVwxyYz",
        long_values=_set("--output", "--trace", "--signal", "--attach", "--string-limit", "--user", "--env"),
        long_flags=None,
        paths=_set("o", "--output"),
    ),
    "ltrace": Wrapper(
        values="aAeEFlnopsuwxD",
        flags="bcCfhiLrStTV",
        long_values=_set("--output", "--align", "--library"),
        long_flags=_set("--demangle", "--help", "--version"),
        paths=_set("o", "F", "--output"),
    ),
    "npx": Wrapper(
        values="pc",
        flags="yq",
        long_values=_set("--package", "--call"),
        long_flags=_set("--yes", "--no", "--no-install", "--ignore-existing", "--quiet", "--help", "--version"),
        code=_set("c", "--call"),
    ),
    # bun's package runner: `bunx rimraf build` runs rimraf (as `bun x` does).
    "bunx": Wrapper(
        values="p",
        long_values=_set("--package"),
        long_flags=_set("--bun", "--no-install", "--silent", "--verbose", "--help", "--version"),
    ),
    "pnpx": Wrapper(values="p", long_values=_set("--package")),
    "uvx": Wrapper(
        values="p",
        flags="qv",
        long_values=_set("--from", "--with", "--python", "--with-requirements", "--index", "--index-url"),
        long_flags=_set("--isolated", "--quiet", "--verbose", "--offline", "--no-cache", "--refresh", "--help"),
        paths=_set("--with-requirements"),
    ),
    "dbus-run-session": Wrapper(long_values=_set("--config-file", "--dbus-daemon"), paths=_set("--config-file")),
}

_UV_RUN = Wrapper(
    values="p",
    flags="qv",
    long_values=_set(
        "--with",
        "--with-editable",
        "--with-requirements",
        "--python",
        "--package",
        "--env-file",
        "--index",
        "--index-url",
        "--extra",
        "--group",
        "--directory",
        "--project",
    ),
    long_flags=_set(
        "--frozen",
        "--locked",
        "--no-project",
        "--no-sync",
        "--isolated",
        "--script",
        "--module",
        "--all-extras",
        "--no-dev",
        "--active",
        "--quiet",
        "--verbose",
        "--offline",
        "--no-cache",
        "--exact",
        "--help",
    ),
    paths=_set("--with-requirements", "--env-file", "--directory", "--project"),
    dirs=_set("--directory"),
)

# Programs whose `exec` subcommand runs a command in a container or pod (SUBCOMMAND_WRAPPERS);
# their other subcommands name objects (`docker rm c` removes a container, runs no `rm`), so
# docker, podman and kubectl stay in PLAIN_PROGRAMS.
_KUBECTLS = ("kubectl", "oc", "microk8s.kubectl", "k3s")
CONTAINER_EXEC_PROGRAMS = frozenset({"docker", "podman", "nerdctl", "docker-compose", "podman-compose", *_KUBECTLS})
# `docker exec [OPTIONS] CONTAINER CMD...` (podman's and nerdctl's are the same; compose's takes
# a service): the command starts after the container.
_CONTAINER_EXEC = Wrapper(
    values="euw",
    flags="ditT",
    long_values=_set("--env", "--env-file", "--user", "--workdir", "--detach-keys", "--index"),
    long_flags=_set("--detach", "--interactive", "--tty", "--privileged", "--no-TTY", "--help"),
    positionals=1,
)
# `kubectl exec [OPTIONS] POD -- CMD...` (oc's too), with kubectl's global options.
_KUBECTL_EXEC = Wrapper(
    values="cfnsv",
    flags="itq",
    long_values=_set(
        "--container", "--filename", "--namespace", "--pod-running-timeout", "--context", "--kubeconfig",
        "--cluster", "--user", "--server", "--token", "--as", "--as-group", "--request-timeout", "--selector",
    ),
    long_flags=_set("--stdin", "--tty", "--quiet", "--insecure-skip-tls-verify", "--help"),
    positionals=1,
)  # fmt: skip

# `docker run [OPTIONS] IMAGE [CMD...]` (podman's, nerdctl's; compose's `run SERVICE [CMD]`):
# read softly (shell._container_run), an option not listed leaves today's reading. Host paths:
# `-v HOST:DIR`, `--env-file`, `--cidfile`, `--label-file`.
CONTAINER_RUN = frozenset(
    {(name, "run") for name in ("docker", "podman", "nerdctl", "docker-compose", "podman-compose")}
)
CONTAINER_RUN_OPTIONS = Wrapper(
    values="acehlmpuvw",
    flags="diPqtT",
    long_values=_set(
        "--attach", "--add-host", "--annotation", "--blkio-weight", "--cap-add", "--cap-drop", "--cgroup-parent",
        "--cgroupns", "--cidfile", "--cpu-period", "--cpu-quota", "--cpu-shares", "--cpus", "--cpuset-cpus",
        "--cpuset-mems", "--detach-keys", "--device", "--dns", "--dns-option", "--dns-search", "--domainname",
        "--entrypoint", "--env", "--env-file", "--expose", "--gpus", "--group-add", "--health-cmd",
        "--health-interval", "--health-retries", "--health-start-period", "--health-timeout", "--hostname", "--ip",
        "--ip6", "--ipc", "--isolation", "--label", "--label-file", "--link", "--log-driver", "--log-opt",
        "--mac-address", "--memory", "--memory-reservation", "--memory-swap", "--mount", "--name", "--network",
        "--net", "--network-alias", "--pid", "--pids-limit", "--platform", "--publish", "--pull", "--restart",
        "--runtime", "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout", "--storage-opt",
        "--sysctl", "--tmpfs", "--ulimit", "--user", "--userns", "--uts", "--volume", "--volumes-from",
        "--workdir",
    ),
    long_flags=_set(
        "--detach", "--init", "--interactive", "--no-healthcheck", "--privileged", "--publish-all", "--quiet",
        "--read-only", "--rm", "--tty", "--no-deps", "--service-ports", "--remove-orphans", "--build",
    ),
    paths=_set("v", "--volume", "--env-file", "--cidfile", "--label-file"),
)  # fmt: skip

# `docker compose ...` is the plugin spelling of `docker-compose ...` (and podman's).
COMPOSE_PLUGINS = {"docker": "docker-compose", "podman": "podman-compose"}

# Global options of the container and cluster CLIs, before their subcommand (`kubectl -n data
# exec POD -- CMD`, `docker -H ssh://h exec C CMD`): skipped to find an `exec` (SUBCOMMAND_WRAPPERS).
_KUBECTL_GLOBALS = Wrapper(
    values="nsv",
    flags="",
    long_values=_set(
        "--namespace",
        "--context",
        "--kubeconfig",
        "--cluster",
        "--user",
        "--server",
        "--token",
        "--as",
        "--as-group",
        "--as-uid",
        "--request-timeout",
        "--certificate-authority",
        "--client-certificate",
        "--client-key",
        "--tls-server-name",
        "--cache-dir",
        "--username",
        "--password",
        "--profile",
        "--v",
    ),
    long_flags=_set("--insecure-skip-tls-verify", "--match-server-version", "--warnings-as-errors"),
)
_DOCKER_GLOBALS = Wrapper(
    values="cHlfp",  # compose's -f FILE and -p PROJECT too
    flags="D",
    long_values=_set(
        "--context",
        "--host",
        "--log-level",
        "--config",
        "--tlscacert",
        "--tlscert",
        "--tlskey",
        "--connection",
        "--url",
        "--identity",
        "--root",
        "--runroot",
        "--storage-driver",
        "--cgroup-manager",
        "--namespace",
        "--address",
        "--file",
        "--project-name",
        "--project-directory",
        "--profile",
        "--env-file",
    ),
    long_flags=_set("--debug", "--tls", "--tlsverify", "--remote", "--compatibility", "--verbose", "--no-ansi"),
)
SUBCOMMAND_GLOBALS: dict[str, Wrapper] = {
    **dict.fromkeys(_KUBECTLS, _KUBECTL_GLOBALS),
    **dict.fromkeys(("docker", "podman", "nerdctl", "docker-compose", "podman-compose"), _DOCKER_GLOBALS),
}  # fmt: skip

# `PROGRAM SUBCOMMAND ...` where the subcommand runs the rest as a command.
_NPM_EXEC = Wrapper(
    values="c",
    flags="y",
    long_values=_set("--package", "--call"),
    long_flags=_set("--yes", "--no", "--help", "--version"),
    code=_set("c", "--call"),
)
SUBCOMMAND_WRAPPERS: dict[tuple[str, str], Wrapper] = {
    ("uv", "run"): _UV_RUN,
    ("poetry", "run"): Wrapper(),
    ("pipenv", "run"): Wrapper(),
    ("pdm", "run"): Wrapper(),
    ("hatch", "run"): Wrapper(),
    ("pnpm", "exec"): Wrapper(values="C", long_values=_set("--dir"), dirs=_set("C", "--dir")),
    ("pnpm", "dlx"): Wrapper(),
    ("npm", "exec"): _NPM_EXEC,
    # Round nine (set H, runner-alias-subcommands): `npm x` is npm exec's alias.
    ("npm", "x"): _NPM_EXEC,
    ("yarn", "exec"): Wrapper(),
    ("yarn", "dlx"): Wrapper(),
    ("bun", "x"): Wrapper(long_flags=_set("--bun", "--no-install", "--silent", "--verbose")),
    ("pipx", "run"): Wrapper(long_values=_set("--spec", "--python"), long_flags=_set("--no-cache", "--verbose")),
    ("bundle", "exec"): Wrapper(),
    ("npm", "explore"): Wrapper(positionals=1),  # npm explore PKG -- CMD: CMD runs in the package's folder
    ("pnpm", "explore"): Wrapper(positionals=1),
    ("conda", "run"): Wrapper(
        values="np",
        long_values=_set("--name", "--prefix", "--cwd"),
        long_flags=_set("--no-capture-output", "--live-stream"),
        dirs=_set("--cwd"),
    ),
    ("mamba", "run"): Wrapper(values="np", long_values=_set("--name", "--prefix")),
    ("micromamba", "run"): Wrapper(values="np", long_values=_set("--name", "--prefix")),
    # Round six (set E, sqlclients): a command run in a container or pod is a command, read as
    # `ssh host CMD` is (`kubectl exec pod -- psql -c 'DROP ...'`, `docker exec -i c psql`): its
    # program is one of the line's programs, so a red line on SQL clients or deleters meets it.
    # The container or pod is the one positional word; an option not listed is unknown.
    **{(name, "exec"): _CONTAINER_EXEC for name in CONTAINER_EXEC_PROGRAMS if name not in _KUBECTLS},
    **{(name, "exec"): _KUBECTL_EXEC for name in _KUBECTLS},
    ("oc", "rsh"): _KUBECTL_EXEC,
}

# Round fourteen (set L, unknown-runner-shell-strings): the secret managers' runners put secrets in
# the environment of the command they run (`op run -- CMD`, `doppler run --command 'CMD'`,
# `aws-vault exec PROFILE -- CMD`, `direnv exec DIR CMD`): their command is read as any wrapper's
# (its deleters are the red lines'), with each one's options from its own help; an option not
# listed makes the line unknown. What would print the secrets it was given - an environment printer
# (ENVIRONMENT_PRINTERS), a shell or an interpreter with code, a program no table knows - keeps the
# line unknown, as every such line was before (the walk checks the programs the runner runs).
SECRET_RUNNERS: dict[tuple[str, str], Wrapper] = {
    ("op", "run"): Wrapper(
        long_values=_set("--env-file", "--account", "--config", "--session", "--encoding", "--cache"),
        long_flags=_set("--no-masking", "--debug", "--iso-timestamps", "--help"),
        paths=_set("--env-file", "--config"),
    ),
    ("doppler", "run"): Wrapper(
        values="pc",
        flags="",
        long_values=_set(
            "--project", "--config", "--command", "--token", "--scope", "--mount", "--mount-format",
            "--mount-template", "--mount-max-reads", "--fallback", "--name-transformer", "--api-host",
            "--dashboard-host", "--configuration", "--passphrase",
        ),
        long_flags=_set(
            "--fallback-only", "--fallback-readonly", "--no-fallback", "--forward-signals", "--preserve-env",
            "--no-exit-on-write-failure", "--debug", "--json", "--silent", "--no-check-version", "--help",
            "--enable-file-logging", "--no-cache", "--no-read-env", "--watch",
        ),
        paths=_set("--mount", "--fallback", "--configuration"),
        code=_set("--command"),  # `doppler -c` is the config; --command runs `sh -c` (doppler run --help)
    ),
    ("aws-vault", "exec"): Wrapper(
        values="dt",
        flags="njs",
        long_values=_set("--duration", "--region", "--mfa-token", "--prompt", "--backend", "--keychain"),
        long_flags=_set(
            "--no-session", "--json", "--server", "--ec2-server", "--ecs-server", "--lazy", "--stdout", "--help"
        ),
        positionals=1,  # the profile
    ),
    ("direnv", "exec"): Wrapper(positionals=1, positional_paths=True),  # the folder whose .envrc is loaded
}  # fmt: skip
SUBCOMMAND_WRAPPERS.update(SECRET_RUNNERS)
# Programs that print the environment they are given (or a variable of it) when run bare.
ENVIRONMENT_PRINTERS = frozenset(
    {"printenv", "env", "set", "export", "declare", "typeset", "compgen", "echo", "printf", "cat", "tee", "xargs"}
    | {"strings", "od", "xxd", "hexdump", "base64", "curl", "wget", "nc", "ncat", "socat", "ps", "jq", "sed", "awk"}
)

# Options whose value is a password or token (each program's man page), so the secret scan sees
# it as `password=VALUE` whatever it looks like (`sshpass -p PASS`, `redis-cli -a PASS`, `ldapsearch
# -w PASS`, `mysql -pPASS`): "value" is the whole value, "user" the part after the user name's
# `:`, `%` or `,` (`curl -u user:PASS`, `smbclient -U user%PASS`, `lftp -u user,PASS`), "pass:"
# openssl's `pass:PASS` form.
# A short option listed as "attached" takes its value only attached (`mysql -p` alone prompts).
_MYSQL_CREDENTIALS = {"p": "attached", "--password": "attached"}  # `--password` alone prompts
_LDAP_CREDENTIALS = {"w": "value", "--password": "value"}
_OPENSSL_CREDENTIALS = {"-passin": "pass:", "-passout": "pass:", "-pass": "pass:", "-k": "value"}
CREDENTIAL_OPTIONS: dict[str, dict[str, str]] = {
    "sshpass": {"p": "value"},
    "redis-cli": {"a": "value", "--pass": "value"},
    "smbclient": {"U": "user", "--user": "user", "--password": "value"},
    "smbget": {"U": "user", "--user": "user"},
    "rpcclient": {"U": "user", "--user": "user"},
    "net": {"U": "user", "--user": "user"},
    **{name: _LDAP_CREDENTIALS for name in ("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami",
                                            "ldappasswd", "ldapcompare", "ldapmodrdn", "ldapexop")},
    **{name: _MYSQL_CREDENTIALS for name in ("mysql", "mariadb", "mysqldump", "mysqladmin", "mysqlimport",
                                             "mysqlshow", "mysqlcheck", "mariadb-dump")},
    "mongo": {"p": "value", "--password": "value"},
    "mongosh": {"p": "value", "--password": "value"},
    "mongodump": {"p": "value", "--password": "value"},
    "sqlcmd": {"P": "value", "--password": "value"},
    "curl": {"u": "user", "U": "user", "--user": "user", "--proxy-user": "user", "--pass": "value",
             "--proxy-pass": "value", "--tlspassword": "value", "--proxy-tlspassword": "value",
             "--oauth2-bearer": "value"},
    "wget": {"--password": "value", "--http-password": "value", "--ftp-password": "value",
             "--proxy-password": "value"},
    "lftp": {"u": "user", "--user": "user"},
    "docker": {"p": "value", "--password": "value"},
    "podman": {"p": "value", "--password": "value"},
    "helm": {"--password": "value"},
    "openssl": _OPENSSL_CREDENTIALS,
    "snmpwalk": {"A": "value", "X": "value", "c": "value"},
    "snmpget": {"A": "value", "X": "value", "c": "value"},
    "ipmitool": {"P": "value"},
    # PuTTY's tools take `-pw PASS` (one dash, two letters); MQTT, Cassandra, InfluxDB, RabbitMQ
    # and the SMB and RDP clients their own password options.
    **{name: {"-pw": "value"} for name in ("plink", "pscp", "psftp")},
    **{name: {"P": "value", "--pw": "value"} for name in ("mosquitto_pub", "mosquitto_sub", "mosquitto_rr")},
    "cqlsh": {"p": "value", "--password": "value"},
    "influx": {"-password": "value", "--password": "value"},
    "rabbitmqadmin": {"p": "value", "--password": "value"},
    "smbmap": {"p": "value", "--password": "value"},
    "rdesktop": {"p": "value"},
    "ncftp": {"p": "value"},
    "ncftpput": {"p": "value"},
    "ncftpget": {"p": "value"},
}  # fmt: skip
# Environment variables holding a password a program sends (libpq, MySQL, redis-cli, sshpass,
# Samba, the Docker and registry clients): their value is a `password=VALUE` word.
CREDENTIAL_VARIABLES = frozenset(
    {"PGPASSWORD", "MYSQL_PWD", "REDISCLI_AUTH", "SSHPASS", "PASSWD", "SMBPASS", "LDAPPASSWORD",
     "MONGO_PASSWORD", "SQLCMDPASSWORD", "IPMI_PASSWORD", "RSYNC_PASSWORD", "ISQL_PASSWORD"}
)  # fmt: skip

# Decoders whose literal input (a here-string, a heredoc, `echo TEXT |`) the shell layer decodes
# so the secret scan sees what goes on down the pipe (`echo 41:4b:.. | xxd -r -p | curl -d @-`):
# program -> (encoding, the options that make it decode; empty: it always decodes).
DECODERS: dict[str, tuple[str, frozenset[str]]] = {
    "xxd": ("hex", _set("-r", "-revert", "-rp", "-pr", "-r-p")),
    "uudecode": ("uu", frozenset()),
    "base64": ("base64", _set("-d", "--decode", "-D", "-di", "-id")),
    "base32": ("base32", _set("-d", "--decode", "-di", "-id")),
    "basenc": ("basenc", _set("-d", "--decode")),
    "openssl": ("base64", _set("-d")),  # `openssl base64 -d`, `openssl enc -d -a`
}

# Wrappers that join the words of their command with blanks and hand them to `sh -c`, as eval
# does (npm-explore(1): "the command is run in a subshell"; watch without -x is read in shell.py).
JOINS_WORDS = frozenset({"npm explore", "pnpm explore"})

# Long options whose value, by their name, is a command a program runs (`rg --pre CMD`,
# `sort --compress-program=CMD`, `fzf --preview CMD`, `--exec=CMD`, `--ssh-command CMD`): for a
# program whose table row does not list the option, or that has no row, the value is read as a
# command (a name the shell cannot parse makes the command unknown). Options of a row that take
# no such value are known there first (`git --exec-path=DIR`).
# Long options named for code a program evaluates (`--eval`, `--evaluate`, `--eval-string`,
# `-eval`): for a program no table knows, their value is code for an interpreter (`$_code`), so
# the next interpreter's one-liner is not read as a plain word (round five, set D).
CODE_OPTION = re.compile(r"--?(?:[a-z0-9]+-)*(?:eval|evaluate)(?:-[a-z]+)?")
RUNNER_OPTION = re.compile(
    r"--(?:[a-z0-9]+-)*(?:pre|exec|execute|command|cmd|program|prog|pager|editor|shell|hook|preview|"
    r"askpass|rsh|run-command|filter-command)"
)

# git's subcommands whose -m is a message (elsewhere -m is a flag: `git show -m HEAD:.env`).
GIT_MESSAGE_SUBCOMMANDS = frozenset({"commit", "tag", "merge", "stash", "notes", "revert", "cherry-pick", "am"})

# Programs known to run their arguments as a command, with options not described here: any
# non-option word makes the command unknown (it may be the program).
RUNS_COMMANDS = frozenset(
    {
        "parallel", "systemd-run", "setpriv", "prlimit", "cpulimit", "numactl", "valgrind", "fakeroot", "faketime",
        "proot", "bwrap", "xvfb-run", "catchsegv", "cgexec", "trickle", "daemonize", "start-stop-daemon", "sg",
        "script", "expect", "gdb", "lldb", "perf", "caffeinate", "tsp", "at", "batch", "run-parts", "dotenv",
        "with-contenv", "s6-setuidgid", "chpst", "setuidgid", "nocache", "eatmydata", "unbuffer", "rlwrap",
        "ssh-agent", "dbus-launch", "wsl",
    }
)  # fmt: skip
# Programs that, given no command, run each line of their standard input as a command line
# (GNU parallel, its `sem`): a literal input is parsed, any other is unknown (round six, set E).
STDIN_COMMANDS = frozenset({"parallel"})
# The same for one subcommand of a program (`op run -- cmd`; `op item get` is fine).
RUNS_SUBCOMMANDS = frozenset(
    {
        ("sops", "exec-env"),
        ("sops", "exec-file"), ("nix", "shell"), ("nix-shell", "--run"), ("kubectl", "debug"),
    }
)  # fmt: skip


# Long flags that make a command delete (round five, set D, cc-delete-options), by program
# (after canonical names: gtar is tar). getopt_long and git's parse-options take any unambiguous
# prefix (`tar --remove-f`, `git clean --forc`): a word that is a prefix of one of these is also
# spelled in full in Command.lines, so a pack's table of deleting options meets it. A prefix of
# several is spelled as each (the program would refuse an ambiguous one: no harm in the reading).
LONG_FLAGS: dict[str, frozenset[str]] = {
    "tar": _set("--remove-files", "--recursive-unlink", "--unlink-first", "--overwrite", "--delete"),
    "bsdtar": _set("--remove-files", "--unlink-first", "--unlink"),
    "rsync": _set(
        "--delete", "--delete-before", "--delete-during", "--delete-delay", "--delete-after",
        "--delete-excluded", "--delete-missing-args", "--remove-source-files", "--remove-sent-files",
    ),
    # Round six (set E, git-tree-deletes): the options that make checkout, restore and read-tree
    # overwrite or remove the working tree, so `git restore --sou=X --work .` reads in full.
    "git": _set(
        "--force", "--delete", "--prune", "--mirror", "--hard", "--cached", "--no-overlay", "--worktree",
        "--source", "--reset", "--staged", "--include-untracked",
        # Round nine (set H, git-output-abbrev): the options that name a file git writes.
        "--output", "--output-directory", "--separate-git-dir", "--work-tree", "--git-dir", "--prefix",
        "--file", "--export-marks", "--object-dir", "--object-directory", "--template",
    ),
    "zip": _set("--move"),
    "rclone": _set("--delete-before", "--delete-during", "--delete-after", "--delete-excluded"),
}  # fmt: skip

# Programs whose subcommand picks whether they delete, push or reach the network (round five,
# set D, cc-var-subcmd), with how many leading words are subcommands (`aws s3 rm`, `docker volume
# rm`): a subcommand word the engine cannot know (`docker ${a}sh` with `a` unknown) makes the
# command unknown, as git's does (a line variable set to literal text is filled in first).
SUBCOMMAND_LEVELS: dict[str, int] = {
    **dict.fromkeys(("docker", "podman", "nerdctl", "kubectl", "oc", "helm", "zfs", "zpool", "diskutil"), 2),
    **dict.fromkeys(("lvm", "btrfs", "rclone", "s3cmd", "azcopy", "gsutil", "tmutil", "mdadm", "npm", "pnpm"), 2),
    **dict.fromkeys(("yarn", "bun", "cargo", "gh", "hub", "glab", "jj", "hg", "sl", "fsutil", "vssadmin"), 2),
    **dict.fromkeys(("aws", "gcloud", "doctl", "flyctl", "heroku", "vercel", "netlify", "wrangler"), 2),
    "az": 3,  # az storage blob delete-batch
    **dict.fromkeys(("docker-compose", "podman-compose"), 1),  # also `docker compose` (COMPOSE_PLUGINS)
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Invocation:
    """Where a program says what it will do, read into `PROGRAM SUBCOMMAND...` strings (Command.invocations).

    Round nine (set H): programs on a pack's list of local work were called with a subcommand,
    module or command option no table placed (`git daemon`, `npm create x`, `python -m
    http.server`, `gpg --send-keys`, `go get`, `cmake -E rm`). The walk reports each invocation
    so a pack can allow-list those its lists read and ask the rest; a word that is not literal
    gives `?` in its place (never placed).
    """

    kind: str  # "subcommand", "module" (python -m), "options" (gpg's commands), "verb" (cmake -E VERB)
    values: frozenset[str] = frozenset()  # options (`-C`, `--git-dir`) that take the next word as their value
    nested: frozenset[str] = frozenset()  # subcommands with a subcommand of their own (`go mod tidy`)
    operands: frozenset[str] = frozenset()  # subcommands whose operands say what is fetched or run (`npm init X`)
    verbs: frozenset[str] = frozenset()  # "verb": options followed by the verb (`cmake -E`)
    marks: frozenset[str] = frozenset()  # "verb": options reported alone (`cmake -P`, `php -S`)


_GIT_INVOCATION = Invocation(
    "subcommand",
    values=_set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--exec-path"),
)
_NODE_PM_INVOCATION = Invocation(
    "subcommand",
    values=_set(
        "--prefix", "-C", "--cwd", "--dir", "-w", "--workspace", "--filter", "-F", "--registry", "--userconfig"
    ),
    operands=_set(
        "init",
        "create",
        "install",
        "i",
        "add",
        "in",
        "ins",
        "inst",
        "insta",
        "instal",
        "isnt",
        "isntall",
        "install-test",
        "it",
        "install-ci-test",
        "cit",
        "update",
        "up",
        "upgrade",
    ),
)
_PIP_INVOCATION = Invocation(
    "subcommand", values=_set("--python", "-p", "--directory", "--project", "--index-url", "-i", "--log", "--cache-dir")
)
INVOCATIONS: dict[str, Invocation] = {
    "git": _GIT_INVOCATION,
    **dict.fromkeys(("npm", "yarn", "yarnpkg", "pnpm", "bun"), _NODE_PM_INVOCATION),
    **dict.fromkeys(("pip", "pip3", "uv", "poetry", "pipenv", "pdm", "hatch"), _PIP_INVOCATION),
    "cargo": Invocation("subcommand", values=_set("--config", "-Z", "--color", "-C")),
    "go": Invocation("subcommand", values=_set("-C"), nested=_set("mod", "tool", "work"),
                     operands=_set("run", "install", "get")),
    "dotnet": Invocation("subcommand", nested=_set("tool", "nuget", "workload", "new"),
                         operands=_set("tool run", "dnx")),
    "composer": Invocation("subcommand", values=_set("-d", "--working-dir"),
                           operands=_set("exec", "global", "create-project")),
    "openssl": Invocation("subcommand"),
    "swift": Invocation("subcommand"),
    "python": Invocation("module", values=_set("-W", "-X", "-Q")),
    "gpg": Invocation(
        "options",
        values=_set("-o", "--output", "-r", "--recipient", "-u", "--local-user", "--homedir", "--keyserver",
                    "--default-key", "--passphrase-fd", "--status-fd", "--logger-fd", "--trust-model",
                    "--cipher-algo", "--digest-algo", "--compress-algo", "-z", "--pinentry-mode", "--keyring",
                    "--secret-keyring", "--trustdb-name", "--default-recipient", "--hidden-recipient", "-R",
                    "--encrypt-to", "--set-filename", "--comment", "--keyserver-options", "--auto-key-locate",
                    "--command-fd", "--attribute-fd", "--passphrase-file", "--passphrase", "--quick-gen-key"),
    ),
    "cmake": Invocation("verb", verbs=_set("-E"), marks=_set("-P")),
    "ctest": Invocation("verb", marks=_set("-S", "--script", "-SP", "-SR")),
    "php": Invocation("verb", marks=_set("-S")),
}  # fmt: skip
INVOCATIONS["gpg2"] = INVOCATIONS["gpg"]
# `cmake -E` verbs that delete files (read as rm by the walk), and those that are another
# program's work (read as that program's argv).
CMAKE_DELETERS = frozenset({"rm", "remove", "remove_directory"})
CMAKE_PROGRAM_VERBS: dict[str, tuple[str, ...]] = {
    "copy": ("cp",), "copy_if_different": ("cp",), "copy_if_newer": ("cp",),
    "copy_directory": ("cp", "-r"), "copy_directory_if_different": ("cp", "-r"),
    "rename": ("mv",), "make_directory": ("mkdir", "-p"), "create_symlink": ("ln", "-s"),
    "create_hardlink": ("ln",), "touch": ("touch",), "touch_nocreate": ("touch", "-c"), "tar": ("tar",),
    "cat": ("cat",), "echo": ("echo",), "echo_append": ("echo", "-n"), "md5sum": ("md5sum",),
    "sha1sum": ("sha1sum",), "sha256sum": ("sha256sum",), "sha512sum": ("sha512sum",), "sleep": ("sleep",),
}  # fmt: skip


# Round fourteen (set L, unlisted-local-deleters, unlisted-cloud-store-deleters): a program no
# table knows whose subcommand is named like a deleter (`hg remove`, `svn delete`, `oci os object
# bulk-delete`, `swift delete`, `wrangler r2 bucket delete`, `duplicity remove-all-but-n-full`)
# deletes its operands, as far as the engine can tell: the walk reads it as rm (cmake -E rm's
# reading). A subcommand is one of the first DELETING_VERB_WORDS words that are not options; it
# deletes when one of its pieces between `-`, `_`, `:` or `.` is a deleting verb (`bulk-delete`,
# `delete-batch`, `apps:destroy`). `ls`, `list`, `status`, `info` are no such verbs. An option
# that keeps the files (`svn delete --keep-local`, `git rm --cached`) or only shows what would go
# (`--dry-run`) leaves the reading alone.
DELETING_VERBS = frozenset(
    {"rm", "rmr", "rmdir", "rmdirs", "rb", "del", "delete", "deletes", "remove", "purge", "prune", "erase", "trash"}
    | {"unlink", "wipe", "shred", "destroy", "expunge", "obliterate", "nuke", "deletefile", "deleteall"}
)
# The long ones also glued to another word of a subcommand (`qshell batchdelete`, `removeall`).
GLUED_DELETING_VERBS = ("delete", "remove", "purge", "prune", "erase", "destroy", "expunge", "trash", "shred")
DELETING_VERB_WORDS = 4
KEEPING_OPTIONS = frozenset(
    {"--cached", "--keep-local", "--keep", "--keep-files", "--after", "--dry-run", "--dryrun", "--what-if"}
    | {"--whatif", "--simulate", "--preview", "--help", "-h"}
)
# Filesystem shells whose deleting commands are options (`hdfs dfs -rm -r -skipTrash /x`,
# `hadoop fs -rmr`): (program, subcommand) -> those options (Hadoop's FileSystem shell guide).
OPTION_DELETERS: dict[tuple[str, str], frozenset[str]] = {
    **dict.fromkeys(
        (("hadoop", "fs"), ("hadoop", "dfs"), ("hdfs", "dfs")),
        _set("-rm", "-rmr", "-rmdir", "-expunge", "-truncate", "-deletesnapshot", "-rmdirs"),
    ),
}  # fmt: skip

# Deferred commands (round five, set D, cc-deferred-delete). Programs that take commands on
# standard input to run later (cron's table, at and batch jobs: crontab's time fields are taken
# off); a literal text the line writes to a file is read as commands when the file's name is a
# script's, a Makefile's or an rc file's (SCRIPT_FILE; a name with no extension is often data:
# `echo x > /etc/hosts`), or when the line also runs one of SCRIPT_RUNNERS or the file itself;
# and package-manager commands that set a script a later `npm run` runs (`npm pkg set
# scripts.NAME=CMD`, the older `npm set-script NAME CMD`).
SCHEDULERS = frozenset({"crontab", "at", "batch"})
SCRIPT_FILE = re.compile(
    r"(?i)^(?:.*\.(?:sh|bash|zsh|ksh|dash|command|mk|make|cron|crontab)|(?:gnu)?makefile|crontab"
    r"|\.?(?:bash|zsh|ksh|mksh)rc|\.?(?:bash_|z)?(?:profile|login|logout)|\.zshenv|\.envrc)$"
)
SCRIPT_RUNNERS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "source", ".", "make", "gmake", "bmake", "crontab"}
    | {"at", "batch", "run-parts", "chmod", "install", "systemctl", "launchctl"}
)
# Code written to a file of an interpreter's extension on a line that runs an interpreter
# (`echo 'import shutil...' > t.py && python3 t.py`) is `$_code`; tee writes its stdin to its files.
CODE_FILE = re.compile(r"(?i)\.(?:py|pyw|js|mjs|cjs|ts|mts|rb|pl|pm|php|lua|r|jl|exs?|clj|cljs|groovy|tcl|coffee)$")
STDIN_WRITERS = frozenset({"tee"})
SCRIPT_SETTER_PROGRAMS = frozenset({"npm", "pnpm", "bun"})
SCRIPT_SETTERS: dict[tuple[str, ...], str] = {("pkg", "set"): "pairs", ("set-script",): "name"}

# Subcommands whose operands are code for the program (`deno eval CODE`, as `deno --eval CODE`).
CODE_SUBCOMMANDS = frozenset({("deno", "eval"), ("crystal", "eval")})


@dataclass(frozen=True, slots=True)
class Grammar:
    """How a program that runs no command reads its options and operands (see the module docstring)."""

    values: frozenset[str] = frozenset()  # options with a value that is not a path (`-e PAT`, `-H HDR`)
    paths: frozenset[str] = frozenset()  # options whose value is a path (`-o FILE`)
    data: frozenset[str] = frozenset()  # options whose value names a file after `@` or `<` (`-d @FILE`)
    urls: frozenset[str] = frozenset()  # options whose value is a URL
    dirs: frozenset[str] = frozenset()  # options whose value is the directory later operands are in
    globs: frozenset[str] = frozenset()  # options whose value is a glob of the files read (`grep --include=GLOB`)
    code: frozenset[str] = frozenset()  # options whose value is code for the program (`python -c`)
    runs: frozenset[str] = frozenset()  # options whose value is shell code (`rsync -e CMD`, `nc -c CMD`)
    optional: frozenset[str] = frozenset()  # short options whose value, if any, is attached (`sed -i.bak`)
    pairs: frozenset[str] = frozenset()  # options followed by a name, then their value (`jq --arg NAME VALUE`)
    first_is_pattern: bool = False  # the first operand is a pattern or script, unless `scripts` gave one
    scripts: frozenset[str] = frozenset()  # options that give the pattern or script instead (`-e`, `-f`)
    url_operands: bool = False  # operands are URLs (a bare host gets http://)
    remote_operands: bool = False  # `[user@]host:path` operands are remote (scp, rsync)
    revisions: bool = False  # `REV:PATH` operands name PATH (git)
    interpreter: bool = False  # without a script operand it reads code from standard input
    plus_code: bool = False  # an operand `+CMD` is code for the program (vim's +cmd)
    plus_shell: bool = False  # an operand `+CMD` is the program's own command, whose `!CMD` runs a shell (less)


# vi and its kin: -c CMD, --cmd CMD, -S FILE and +CMD run Ex commands (`:!rm x` runs a shell).
_VIM = Grammar(values=_set("T", "u", "U", "i", "w", "W", "s"), code=_set("c", "--cmd", "S"), plus_code=True)

# Options shared by the grep family.
_GREP = Grammar(
    values=_set(
        "e",
        "m",
        "A",
        "B",
        "C",
        "d",
        "D",
        "--regexp",
        "--max-count",
        "--after-context",
        "--before-context",
        "--context",
        "--directories",
        "--devices",
        "--exclude",
        "--exclude-dir",
        "--label",
        "--color",
        "--colour",
        "--binary-files",
        "--group-separator",
    ),
    paths=_set("f", "--file", "--exclude-from"),
    globs=_set("--include"),
    first_is_pattern=True,
    scripts=_set("e", "f", "--regexp", "--file"),
)

# fd runs a command per file found: `fd -e tmp -x rm` deletes (the words after -x are its command).
_FD = Grammar(
    values=_set("e", "t", "E", "d", "j", "--extension", "--type", "--exclude", "--max-depth", "--threads"),
    runs=_set("x", "X", "--exec", "--exec-batch"),
    first_is_pattern=True,
)

# curl's options that take a value, from `curl --help all` (7.88) and the curl 8 manual
# (--ssl-sessions, --knownhosts, --ech, --ip-tos...): every one is listed, since a value option
# missing here leaves its value to be read as a URL, and a flag listed here (as
# --compressed-ssh was) hides the option after it (`--compressed-ssh -d @.env`).
_CURL_VALUES = _set(
    "X", "A", "e", "u", "m", "r", "U", "Y", "y", "C", "P", "Q", "t",
    "--request", "--user-agent", "--referer", "--user", "--max-time", "--connect-timeout", "--range",
    "--proxy-user", "--retry", "--retry-delay", "--retry-max-time", "--limit-rate", "--max-filesize",
    "--resolve", "--connect-to", "--oauth2-bearer", "--aws-sigv4", "--interface", "--dns-servers",
    "--speed-limit", "--speed-time", "--time-cond", "--continue-at", "--json-kind", "--max-redirs",
    "--request-target", "--cert-type", "--ciphers", "--create-file-mode", "--curves", "--delegation",
    "--dns-interface", "--dns-ipv4-addr", "--dns-ipv6-addr", "--engine", "--expect100-timeout",
    "--ftp-account", "--ftp-alternative-to-user", "--ftp-method", "--ftp-port", "--ftp-ssl-ccc-mode",
    "--happy-eyeballs-timeout-ms", "--hostpubmd5", "--hostpubsha256", "--keepalive-time", "--key-type",
    "--krb", "--local-port", "--login-options", "--mail-auth", "--mail-from", "--mail-rcpt", "--noproxy",
    "--parallel-max", "--pass", "--proto", "--proto-default", "--proto-redir", "--proxy-cert-type",
    "--proxy-ciphers", "--proxy-key-type", "--proxy-pass", "--proxy-pinnedpubkey", "--proxy-service-name",
    "--proxy-tls13-ciphers", "--proxy-tlsauthtype", "--proxy-tlspassword", "--proxy-tlsuser", "--quote",
    "--rate", "--sasl-authzid", "--service-name", "--socks5-gssapi-service", "--telnet-option",
    "--tftp-blksize", "--tls-max", "--tls13-ciphers", "--tlsauthtype", "--tlspassword", "--tlsuser",
    "--ip-tos", "--vlan-priority", "--keepalive-cnt", "--ech", "--upload-flags", "--trace-config",
    "--haproxy-clientip", "--sigalgs", "--parallel-max-host",
)  # fmt: skip
_CURL_PATHS = _set(
    "z", "o", "T", "K", "c", "D", "E",
    "--output", "--upload-file", "--config", "--cookie-jar", "--dump-header", "--cert", "--key",
    "--cacert", "--capath", "--trace", "--trace-ascii", "--netrc-file", "--output-dir", "--stderr",
    "--etag-save", "--etag-compare", "--hsts", "--alt-svc", "--unix-socket", "--abstract-unix-socket",
    "--proxy-cacert", "--proxy-cert", "--proxy-key", "--crlfile", "--pinnedpubkey", "--egd-file",
    "--libcurl", "--random-file", "--proxy-crlfile", "--proxy-capath", "--pubkey", "--ssl-sessions",
    "--knownhosts",
)  # fmt: skip
_CURL_DATA = _set(
    "H", "w", "d", "F", "b",
    "--header", "--proxy-header", "--write-out", "--variable", "--data", "--data-ascii", "--data-binary",
    "--data-raw", "--data-urlencode", "--form", "--form-string", "--json", "--cookie", "--url-query",
)  # fmt: skip
_CURL_URLS = _set(
    "x", "--url", "--proxy", "--preproxy", "--doh-url", "--socks4", "--socks4a", "--socks5",
    "--socks5-hostname",
)  # fmt: skip

GRAMMARS: dict[str, Grammar] = {
    "fd": _FD,
    "fdfind": _FD,
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": Grammar(
        values=_set(
            "e",
            "t",
            "T",
            "m",
            "A",
            "B",
            "C",
            "j",
            "r",
            "M",
            "E",
            "--regexp",
            "--type",
            "--type-not",
            "--max-count",
            "--after-context",
            "--before-context",
            "--context",
            "--threads",
            "--replace",
            "--max-columns",
            "--max-depth",
            "--encoding",
            "--color",
            "--colors",
            "--type-add",
            "--sort",
            "--sortr",
            "--max-filesize",
            "--path-separator",
            "--context-separator",
        ),
        paths=_set("f", "--file", "--ignore-file"),
        globs=_set("g", "--glob", "--iglob", "--pre-glob"),
        runs=_set("--pre"),  # ripgrep runs `--pre CMD FILE` for every file it searches
        first_is_pattern=True,
        scripts=_set("e", "f", "--regexp", "--file"),
    ),
    "sed": Grammar(
        values=_set("e", "l", "--expression", "--line-length"),
        paths=_set("f", "--file"),
        optional=_set("i"),
        first_is_pattern=True,
        scripts=_set("e", "f", "--expression", "--file"),
    ),
    "awk": Grammar(
        values=_set("F", "v", "--field-separator", "--assign"),
        paths=_set("f", "E", "--file", "--exec", "i", "--include", "l", "--load"),
        first_is_pattern=True,
        scripts=_set("f", "E", "--file", "--exec"),
    ),
    "jq": Grammar(
        values=_set("--indent", "--arg", "--argjson"),
        paths=_set("f", "L", "--from-file", "--slurpfile", "--rawfile"),
        pairs=_set("--arg", "--argjson", "--slurpfile", "--rawfile"),
        first_is_pattern=True,
        scripts=_set("f", "--from-file"),
    ),
    "curl": Grammar(values=_CURL_VALUES, paths=_CURL_PATHS, data=_CURL_DATA, urls=_CURL_URLS, url_operands=True),
    "wget": Grammar(
        values=_set(
            "t",
            "T",
            "w",
            "U",
            "l",
            "A",
            "R",
            "D",
            "Q",
            "--tries",
            "--timeout",
            "--wait",
            "--user-agent",
            "--level",
            "--accept",
            "--reject",
            "--domains",
            "--quota",
            "--header",
            "--user",
            "--password",
            "--http-user",
            "--http-password",
            "--method",
            "--post-data",
            "--body-data",
        ),
        paths=_set(
            "e",  # a wgetrc command: output_document=FILE and the like
            "--execute",
            "O",
            "o",
            "a",
            "i",
            "P",
            "--output-document",
            "--output-file",
            "--append-output",
            "--input-file",
            "--directory-prefix",
            "--post-file",
            "--body-file",
            "--load-cookies",
            "--save-cookies",
            "--certificate",
            "--private-key",
            "--ca-certificate",
            "--ca-directory",
            "--config",
        ),
        url_operands=True,
    ),
    "git": Grammar(
        values=_set(
            "m",
            "--message",
            "--author",
            "--date",
            "--format",
            "--pretty",
            "--grep",
            "--since",
            "--until",
            "--depth",
            "--branch",
            "--origin",
            "--namespace",
            "--exec-path",
            "--config-env",
            "--format-patch",
            "--abbrev",
            "--jobs",
            "--sort",
            "--color",
            "--decorate",
            "--committer",
        ),
        runs=_set("--upload-pack", "--receive-pack", "--exec"),
        paths=_set("F", "--file", "--git-dir", "--work-tree", "--output", "--template", "--separate-git-dir"),
        revisions=True,
    ),
    "tar": Grammar(
        values=_set("b", "H", "--format", "--exclude", "--transform", "--xform", "--checkpoint-action"),
        paths=_set("f", "--file", "T", "--files-from", "X", "--exclude-from"),
        dirs=_set("C", "--directory"),
        # Commands tar runs (GTFOBins: --checkpoint-action=exec=CMD is read in shell.py).
        runs=_set(
            "I",
            "F",
            "--use-compress-program",
            "--to-command",
            "--rsh-command",
            "--info-script",
            "--new-volume-script",
        ),
    ),
    "make": Grammar(
        values=_set("j", "l", "--jobs", "--load-average"),
        paths=_set("f", "--file", "--makefile", "I", "--include-dir", "o", "W"),
        dirs=_set("C", "--directory"),
        code=_set("--eval"),  # a makefile line: $(shell ...) and recipes run commands
    ),
    "scp": Grammar(
        values=_set("c", "J", "l", "o", "P", "D", "X"), paths=_set("F", "i"), runs=_set("S"), remote_operands=True
    ),
    "rsync": Grammar(
        values=_set(
            "B",
            "f",
            "--filter",
            "--exclude",
            "--include",
            "--chmod",
            "--chown",
            "--usermap",
            "--groupmap",
            "--bwlimit",
            "--timeout",
            "--contimeout",
            "--port",
            "--max-size",
            "--min-size",
            "--compare-dest",
            "--suffix",
            "--info",
            "--debug",
            "--out-format",
            "--iconv",
            "--protocol",
            "--sockopts",
        ),
        paths=_set(
            "T",
            "--temp-dir",
            "--files-from",
            "--exclude-from",
            "--include-from",
            "--password-file",
            "--log-file",
            "--backup-dir",
            "--partial-dir",
            "--link-dest",
            "--copy-dest",
            "--write-batch",
            "--read-batch",
        ),
        runs=_set("e", "--rsh", "--rsync-path"),
        remote_operands=True,
    ),
    # sort runs its --compress-program on temporary files (`sort --compress-program=CMD -S 1K`).
    # less: `+CMD` (and `++CMD`) runs less commands at start, and less's `!CMD` runs CMD in a
    # shell (`less '+!rm -rf x' README`); -o/-O/-k/-T name files.
    "less": Grammar(
        values=_set("b", "h", "j", "p", "P", "t", "x", "y", "z", "--pattern", "--prompt", "--tag", "--tabs"),
        paths=_set("o", "O", "k", "T", "--log-file", "--LOG-FILE", "--lesskey-file", "--tag-file"),
        plus_shell=True,
    ),
    "sort": Grammar(
        values=_set("k", "t", "S", "--key", "--field-separator", "--buffer-size", "--parallel", "--batch-size"),
        paths=_set("o", "T", "--output", "--temporary-directory", "--files0-from", "--random-source"),
        runs=_set("--compress-program"),
    ),
    "python": Grammar(values=_set("m", "W", "X", "Q"), code=_set("c"), scripts=_set("m"), interpreter=True),
    # Round nine (set H, toolchain-exec-options): go build/test/run -exec CMD and -toolexec CMD run
    # CMD around each binary or tool (one dash, the value attached by `=` or the next word).
    "go": Grammar(
        values=_set(
            "p",
            "tags",
            "ldflags",
            "gcflags",
            "asmflags",
            "run",
            "bench",
            "count",
            "timeout",
            "mod",
            "cpu",
            "parallel",
            "buildmode",
            "compiler",
            "covermode",
            "coverpkg",
            "skip",
            "benchtime",
            "shuffle",
        ),
        paths=_set("o", "modfile", "coverprofile", "pkgdir", "overlay", "pgo", "cpuprofile", "memprofile"),
        dirs=_set("C"),
        runs=_set("exec", "toolexec"),
    ),
    # Round nine (set H, benign-cmake): cmake's configure and build options, so `-S .` is a
    # folder, not the `.` builtin read from an unknown program's words (-E verbs: shell.py).
    "cmake": Grammar(
        values=_set(
            "D",
            "U",
            "G",
            "A",
            "T",
            "j",
            "t",
            "--target",
            "--config",
            "--parallel",
            "--preset",
            "--log-level",
            "--graphviz",
            "--system-information",
            "-W",
            "--component",
            "--prefix",
        ),
        paths=_set("S", "B", "C", "P", "--build", "--install", "--toolchain", "--install-prefix"),
    ),
    "perl": Grammar(
        values=_set("M", "m", "C"),
        paths=_set("I"),
        optional=_set("i", "l", "0", "x", "d", "D", "V"),
        code=_set("e", "E"),
        interpreter=True,
    ),
    "ruby": Grammar(
        values=_set("E", "K"),
        paths=_set("r", "I"),
        dirs=_set("C"),
        optional=_set("i", "x", "0", "W", "T"),
        code=_set("e"),
        interpreter=True,
    ),
    "node": Grammar(
        values=_set("--input-type", "--conditions", "C"),
        paths=_set("r", "--require", "--import", "--loader"),  # modules loaded: files
        code=_set("e", "p", "--eval", "--print"),
        interpreter=True,
    ),
    "bun": Grammar(code=_set("e", "p", "--eval", "--print")),
    "deno": Grammar(code=_set("--eval")),
    "php": Grammar(values=_set("d", "z"), paths=_set("f", "c", "t"), code=_set("r", "B", "R", "E"), interpreter=True),
    "lua": Grammar(paths=_set("l"), code=_set("e"), interpreter=True),
    "rscript": Grammar(code=_set("e"), interpreter=True),  # `Rscript -` and a piped script: code
    # REPLs that read code from standard input (`irb <<< CODE`, `echo CODE | pry`), with their
    # one-liner options where they have one: an interpreter row reads stdin as code.
    **{name: Grammar(paths=_set("r", "I"), code=_set("e"), interpreter=True) for name in ("irb", "pry")},
    **{name: Grammar(code=_set("c"), interpreter=True) for name in ("bpython", "ptpython", "ptipython")},
    **{name: Grammar(interpreter=True) for name in ("psysh", "wish", "jjs", "nashorn", "bsh")},
    # Interpreters with an option whose value is code (each program's --help / man page): R and
    # littler (`r`, names are casefolded), julia, emacs (-eval and --eval alike), the JVM and BEAM
    # languages, Lisps and Schemes, dc (`!CMD` runs a shell), m4 (`syscmd`), ts-node and tsx,
    # QuickJS, Raku, Octave, gnuplot (`system()`), IPython/Jython/MicroPython, CHICKEN, Gambit, GHC.
    "r": Grammar(values=_set("--encoding"), paths=_set("f", "--file"), code=_set("e"), interpreter=True),
    "julia": Grammar(
        values=_set("t", "p", "--threads", "--procs", "--project"),
        paths=_set("L", "--load", "--machine-file", "J", "--sysimage"),
        code=_set("e", "E", "--eval", "--print"),
        interpreter=True,
    ),
    **{
        name: Grammar(
            paths=_set("l", "--load", "load", "L", "--directory", "--script", "script", "x"),
            code=_set("--eval", "eval"),
        )
        for name in ("emacs", "emacs-nox", "xemacs", "emacsclient")
    },
    "groovy": Grammar(values=_set("cp", "classpath", "--classpath", "D"), code=_set("e"), interpreter=True),
    "elixir": Grammar(
        values=_set("--sname", "--name", "--cookie", "--erl"),
        paths=_set("r", "pr", "--pa", "--pz"),
        code=_set("e", "--eval"),
        interpreter=True,
    ),
    "iex": Grammar(
        values=_set("--sname", "--name", "--cookie"), paths=_set("r", "--dot-iex"), code=_set("e", "--eval")
    ),
    "erl": Grammar(values=_set("sname", "name", "setcookie"), code=_set("eval")),
    "escript": Grammar(interpreter=True),
    "scala": Grammar(values=_set("cp", "classpath"), code=_set("e")),
    "kotlin": Grammar(values=_set("cp", "classpath"), code=_set("e", "expression")),
    "kotlinc": Grammar(values=_set("cp", "classpath"), paths=_set("d"), code=_set("e", "expression")),
    "jshell": Grammar(values=_set("--class-path", "-R", "-J"), interpreter=True),
    **{
        name: Grammar(values=_set("Sdeps"), optional=_set("A", "M", "X", "T"), code=_set("e", "--eval"))
        for name in ("clojure", "clj")
    },
    "bb": Grammar(code=_set("e", "--eval"), interpreter=True),
    "racket": Grammar(paths=_set("t", "f", "r", "l", "--require"), code=_set("e", "--eval"), interpreter=True),
    "guile": Grammar(paths=_set("l", "L", "x"), code=_set("c", "e"), interpreter=True),
    "sbcl": Grammar(paths=_set("--load", "--script", "--core"), code=_set("--eval")),
    "clisp": Grammar(paths=_set("i", "M"), code=_set("x")),
    "ecl": Grammar(paths=_set("load", "shell"), code=_set("eval")),
    "gst": Grammar(code=_set("e", "--eval"), interpreter=True),
    "swipl": Grammar(paths=_set("s", "f", "l"), code=_set("g", "t", "--goal"), interpreter=True),
    "ocaml": Grammar(paths=_set("I", "init"), interpreter=True),
    "dc": Grammar(paths=_set("f", "--file"), code=_set("e", "--expression"), interpreter=True),
    **{name: Grammar(code=_set("e", "--eval", "p", "--print"), interpreter=True) for name in ("ts-node", "tsx")},
    "qjs": Grammar(code=_set("e", "--eval"), interpreter=True),
    **{name: Grammar(code=_set("e"), interpreter=True) for name in ("jrunscript", "rhino", "raku", "perl6", "rakudo")},
    "octave": Grammar(code=_set("--eval"), interpreter=True),
    "gnuplot": Grammar(code=_set("e"), interpreter=True),
    **{name: Grammar(code=_set("c"), interpreter=True) for name in ("ipython", "jython", "micropython")},
    **{name: Grammar(code=_set("e", "p"), interpreter=True) for name in ("csi", "gsi")},
    **{name: Grammar(code=_set("e")) for name in ("ghc", "ghci")},
    "m4": Grammar(values=_set("D", "U", "I", "--define", "--undefine", "--include"), interpreter=True),
    "osascript": Grammar(values=_set("l", "s"), code=_set("e"), interpreter=True),
    "tclsh": Grammar(interpreter=True),
    # Interpreters and shells of other runtimes with a one-liner option (each one's --help): Google's
    # zx (JavaScript with fs and $`cmd`), the MongoDB shells (JavaScript with require('fs')), Janet,
    # Hy, Fennel, CoffeeScript, Lumo, Planck, nbb, Chez Scheme. Their code is `$_code`: it may open,
    # delete or run anything (round five, set D).
    "zx": Grammar(
        values=_set("--shell", "--prefix", "--postfix", "--ext", "--cwd"), code=_set("e", "--eval"), interpreter=True
    ),
    **{
        name: Grammar(
            values=_set("u", "p", "--username", "--password", "--host", "--port", "--authenticationDatabase"),
            paths=_set("f", "--file", "--tlsCertificateKeyFile", "--tlsCAFile"),
            code=_set("--eval"),
            interpreter=True,
        )
        for name in ("mongosh", "mongo")
    },
    "janet": Grammar(code=_set("e"), interpreter=True),
    # Round six (set E, unknown-interpreters): interpreters with an option whose value is code
    # (Forth, Lisps and Schemes, Pike, Io, R, LuaJIT, Prolog, Wolfram, Rebol/Red, Factor): code
    # the engine does not read, `$_code` for the red lines. Their scripts are operands.
    **{
        name: Grammar(code=_set("e", "--evaluate"), interpreter=True)
        for name in ("gforth", "gforth-fast", "gforth-itc")
    },
    **{name: Grammar(code=_set("e", "--eval"), interpreter=True) for name in ("ccl", "ccl64", "lx86cl64", "ecl")},
    **{name: Grammar(code=_set("e", "p"), interpreter=True) for name in ("chibi-scheme", "gsi", "gxi")},
    "kawa": Grammar(code=_set("e", "c"), interpreter=True),
    "pike": Grammar(code=_set("e"), interpreter=True),
    "io": Grammar(code=_set("e"), interpreter=True),
    **{name: Grammar(code=_set("e"), interpreter=True) for name in ("R", "Rscript", "luajit", "moon", "utop")},
    "scilab": Grammar(code=_set("e"), interpreter=True),
    "maxima": Grammar(code=_set("--batch-string", "r"), interpreter=True),
    "gprolog": Grammar(code=_set("--entry-goal", "--query-goal"), interpreter=True),
    "scryer-prolog": Grammar(code=_set("g"), interpreter=True),
    **{name: Grammar(code=_set("code", "c", "run"), interpreter=True) for name in ("wolframscript", "wolfram", "math")},
    **{name: Grammar(code=_set("--do"), interpreter=True) for name in ("red", "rebol", "rebol3", "r3")},
    "factor": Grammar(code=_set("e"), interpreter=True),
    "hy": Grammar(values=_set("m"), code=_set("c"), interpreter=True),
    "fennel": Grammar(code=_set("e", "--eval"), interpreter=True),
    **{name: Grammar(code=_set("e", "--eval"), interpreter=True) for name in ("coffee", "lumo", "planck", "nbb")},
    **{name: Grammar(interpreter=True) for name in ("chez", "scheme", "petite")},
    "gjs": Grammar(paths=_set("I", "--include-path"), code=_set("c", "--command"), interpreter=True),
    "ssh": Grammar(
        values=_set("B", "b", "c", "D", "e", "I", "J", "L", "l", "m", "O", "o", "p", "Q", "R", "W", "w", "P"),
        paths=_set("i", "F", "E", "S"),
    ),
    "nc": Grammar(
        values=_set("I", "i", "M", "m", "O", "P", "p", "q", "s", "T", "V", "W", "w", "X", "x"), runs=_set("e", "c")
    ),
    **{name: _VIM for name in ("vi", "vim", "nvim", "view", "ex", "rvim", "gvim", "vimdiff")},
    "man": Grammar(values=_set("M", "S", "m", "L", "C", "E", "R"), runs=_set("P", "--pager", "H", "--html")),
    # Round ten (set I, option-runs-command): `split --filter=CMD` runs CMD per chunk; bat's
    # `--pager CMD` runs CMD (both plain readers otherwise).
    "split": Grammar(
        values=_set("a", "b", "C", "l", "n", "t", "--suffix-length", "--bytes", "--line-bytes", "--lines", "--number"),
        runs=_set("--filter"),
    ),
    **{
        name: Grammar(
            values=_set("l", "--language", "--theme", "--style", "--paging", "H", "r", "--line-range"),
            runs=_set("--pager"),
        )
        for name in ("bat", "batcat")
    },
    "zip": Grammar(values=_set("n", "b", "t", "tt", "P", "O"), runs=_set("TT", "--unzip-command")),
    "sudoedit": Grammar(values=_set("u", "g", "C", "h", "p", "r", "t", "T", "U", "D", "R")),
    # bash's mapfile/readarray: -C CALLBACK is evaluated every -c lines (`help mapfile`).
    **{name: Grammar(values=_set("d", "n", "O", "s", "u", "c"), runs=_set("C")) for name in ("mapfile", "readarray")},
}

# GNU coreutils' programs (the list in `coreutils --help`, coreutils 9.4), less the ones that run a
# command (chroot, env, nice, nohup, stdbuf, timeout: WRAPPERS; runcon: unknown, so its words are
# read as a command). Homebrew installs them with a `g` prefix and uutils with `uu` (grm, uurm).
COREUTILS = frozenset(
    {
        "[", "arch", "b2sum", "base32", "base64", "basename", "basenc", "cat", "chcon", "chgrp", "chmod",
        "chown", "cksum", "comm", "cp", "csplit", "cut", "date", "dd", "df", "dir", "dircolors", "dirname",
        "du", "echo", "expand", "expr", "factor", "false", "fmt", "fold", "groups", "head", "hostid",
        "hostname", "id", "install", "join", "kill", "link", "ln", "logname", "ls", "md5sum", "mkdir",
        "mkfifo", "mknod", "mktemp", "mv", "nl", "nproc", "numfmt", "od", "paste", "pathchk", "pinky", "pr",
        "printenv", "printf", "ptx", "pwd", "readlink", "realpath", "rm", "rmdir", "seq", "sha1sum",
        "sha224sum", "sha256sum", "sha384sum", "sha512sum", "shred", "shuf", "sleep", "sort", "split", "stat",
        "stty", "sum", "sync", "tac", "tail", "tee", "test", "touch", "tr", "true", "truncate", "tsort", "tty",
        "uname", "unexpand", "uniq", "unlink", "users", "vdir", "wc", "who", "whoami", "yes",
    }
)  # fmt: skip
# Programs known by name alone: what they do is for the packs to judge (deleters and wipers:
# secure-delete, wipe, nwipe, trash-cli, rimraf, del-cli, sdelete; disk tools: util-linux,
# e2fsprogs, gptfdisk, parted, LVM, ZFS; network clients, scanners and miners; privilege tools).
# Names that are also common subcommands (format, host, http, scrub, del, rd, please: `dotnet
# format`, `btrfs scrub`) are left out. A word of an unknown program naming one is its command.
ACTING_PROGRAMS = frozenset(
    {
        "srm", "sfill", "sswap", "smem", "wipe", "nwipe", "trash", "trash-put", "trash-rm", "trash-empty",
        "trash-list", "trash-restore", "rmtrash", "rimraf", "del-cli", "sdelete", "wipefs", "fdisk", "sfdisk",
        "cfdisk", "gdisk", "sgdisk", "parted", "blkdiscard", "mkswap", "mke2fs", "mkfs", "losetup",
        "cryptsetup", "lvremove", "vgremove", "pvremove", "zpool", "zfs", "diskutil", "httpie", "xh", "curlie",
        "aria2c", "axel", "mosh", "ncat", "socat", "telnet", "websocat", "wscat", "s3cmd", "ncftpput",
        "ncftpget", "dig", "nslookup", "drill", "nmap", "masscan", "zmap", "xmrig", "minerd", "cpuminer",
        "diskpart", "bitsadmin", "certutil", "runas", "gsudo", "run0", "sudo-rs", "pfexec", "ksu",
        "machinectl",
    }
)  # fmt: skip
# Other GNU tools Homebrew installs with a `g` prefix (findutils, grep, sed, tar, make, awk, which).
_GNU_PREFIXED = COREUTILS | {"find", "xargs", "locate", "updatedb", "grep", "egrep", "fgrep", "sed", "tar", "make"}
_PREFIXES = ("g", "uu-", "uu")  # Homebrew's grm; uutils' uu-rm (Arch) and uurm (Homebrew)
# Programs whose words are options and operands, never a command they run (bash builtins that
# run no code, util-linux and procps readers, archivers, build and package tools): with
# _KNOWN_NAMES in shell.py, the programs the engine knows. Any other program may run a word
# that is a command line (`chronic rm -rf build`): see shell.py's _unknown_program.
PLAIN_PROGRAMS = COREUTILS | frozenset(
    {
        # bash builtins that run no code (`help`'s list, less eval, trap, bind, complete, compgen,
        # fc, mapfile/readarray -C, command, builtin, exec: those run text)
        ":", "bg", "break", "caller", "continue", "declare", "dirs", "disown", "enable", "exit", "export",
        "fg", "getopts", "hash", "help", "history", "jobs", "let", "local", "logout", "popd", "read",
        "readonly", "return", "set", "shift", "shopt", "suspend", "times", "type", "typeset", "ulimit",
        "umask", "unalias", "unset", "wait",
        # finding, reading and comparing files
        "which", "whereis", "locate", "file", "strings", "less", "more", "most", "bat", "batcat", "tree",
        "diff", "cmp", "diff3", "sdiff", "patch", "column", "rev", "hexdump", "xxd", "look", "iconv",
        "gzip", "gunzip", "zcat", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzip", "7z", "7za", "zipinfo",
        # processes and the system
        "ps", "top", "htop", "pgrep", "pkill", "pidof", "killall", "free", "uptime", "lsof", "lsblk",
        "cal", "tput", "clear", "reset", "renice", "logger",
        # build, test and package tools (their subcommands are names, not programs: `docker rm c`)
        "pip", "pip3", "cargo", "rustc", "rustup", "go", "gcc", "g++", "cc", "clang", "javac", "mvn",
        "gradle", "pytest", "mypy", "ruff", "black", "isort", "flake8", "pylint", "eslint", "prettier", "tsc",
        "docker", "podman", "kubectl", "helm", "terraform", "aws", "gcloud", "az", "gh", "glab", "brew",
        "apt", "apt-get", "apt-cache", "dpkg", "dnf", "yum", "rpm", "pacman", "apk", "snap", "gem",
        "composer", "code",
    }
)  # fmt: skip

# Programs that read their own commands from standard input even with file operands: "ed" (ed's
# line commands: `!CMD` runs a shell, `r FILE`, `w FILE`, `e FILE` open files) or "code" (vi's Ex
# mode, whose language is too large to read: `:call system()`, `:py3`).
STDIN_SCRIPTS: dict[str, str] = {
    "ed": "ed",
    "red": "ed",
    **{name: "code" for name in ("vi", "vim", "nvim", "view", "ex", "rvim", "gvim", "vimdiff")},
}

# Programs that expand glob patterns themselves, so a quoted `'.en?'` reaches them unexpanded and
# still selects .env (each program's manual): "*" means operands are globs; other entries are
# options whose value is one (`-i!` is 7z's include switch, `-ir!PAT`; tar's operands only with
# --wildcards; curl's -T only without -g/--globoff).
OWN_GLOBS: dict[str, frozenset[str]] = {
    "gsutil": _set("*"),
    "gcloud": _set("*"),
    "azcopy": _set("*", "--include-pattern", "--include-path"),
    "7z": _set("*", "-i!"),
    "7za": _set("*", "-i!"),
    "7zz": _set("*", "-i!"),
    "7zr": _set("*", "-i!"),
    "zip": _set("*", "-i", "--include"),
    "tar": _set("*"),
    "rsync": _set("--include", "--filter", "-f"),  # a filter rule `+ PAT` / `include PAT` includes
    "aws": _set("--include"),
    "rclone": _set("--include"),
    "curl": _set("-T", "--upload-file"),
}

# Path options whose file is the program's script: given standard input (`make -f /dev/stdin`,
# `awk -f -`), the script is code the engine cannot see.
SCRIPT_FILE_OPTIONS: dict[str, frozenset[str]] = {
    "make": _set("f", "--file", "--makefile"),
    "awk": _set("f", "E", "--file", "--exec"),
    "sed": _set("f", "--file"),
    "jq": _set("f", "--from-file"),
    "php": _set("f"),
    "dc": _set("f", "--file"),
    "r": _set("f", "--file"),
}

# Other names of one program: both the name written and these are reported.
ALIASES: dict[str, tuple[str, ...]] = {
    "nc.openbsd": ("nc",),
    "nc.traditional": ("nc",),
    "netcat": ("nc",),
    "sudoedit": ("sudo",),
    "gawk": ("awk",),
    "mawk": ("awk",),
    "nawk": ("awk",),
    "gsed": ("sed",),
    "nodejs": ("node",),
    "python3": ("python",),
    "python2": ("python",),
    "pypy": ("python",),
    "pypy3": ("python",),
    "perl5": ("perl",),
    "luajit": ("lua",),
    "php-cli": ("php",),
    "gtar": ("tar",),
    "bsdtar": ("tar",),
    "gmake": ("make",),
    "bfs": ("find",),  # a breadth-first find with find's expressions
    "wget2": ("wget",),
    "py": ("python",),  # the Windows launcher: `py -3 -c CODE`
    "pwsh-preview": ("pwsh",),
}
# python -m MODULE: modules that read Python (or debugger commands that run Python) from standard
# input, and modules whose operands are statements they run (`python -m timeit STMT`).
PYTHON_STDIN_MODULES = frozenset(
    {"code", "pdb", "asyncio", "IPython", "ptpython", "bpython", "idlelib", "jupyter_console", "xonsh"}
)
PYTHON_CODE_MODULES = frozenset({"timeit"})
# Subcommands that open a REPL or a shell of the program (`python manage.py shell`, `rails
# console`, `deno repl`, `php artisan tinker`, `flask shell`, `poetry shell`, `nix repl`): fed a
# here-string, a heredoc or a pipe, or given one of REPL_CODE_OPTIONS, they run code.
REPL_WORDS = frozenset({"shell", "console", "repl", "dbshell", "tinker", "shell_plus", "irb", "pry"})
REPL_CODE_OPTIONS = frozenset({"-c", "--command", "-e", "--eval", "--execute"})
# SQL that reads or writes files or runs programs on the client's or server's machine (SQLite's
# readfile/writefile/edit/load_extension, MySQL's LOAD_FILE and INTO OUTFILE, PostgreSQL's
# pg_read_file, lo_import/lo_export and COPY ... PROGRAM, MSSQL's xp_cmdshell): code whose files
# the engine cannot place, in the SQL a client is given (operands, -c/-e, -cmd, stdin).
SQL_CODE = re.compile(
    r"(?i)\b(?:readfile|writefile|edit|load_extension|fts3_tokenizer|load_file|pg_read_file|pg_read_binary_file"
    r"|pg_ls_dir|pg_stat_file|lo_import|lo_export|sys_exec|sys_eval|xp_cmdshell)\s*\(|\binto\s+(?:out|dump)file\b"
    r"|\b(?:from|to)\s+program\b|\bload\s+data\s+(?:local\s+)?infile\b"
    # DuckDB and ClickHouse read files by table functions, and DuckDB by a path as a table.
    r"|\b(?:read_csv(?:_auto)?|read_text|read_blob|read_json(?:_auto|_objects)?|read_ndjson|read_parquet|file)\s*\("
    r"|\bfrom\s+'[^']*[./][^']*'"
)
# SQL that may open a file named in a string literal (round six, set E, sql-file-access): the
# functions and clauses of SQL_CODE, and COPY, ATTACH, EXPORT/IMPORT DATABASE, INSTALL/LOAD of a
# file, SQLite's VACUUM INTO and ClickHouse's INTO OUTFILE and file()/s3()/url() table functions.
SQL_FILE_ACCESS = re.compile(
    SQL_CODE.pattern + r"|\b(?:copy|attach|vacuum\s+into|(?:export|import)\s+database|install|load|"
    r"backup|restore)\b|\b(?:file|s3|url|hdfs|azureblobstorage|gcs)\s*\(",
    re.IGNORECASE,
)
SQL_CLIENTS = frozenset(
    {"sqlite3", "sqlite", "duckdb", "psql", "mysql", "mariadb", "clickhouse-client", "clickhouse", "clickhouse-local"}
)
# Clients whose operands after the database are SQL or dot-commands (`sqlite3 db "SQL"`, `duckdb db "SQL"`).
SQL_OPERAND_CLIENTS = frozenset({"sqlite3", "sqlite", "duckdb"})
# Versioned names: python3.12, ruby3.2, lua5.4, php8.1... are the program before the digits; a
# dotted suffix names a family member (mkfs.ext4 is mkfs, fsck.vfat is fsck).
_VERSIONED = re.compile(r"(python|pypy|perl|ruby|lua|php|node|pip|tclsh)[0-9][0-9.]*")
# Shells installed under a version (bash5, bash-5.2, zsh-5.9: Homebrew's and distributions' names).
_VERSIONED_SHELL = re.compile(r"(bash|zsh|ksh|mksh|dash|sh|fish|tcsh|csh|elvish|nu)(?:-?[0-9][0-9.]*|-static)")
_FAMILY = re.compile(r"(mkfs|fsck|mount|umount)\.[a-z0-9_-]+")
# Windows: `rm.exe`, `curl.EXE` run rm and curl.
_EXECUTABLE_SUFFIXES = (".exe", ".com", ".bat", ".cmd")


@functools.lru_cache(maxsize=4096)
def canonical_names(name: str) -> tuple[str, ...]:
    """A program name (basename, casefolded) and its other names: first the name written, then the canonical ones."""
    names = [name]
    bare = name
    for suffix in _EXECUTABLE_SUFFIXES:
        if bare.endswith(suffix) and len(bare) > len(suffix):
            bare = bare[: -len(suffix)]
            names.append(bare)
            break
    for alias in ALIASES.get(bare, ()):
        names.append(alias)
    versioned = _VERSIONED.fullmatch(bare)
    if versioned is not None:
        names.append(versioned.group(1))
        names.extend(ALIASES.get(versioned.group(1), ()))
    versioned = _VERSIONED_SHELL.fullmatch(bare)
    if versioned is not None:
        names.append(versioned.group(1))
    family = _FAMILY.fullmatch(bare)
    if family is not None:
        names.append(family.group(1))
    for prefix in _PREFIXES:
        if bare.startswith(prefix) and bare[len(prefix) :] in _GNU_PREFIXED:
            names.append(bare[len(prefix) :])  # Homebrew's grm, gshred; uutils' uurm
    return tuple(dict.fromkeys(names))


# Environment variables whose value a program runs as shell code (git, pagers, editors, bash).
CODE_VARIABLES = frozenset(
    {
        "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "BROWSER",
        "PROMPT_COMMAND", "BASH_ENV", "ENV", "LESSOPEN", "LESSCLOSE", "GIT_PROXY_COMMAND", "RSYNC_RSH",
        "SHELL", "FCEDIT", "LESSEDIT", "MANOPT_PAGER", "SUDO_EDITOR",
        "RSYNC_CONNECT_PROG", "SYSTEMD_PAGER",
    }
)  # fmt: skip
# GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=CMD sets any git config key:
# every GIT_CONFIG_VALUE_<n> is read as code.
CODE_VARIABLE_PREFIXES = ("GIT_CONFIG_VALUE_",)
# Round five: programs name the variable they run after themselves (KUBE_EDITOR, GH_PAGER,
# PSQL_PAGER, SYSTEMD_EDITOR, SVN_EDITOR, GIT_SSH_COMMAND, FZF_DEFAULT_COMMAND, CONFIG_SHELL...), so
# a list of names is always one program behind: any variable whose name ends in one of these is
# read as code. A benign value (`GH_PAGER=cat`) is just a program name and stays harmless.
CODE_VARIABLE_SUFFIXES = (
    "_EDITOR", "_VISUAL", "_PAGER", "_COMMAND", "_CMD", "_SHELL", "_ASKPASS", "_BROWSER", "_RSH", "_SSH",
    # Round nine (set H, toolchain-exec-options): a toolchain runs a wrapper, runner or linker
    # program named in its environment (RUSTC_WRAPPER, CARGO_TARGET_*_RUNNER, CARGO_TARGET_*_LINKER).
    "_WRAPPER", "_RUNNER", "_LINKER",
)  # fmt: skip
# bash's prompts: their value is expanded as in double quotes before it is shown, so a `$(...)` or
# backtick in PS4 runs at each `set -x` line, in PS0/PS1 at each interactive prompt.
PROMPT_VARIABLES = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4"})
# Variables a program reads as more of its own command-line options (tar splits TAR_OPTIONS on
# blanks, then `--to-command=CMD` and `--checkpoint-action=exec=CMD` run CMD; NODE_OPTIONS'
# `--require FILE`; zip's ZIPOPT `-TT CMD`; GNU parallel's PARALLEL): read as `PROGRAM VALUE`.
OPTION_VARIABLES: dict[str, str] = {
    "TAR_OPTIONS": "tar",
    "ZIPOPT": "zip",
    "LESS": "less",
    "NODE_OPTIONS": "node",
    "PARALLEL": "parallel",
    "RUBYOPT": "ruby",
    "PERL5OPT": "perl",
}
# Variables naming a library or file a program loads and runs without a word on the command
# line saying so (the dynamic loader's preload and audit libraries, ripgrep's config file whose
# `--pre=CMD` runs CMD): code the engine cannot see, so CODE_OPERAND as well as the path.
# git's config files and template (hooks) folder named by variable hold code keys (core.pager,
# core.fsmonitor, hooks) the engine never reads; Perl's PERL5DB is Perl code for `perl -d`.
LOADED_VARIABLES = frozenset(
    {
        "LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "RIPGREP_CONFIG_PATH", "PYTHONSTARTUP", "BASH_ENV", "ENV",
        "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG", "GIT_TEMPLATE_DIR", "GIT_EXEC_PATH", "PERL5DB",
    }
)  # fmt: skip
# Variables whose value holds settings in a syntax of their own that may run code: unknown.
UNKNOWN_VARIABLES = frozenset({"GIT_CONFIG_PARAMETERS"})
# Environment variables whose value is a list of paths a program loads (code, too, but in files);
# bash sources BASH_ENV and ENV (after expanding them, so they are code as well).
PATH_VARIABLES = frozenset(
    {
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "DYLD_INSERT_LIBRARIES",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "BASH_ENV",
        "ENV",
        "RIPGREP_CONFIG_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG",
        "GIT_TEMPLATE_DIR",
        "GIT_EXEC_PATH",
    }
)


@functools.lru_cache(maxsize=1024)
def variable_kind(name: str) -> str:
    """What a variable's value is to programs: code, prompt, options, paths, loaded, unknown, "" or several."""
    kinds: list[str] = []
    if name in UNKNOWN_VARIABLES:
        return "unknown"
    if name in CODE_VARIABLES or name.startswith(CODE_VARIABLE_PREFIXES) or name.endswith(CODE_VARIABLE_SUFFIXES):
        kinds.append("code")
    if name in PROMPT_VARIABLES:
        kinds.append("prompt")
    if name in OPTION_VARIABLES:
        kinds.append("options")
    if name in PATH_VARIABLES:
        kinds.append("paths")
    if name in LOADED_VARIABLES:
        kinds.append("loaded")
    return " ".join(kinds)


# git config keys whose value is shell code (`git -c core.pager='sh -c ...' log`): exact keys,
# and the last part of a section.*.key (alias.* values run code when they start with `!`).
GIT_CODE_KEYS = frozenset(
    {
        "core.sshcommand", "core.pager", "core.editor", "core.fsmonitor", "core.askpass", "core.gitproxy",
        "sequence.editor", "diff.external", "credential.helper", "gpg.program", "pager.*", "diff.*.textconv",
        "diff.*.command", "filter.*.clean", "filter.*.smudge", "filter.*.process", "merge.*.driver",
        "remote.*.receivepack", "remote.*.uploadpack",   "uploadpack.packobjectshook",
        "interactive.difffilter", "web.browser", "browser.*.cmd", "man.*.cmd", "mergetool.*.cmd",
        "difftool.*.cmd", "gpg.*.program", "ssh.variant",
        # git-config(1), round two: keys whose value git runs (a program path counts: it is run too).
        "core.alternaterefscommand", "gpg.ssh.defaultkeycommand", "credential.*.helper", "tar.*.command",
        "sendemail.sendmailcmd", "sendemail.*.sendmailcmd", "sendemail.tocmd", "sendemail.*.tocmd",
        "sendemail.cccmd", "sendemail.*.cccmd", "sendemail.headercmd", "sendemail.*.headercmd",
        "sendemail.smtpserver", "sendemail.*.smtpserver", "instaweb.httpd", "instaweb.browser",
        "difftool.*.path", "mergetool.*.path", "man.*.path", "browser.*.path", "imap.tunnel", "hook.*.command",
        "trailer.*.command", "trailer.*.cmd", "guitool.*.cmd",
        # git-lfs-config(5): custom transfer agents and extensions run programs too.
        "lfs.*.path", "lfs.*.clean", "lfs.*.smudge",
    }
)  # fmt: skip
GIT_PATH_KEYS = frozenset(
    {
        "core.hookspath", "core.excludesfile", "include.path", "core.attributesfile",
        # git-config(1), round two: files git reads, shows or sends (commit.template lands in the
        # message, http.cookieFile goes to the remote), and folders whose hooks it runs.
        "includeif.*.path", "commit.template", "init.templatedir", "http.cookiefile", "http.sslcert", "http.sslkey",
        "http.*.cookiefile", "http.*.sslcert", "http.*.sslkey", "sendemail.aliasesfile", "blame.ignorerevsfile",
        "mailmap.file", "gpg.ssh.allowedsignersfile", "core.worktree",
    }
)  # fmt: skip
# Keys whose value is code only when it starts with `!` (git-config(1): alias.*, submodule.<name>.update).
GIT_BANG_CODE_KEYS = frozenset({"alias.*", "submodule.*.update"})

# git subcommands' options whose value is a command git runs (git-difftool(1) -x, git-grep(1) -O,
# git-clone(1) -u, git-send-email(1) --*-cmd, git-instaweb(1) --httpd, git-daemon(1)
# --access-hook, git-filter-branch(1) --setup and --*-filter); short options are letters. A long
# option may be abbreviated (git's parse-options and Perl's Getopt::Long take any unique prefix).
GIT_RUNS: dict[str, frozenset[str]] = {
    "clone": _set("u", "--upload-pack"),
    "fetch": _set("--upload-pack"),
    "pull": _set("--upload-pack"),
    "fetch-pack": _set("--upload-pack", "--exec"),
    "ls-remote": _set("--upload-pack", "--exec"),
    "push": _set("--receive-pack", "--exec"),
    "send-pack": _set("--receive-pack", "--exec"),
    "archive": _set("--exec"),
    "difftool": _set("x", "--extcmd"),
    "rebase": _set("x", "--exec"),
    "send-email": _set("--sendmail-cmd", "--to-cmd", "--cc-cmd", "--header-cmd", "--smtp-server"),
    "instaweb": _set("d", "--httpd", "b", "--browser"),
    "daemon": _set("--access-hook"),
    "filter-branch": _set(
        "--setup", "--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter",
        "--commit-filter", "--tag-name-filter",
    ),
}  # fmt: skip
# The same for options whose value, if any, is attached (`git grep -Oless`, `--open-files-in-pager=less`).
GIT_RUNS_ATTACHED: dict[str, frozenset[str]] = {"grep": _set("O", "--open-files-in-pager")}
# Subcommands whose operands are never pathspecs but names of refs, remotes or settings
# (`git branch --list 'feat*'` matches branch names): their operands are not read as git globs.
GIT_NO_PATHSPECS = frozenset(
    {
        "branch", "tag", "for-each-ref", "show-ref", "ls-remote", "remote", "fetch", "pull", "push", "clone",
        "config", "describe", "switch", "merge", "rebase", "cherry-pick", "revert", "reflog", "symbolic-ref",
        "update-ref", "name-rev", "merge-base", "cherry", "init", "bisect", "worktree", "commit-tree", "var",
    }
)  # fmt: skip
# Options that are a prefix of a longer one above but an option of their own (exact names win).
GIT_EXACT_OPTIONS = frozenset({"--to", "--cc"})
# Subcommands that read a patch from standard input and write the files it names (git-apply(1), git-am(1)).
GIT_PATCH_READERS = frozenset({"apply", "am"})
# Programs other than git that read a patch (unified or context diff) from standard input and
# write the files its `---`/`+++` lines name (round six, set E, patch-writes).
PATCH_PROGRAMS = frozenset({"patch", "gpatch"})
# git config keys that are a safety switch of one subcommand (round six, set E, git-clean-noforce):
# set false (or to a value the engine cannot read) by `git -c`, `--config-env`, GIT_CONFIG_KEY_n or
# `git config` on the same line, the subcommand acts as if given the option, so Command.lines
# spells that subcommand again with the option (`git -c clean.requireForce=false clean -dx` is
# also `git clean -dx --force`) and a pack's table of forced subcommands meets it.
GIT_SAFETY_KEYS: dict[str, tuple[str, str]] = {"clean.requireforce": ("clean", "--force")}
# git's true spellings of a boolean (git-config(1)); any other value may be false.
GIT_TRUE = frozenset({"true", "yes", "on", "1"})
# Options whose value ends in `:FILE` (git-log(1) -L START,END:FILE and -L :FUNCNAME:FILE).
GIT_RANGE_FILES: dict[str, frozenset[str]] = {"log": _set("L")}
# Options whose value is code for an interpreter (git-filter-repo(1): Python callbacks): `$_code`.
GIT_CODE_OPTIONS: dict[str, frozenset[str]] = {
    "filter-repo": _set(
        "--filename-callback", "--message-callback", "--name-callback", "--email-callback", "--refname-callback",
        "--blob-callback", "--commit-callback", "--tag-callback", "--reset-callback", "--file-info-callback",
    ),
}  # fmt: skip
# Options setting KEY=VALUE config the subcommand then uses, read like `git -c` (git-clone(1) -c).
GIT_CONFIG_OPTIONS: dict[str, frozenset[str]] = {"clone": _set("c", "--config")}
# Options that make a subcommand read object names or paths from standard input
# (git-cat-file(1) --batch, git-hash-object(1) --stdin-paths...): its literal text names files.
# The first set shows content or reads files: a standard input it cannot read is an unknown name.
GIT_STDIN_CONTENT: dict[str, frozenset[str]] = {
    "cat-file": _set("--batch", "--batch-command"),
    "hash-object": _set("--stdin-paths"),
    "checkout-index": _set("--stdin"),
    "update-index": _set("--stdin", "--index-info"),
}
# The rest read names of revisions or paths only to list or check them (`git cat-file --batch-check`).
GIT_STDIN_NAMES = frozenset({"--batch-check", "--stdin", "--stdin-paths"})
# (`--pathspec-from-file=-` of add, restore, reset...: pathspecs from stdin, read as content; from a
# file the engine does not read, unknown names.)


# cmd.exe: /C, /K and /R run the rest of the line; the other switches only set the console up.
CMD_RUNS = frozenset({"/c", "/k", "/r"})
CMD_SWITCHES = frozenset({"/q", "/d", "/a", "/u", "/s", "/e:on", "/e:off", "/f:on", "/f:off", "/v:on", "/v:off"})
# powershell / pwsh options (a leading - or /, any case; PowerShell takes any unambiguous prefix,
# so each entry lists the prefixes in use). -Command's text and -EncodedCommand's are code.
POWERSHELL_CODE = frozenset({"-command", "-c", "-com", "-comm", "-cmd"})
POWERSHELL_ENCODED = frozenset({"-encodedcommand", "-e", "-ec", "-en", "-enc", "-enco", "-encodedc"})
POWERSHELL_FILE = frozenset({"-file", "-f", "-fi", "-fil"})
POWERSHELL_FLAGS = frozenset(
    {
        "-noprofile", "-nop", "-noninteractive", "-noni", "-nologo", "-nol", "-sta", "-mta", "-noexit", "-noe",
        "-login", "-l", "-interactive", "-i", "-help", "-?", "-h", "-noprofileloadtime",
    }
)  # fmt: skip
POWERSHELL_VALUES = frozenset(
    {
        "-executionpolicy", "-ep", "-ex", "-exec", "-windowstyle", "-w", "-win", "-version", "-v", "-inputformat",
        "-inp", "-if", "-outputformat", "-o", "-of", "-out", "-configurationname", "-config", "-settingsfile",
        "-workingdirectory", "-wd", "-custompipename",
    }
)  # fmt: skip
# PowerShell's built-in aliases of cmdlets a pack may name, and their cmdlets (casefolded).
POWERSHELL_ALIASES: dict[str, str] = {
    "rm": "remove-item", "del": "remove-item", "erase": "remove-item", "rd": "remove-item", "ri": "remove-item",
    "rmdir": "remove-item", "cat": "get-content", "gc": "get-content", "type": "get-content",
    "cp": "copy-item", "copy": "copy-item", "cpi": "copy-item", "mv": "move-item", "move": "move-item",
    "mi": "move-item", "iwr": "invoke-webrequest", "curl": "invoke-webrequest", "wget": "invoke-webrequest",
    "irm": "invoke-restmethod", "iex": "invoke-expression", "icm": "invoke-command", "saps": "start-process",
    "start": "start-process", "sc": "set-content", "ac": "add-content", "ni": "new-item",
}  # fmt: skip

# Programs that read commands of their own from standard input (a here-string, a heredoc, a pipe
# from echo or printf) or from these options' text: `sftp host <<< 'put .env'`, `lftp -c 'put x'`.
COMMAND_READERS: dict[str, frozenset[str]] = {
    "sftp": frozenset(),
    "psftp": frozenset(),
    "ftp": frozenset(),
    "pftp": frozenset(),
    "tnftp": frozenset(),
    "ncftp": frozenset(),
    "tftp": _set("-c"),
    "lftp": _set("-c", "-e"),
    "smbclient": _set("-c", "--command"),
    "sqlite3": _set("-cmd"),
    "sqlite": _set("-cmd"),
    "duckdb": _set("-c", "-cmd", "-s"),
    "clickhouse-client": _set("-q", "--query"),
    "clickhouse": _set("-q", "--query"),  # `clickhouse local|client -q SQL`: the multi-call binary
    "clickhouse-local": _set("-q", "--query"),
    "psql": _set("-c", "--command"),
    "mysql": _set("-e", "--execute"),
    "mariadb": _set("-e", "--execute"),
}
# Which operands of a reader's verb are local paths: "all", "first" or "second" (`get REMOTE
# LOCAL`); "shell": the rest of the line is a shell command; "unknown": it runs what the engine
# cannot place. Verbs not listed act on the remote side or on nothing local.
READER_VERBS: dict[str, str] = {
    "put": "first", "reput": "first", "append": "first", "send": "first", "mput": "all", "lcd": "all",
    "lls": "all", "lmkdir": "all", "lpwd": "all", "get": "second", "reget": "second", "recv": "second",
    "mirror": "all", "source": "all", "local": "all", "lrm": "all", "lrmdir": "all", "mget": "none",
    "shell": "shell", "!": "shell",
    ".shell": "shell", ".system": "shell", ".read": "all", ".output": "all", ".once": "all", ".import": "first",
    ".backup": "all", ".restore": "all", ".save": "all", ".open": "all", ".log": "all", ".excel": "unknown",
    ".load": "unknown", ".cd": "all",
    "\\!": "shell", "\\o": "all", "\\out": "all", "\\i": "all", "\\ir": "all", "\\include": "all",
    "\\w": "all", "\\write": "all", "\\copy": "all", "\\g": "all", "\\lo_import": "first",
    "\\lo_export": "second", "\\cd": "all", "system": "shell", "\\.": "all", "tee": "all", "\\t": "all",
}  # fmt: skip


# -- what a command writes (Command.writes, `written(@)`) ------------------------------------------
#
# Where a program writes, for the paths a command line may write: a copy's destination, an
# output option's value, an in-place editor's files, an extractor's folder. Any option or
# operand not described is read, not written; a redirection's target (any descriptor) is
# written whatever the program.


@dataclass(frozen=True, slots=True)
class Writes:
    """Where one program writes: which operands, which options' values (see WRITERS)."""

    operands: str = ""  # "all", "last" (a copy's destination), "second" (`xxd IN OUT`), "" none
    options: frozenset[str] = frozenset()  # options whose value is written (`-o FILE`, `-t DIR`)
    values: frozenset[str] = frozenset()  # short options with a value that is not written (`-m MODE`)
    in_place: frozenset[str] = frozenset()  # short options that make every operand written (`sed -i`)
    extracts: frozenset[str] = frozenset()  # words that make it write unnamed files into the cwd (`x`)
    extract_dirs: frozenset[str] = frozenset()  # options naming the folder it extracts into instead
    reads: frozenset[str] = frozenset()  # words that make it only read or list (`tar t`, `unzip -l`)


# Long options that name an output whatever the program (`--output=FILE`, `--prefix DIR`,
# `--target-directory DIR`, openssl's `-out FILE`): written. getopt_long's prefixes of these
# (`--target-dir`, `--outp`) are read as them (a prefix of four letters or more after `--`).
WRITTEN_OPTIONS = frozenset(
    {
        "--output", "--output-file", "--output-dir", "--output-directory", "--output-document", "--outfile",
        "--out", "--out-file", "--out-dir", "--outdir", "--target", "--target-dir", "--target-directory",
        "--prefix", "--install-prefix", "--root", "--destination", "--dest", "--destdir", "--dest-dir",
        "--install-dir", "--bindir", "--directory-prefix", "--append-output", "--log-file", "--cookie-jar",
        "--dump-header", "--save", "--save-to", "--export", "--in-place",
        "-out", "-keyout", "-output", "-outdir",
    }
)  # fmt: skip
# KEY=VALUE operands whose value is written (`dd of=FILE`, `make DESTDIR=/x install`).
WRITTEN_KEYS = frozenset({"of", "destdir", "prefix", "bindir", "libdir", "sysconfdir", "exec_prefix"})

_COPY = Writes(operands="last", options=_set("t", "--target-directory"), values=_set("S", "m", "o", "g"))
_ALL = Writes(operands="all")
_OUTPUT = Writes(options=_set("o"))
_SED = Writes(in_place=_set("i", "I", "--in-place"), values=_set("e", "f", "l", "--expression", "--file"))
_TAR = Writes(
    options=_set("f", "--file"),
    values=_set("T", "X", "b", "K", "N", "g", "V", "H", "L", "--files-from", "--exclude-from"),
    extracts=_set("x", "--extract", "--get"),
    extract_dirs=_set("C", "--directory"),
    reads=_set("t", "--list", "d", "--diff", "--compare"),
)
_UNZIP = Writes(
    values=_set("x", "P"), extracts=_set("*"), extract_dirs=_set("d"), reads=_set("l", "p", "t", "v", "Z", "z")
)

WRITERS: dict[str, Writes] = {
    **dict.fromkeys(("cp", "gcp", "mv", "ln", "link", "install", "ginstall", "ditto", "rsync", "scp"), _COPY),
    **dict.fromkeys(("tee", "touch", "truncate", "fallocate", "mkswap", "mkdir", "mkfifo", "mknod"), _ALL),
    **dict.fromkeys(("shred", "sponge", "chmod", "chown", "chgrp", "chflags", "setfacl", "chattr"), _ALL),
    **dict.fromkeys(("gcc", "cc", "clang", "g++", "c++", "clang++", "ld", "ld.lld", "rustc", "go", "swiftc"), _OUTPUT),
    **dict.fromkeys(("sort", "strip", "objcopy", "zstd", "base64", "uudecode", "iconv", "patch", "pandoc"), _OUTPUT),
    "curl": Writes(options=_set("o", "D", "c")),
    "wget": Writes(options=_set("O", "P", "o", "a")),
    "gpg": Writes(options=_set("o")),
    "xxd": Writes(operands="second", values=_set("c", "g", "l", "o", "s", "n")),
    "dd": Writes(),
    "sed": _SED,
    "gsed": _SED,
    "perl": Writes(in_place=_set("i"), values=_set("e", "E", "M", "m", "I", "x", "C", "l", "0", "F")),
    "ruby": Writes(in_place=_set("i"), values=_set("e", "r", "I", "C", "E", "F", "K", "W", "x")),
    "pip": Writes(options=_set("t")),
    "pip3": Writes(options=_set("t")),
    "javac": Writes(options=_set("d")),
    "ffmpeg": Writes(operands="last", values=_set("i", "f", "c", "b", "r", "s", "t", "ss", "to")),
    "tar": _TAR,
    "gtar": _TAR,
    "bsdtar": _TAR,
    "unzip": _UNZIP,
    "bsdunzip": _UNZIP,
    **dict.fromkeys(("7z", "7za", "7zz", "7zr"), Writes(extracts=_set("x", "e"), extract_dirs=_set("o"))),
    "cpio": Writes(extracts=_set("i", "--extract")),
}

# Programs that search a tree: with no file operand they search the working directory (grep
# and its kin only when recursive, else they read standard input): the cwd is their operand.
TREE_SEARCHERS = frozenset({"rg", "ag", "ack", "ack-grep", "pt", "sift", "rgrep", "ugrep-indexer"})
RECURSIVE_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "ugrep", "bsdgrep", "ggrep"})

# Options that hand a program the names of the files it reads in a list (a file or stdin), not on
# its line: short letters (read in a cluster by getopt: `tar czfT OUT LIST`, `-T LIST`, `-TLIST`)
# and long options with the shortest prefix getopt_long takes for each (`--files` is tar's
# `--files-from`). What it then reads is unknown: table.UNKNOWN_FILES. xargs only hands the names
# on to a program that opens files (not to echo or printf).
NAME_LISTS: dict[str, tuple[frozenset[str], tuple[tuple[str, int], ...]]] = {
    **dict.fromkeys(("tar", "gtar", "bsdtar"), (_set("T"), (("--files-from", 7),))),
    "zip": (_set("@"), (("--names-stdin", 7),)),
    "xargs": (_set("a"), (("--arg-file", 5),)),
    **dict.fromkeys(("du", "wc", "sort", "gdu", "gwc", "gsort"), (frozenset(), (("--files0-from", 8),))),
    "rsync": (frozenset(), (("--files-from", 8),)),
}

# git subcommands that rewrite files of the worktree they do not name (a patch's, another
# commit's), with the options that make them only check or stop: the worktree is written. `reset`
# only with --hard, --merge or --keep.
GIT_WORKTREE_WRITERS: dict[str, frozenset[str]] = {
    "apply": _set("--check", "--stat", "--numstat", "--summary", "--cached"),
    "am": _set("--abort", "--quit", "--show-current-patch", "--skip"),
    "reset": _set("--soft", "--mixed"),
}

# Round fourteen (set L, cc-home-sweep-*): programs that act on a folder operand by its name or
# its entries' names alone, never reading what the files hold - listers, sizers, the folder
# builtins, mode and owner changers, printers of their words. Any other program handed a folder
# may read every file below it (an image builder, a bucket sync, a secret scanner, a build
# context, a file server, a p2p sender...): its operands are Command.swept. A list of the few
# programs that surely do not read is closed; a list of the ones that do never was.
NAME_ONLY_PROGRAMS = frozenset(
    {"ls", "dir", "vdir", "gls", "exa", "eza", "lsd", "tree", "du", "gdu", "dust", "df", "gdf", "stat", "gstat"}
    | {"cd", "pushd", "popd", "pwd", "mkdir", "gmkdir", "rmdir", "touch", "chmod", "chown", "chgrp", "chattr"}
    | {"lsattr", "getfacl", "setfacl", "namei", "realpath", "grealpath", "readlink", "greadlink", "dirname"}
    | {"basename", "echo", "printf", "test", "[", "[[", "true", "false", ":", "mountpoint", "findmnt"}
    | {"which", "type", "command", "hash", "whereis", "file", "id", "whoami", "ln", "gln", "export", "unset"}
    | {"find", "gfind", "fd", "fdfind", "locate", "plocate", "mlocate", "open", "xdg-open", "gio", "code", "cursor"}
)

# Environment variables whose value is the tree a program reads whole (`GIT_WORK_TREE=~ git add -A`);
# any other assignment of a folder names it only (Command.swept).
WORK_TREE_VARIABLES = frozenset({"GIT_WORK_TREE"})

# Copiers whose destination (Command.writes) is only written: a file copied, moved, linked or
# installed into a home reads nothing there (its destination is no Command.swept).
INTO_COPIERS = frozenset(
    {"cp", "gcp", "mv", "gmv", "install", "ginstall", "ln", "gln", "copy-item", "cpi", "move-item", "mi", "ditto"}
)

# Round fourteen (set L, cc-home-sweep-git-add, cc-home-served): invocations that take the whole
# working directory with no operand naming it - git's add -A, commit -a and stash of untracked
# files, a static file server started with no folder option: the cwd (`.`) is their operand, as
# it is a tree search's (Command.swept only). Each entry: the long options and the short letters
# (in a cluster) that make the invocation take the tree (none: it always does), and the options
# that name the folder instead.
WHOLE_CWD_INVOCATIONS: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str]]] = {
    "git add": (_set("--all", "--update", "--no-ignore-removal"), _set("A", "u"), frozenset()),
    "git commit": (_set("--all"), _set("a"), frozenset()),
    "git stash": (_set("--all", "--include-untracked"), _set("a", "u"), frozenset()),
    "python -m http.server": (frozenset(), frozenset(), _set("-d", "--directory")),
    "php -S": (frozenset(), frozenset(), _set("-t", "--docroot")),
}
