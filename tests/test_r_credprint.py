"""Round fifteen (set N): credential printers per tool family, their quiet forms, and the hook's written files."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import paths
from policyengine.language.functions import _call_parts, _command_lines
from support import load_yaml

ROOT = Path(__file__).resolve().parent.parent


@cache
def _lists(pack: str) -> dict[str, Any]:
    lists: dict[str, Any] = load_yaml(ROOT / "policies" / pack / "lists.yaml")["lists"]
    return lists


@cache
def _compiled(pack: str, name: str) -> list[Any]:
    import re2

    return [re2.compile(p) for p in _lists(pack).get(name, [])]


def _matches(pack: str, name: str, text: str) -> bool:
    return any(p.search(text) for p in _compiled(pack, name))


def _prints(command: str, pack: str = "claude-code") -> bool:
    """Whether the rule reads the one simple command as a printer (quotes dropped, as the rule drops them)."""
    text = re.sub(r"[\\'\"]", "", command)
    if _matches(pack, "credential_printing_commands", text):
        return True
    return _matches(pack, "credential_printing_verbose", text) and not _matches(pack, "credential_printing_quiet", text)


def _line_prints(line: str) -> bool:
    """Whether any of the line's commands, as commands(@) gives them (the line, then each simple command), prints."""
    call = _call_parts({"name": "Bash", "arguments": {"command": line}, "cwd": "/home/dev/project"})
    return any(_prints(text) for text in _command_lines(call))


@pytest.mark.parametrize(
    "command",
    [
        "aws sts assume-role-with-saml --role-arn r --principal-arn p --saml-assertion x",
        "aws --profile p sts get-federation-token --name n",
        "aws kms decrypt --ciphertext-blob fileb://x",
        "aws ecr get-login --no-include-email",
        "aws ec2 create-key-pair --key-name k",
        "az ad sp create-for-rbac -n x",
        "az storage account keys renew -n acct --key primary",
        "az webapp config connection-string list -g g -n n",
        "az aks get-credentials -g g -n n -f /dev/stdout",
        "gcloud kms decrypt --key k --ciphertext-file c --plaintext-file -",
        "oci iam customer-secret-key create --user-id u --display-name d",
        "fly tokens create deploy",
        "cf oauth-token",
        "cloudflared access token --app https://a.example.com",
        "bw list items",
        "secret-tool search --all service x",
        "op item get GitHub --otp",
        "netsh wlan show profile name=x key=clear",
        "wg showconf wg0",
        "wg show wg0 private-key",
        "vault write -f auth/approle/role/ci/secret-id",
        "vault write auth/userpass/login/dev password=x",
        "kubectl get secret.v1 api-token -o jsonpath={.data}",
        "terraform output -json | jq -r .db_password.value",
        "bin/rails runner p Rails.application.credentials.stripe",
        "snyk config get api",
        "stripe config --list",
        "s3cmd --dump-config",
        "transcrypt --display",
        "supabase status",
        "helm get manifest rel",
        "microk8s config",
        "kubectl get secrets.v1. x -o yaml",
        "KUBE_EDITOR=cat kubectl edit secret x",
        "terraform state pull",
        "tofu console",
        "terraform show -json",
        "ps auxeww",
        "ps e",
        "ps -o args= e -p 1",
        "docker inspect -f {{json .Config.Env}} api",
        "docker exec api env",
        "docker compose exec web printenv",
        "systemctl show-environment",
        "launchctl getenv AWS_SECRET_ACCESS_KEY",
        "foreman run env",
        "node --env-file=.env -e console.log(process.env)",
        "direnv export json",
        "mix run -e IO.inspect(Application.get_all_env(:app))",
        "pass work/db",
        "pass github",
        "gopass -c a/b",
        "vault login -method=userpass username=u",
        "docker compose config",
        "docker-compose config --environment",
    ],
)
def test_printers_are_read_per_family(command: str) -> None:
    assert _prints(command)


@pytest.mark.parametrize(
    "command",
    [
        "aws sts get-caller-identity",
        "aws kms list-keys",
        "aws ec2 describe-key-pairs",
        "az webapp config appsettings set -g g -n n --settings A=1",
        "gcloud iam service-accounts keys create key.json --iam-account a",
        "gcloud kms keys create k --keyring r --location global --purpose encryption",
        "npm token list",
        "docker secret create s ./s.txt",
        "gh secret set NAME",
        "git commit -m fix password reset flow",
        "git commit -m add npm token create docs",
        "grep -rn token create src",
        "kubectl get pods",
        "kubectl config view --minify",
        "kubectl get deploy api -o yaml",
        "terraform plan",
        "terraform show",
        "terraform state list",
        "terraform output -json > out.json",
        "ps aux",
        "ps -ef",
        "ps -eo pid,comm",
        "ps -C sleep",
        "git commit -m update ps helper",
        "docker exec api ls",
        "docker inspect -f {{.State.Status}} api",
        "systemctl show api -p ActiveState",
        "pipenv run pytest",
        "pipenv install requests",
        "rclone config file",
        "snyk config get org",
        "dotnet user-secrets set K V",
        "rails runner puts User.count",
        "pass",
        "pass ls",
        "pass find github",
        "pass insert -m a/b",
        "pass git push",
        "vault login -no-print -method=oidc",
        "vault status",
        "docker compose config --services",
        "docker compose config -q",
        "chezmoi diff",
    ],
)
def test_look_alikes_are_no_printers(command: str) -> None:
    assert not _prints(command)


_PASS_QUIET = ["ls", "list", "find x", "search x", "init KEYID", "insert a/b", "rm a/b", "mv a b", "cp a b", "git log"]


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["pass", "gopass", "passage", "/usr/bin/pass"]),
    st.sampled_from(_PASS_QUIET),
    st.from_regex(r"[a-z]{2,8}(/[a-z0-9-]{2,8}){1,2}", fullmatch=True),
)
def test_a_quiet_form_excuses_only_its_own_command(program: str, quiet: str, entry: str) -> None:
    """A pass subcommand that prints no secret is quiet; an entry is shown; a quiet form excuses no other command."""
    assert not _prints(f"{program} {quiet}")
    assert _prints(f"{program} {entry}")
    assert _prints(f"{program} -c {entry}")
    # Each simple command of a line is read on its own: the quiet one excuses no other.
    assert _line_prints(f"{program} {quiet} && {program} {entry}")
    assert not _line_prints(f"{program} {quiet} && {program} {quiet}")


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["--services", "--volumes", "--images", "--profiles", "-q"]), st.sampled_from(["", " -f a.yml"]))
def test_compose_config_lists_names_quietly(flag: str, extra: str) -> None:
    assert not _prints(f"docker compose{extra} config {flag}")
    assert _prints(f"docker compose{extra} config")
    assert _line_prints(f"docker compose{extra} config {flag}; docker compose config")
    assert not _line_prints(f"sudo docker compose{extra} config {flag} | sort")


def test_both_packs_hold_the_round_fifteen_printers() -> None:
    """The baseline's table is kept in step with claude-code's; the quiet forms are claude-code's rule's."""
    cc = _lists("claude-code")["credential_printing_commands"]
    bl = _lists("baseline")["credential_printing_commands"]
    assert cc[-10:] == bl[-10:]
    # netsh's Wi-Fi key is claude-code's only: the baseline's labelled-line redaction hides its Key Content.
    assert {p for p in cc if p not in bl} == {p for p in cc if "netsh" in p}


@pytest.mark.parametrize(
    "path",
    [
        "/home/dev/.local/lib/python3.12/site-packages/zz.pth",
        "/home/dev/.local/lib/python3.12/site-packages/usercustomize.py",
        "/home/dev/.pyenv/versions/3.12.3/lib/python3.12/sitecustomize.py",
        "/home/dev/.pyenv/versions/3.12.3/lib/python3.12/re/__init__.py",
        "/home/dev/.local/share/uv/python/cpython-3.12.7-linux-x86_64-gnu/lib/python3.12/json/__init__.py",
        "/home/dev/miniconda3/lib/python3.12/site-packages/a.pth",
        "/opt/homebrew/Cellar/python@3.12/3.12.1/Frameworks/Python.framework/Versions/3.12/lib/python3.12/os.py",
        "/home/dev/.claude.json.backup",
        "/home/dev/.claude.json.lock",
        "/home/dev/.config/claude/settings.json",
    ],
)
def test_the_hooks_written_files(path: str) -> None:
    assert paths.path_matches(path, _lists("claude-code")["policy_written_files"])


@pytest.mark.parametrize(
    "path",
    [
        "/home/dev/project/.venv/lib/python3.12/site-packages/requests/api.py",
        "/home/dev/project/tools/usercustomize.py",
        "/home/dev/project/fixtures/claude.json",
        "/home/dev/project/docs/claude.json.md",
        "/home/dev/notes.md",
    ],
)
def test_files_no_interpreter_runs_at_start(path: str) -> None:
    assert not paths.path_matches(path, _lists("claude-code")["policy_written_files"])


@pytest.mark.parametrize(
    "command",
    [
        "chezmoi apply --force",
        "chezmoi init --apply me",
        "yadm checkout -- .",
        "rcup -f -d dotfiles",
        "./dotbot/bin/dotbot -c install.conf.yaml",
        "stow -t ~ zsh",
        "home-manager switch",
        "ansible-playbook -c local -i localhost, site.yml",
    ],
)
def test_dotfile_managers_write_the_home_folder(command: str) -> None:
    assert _matches("claude-code", "dotfile_apply_commands", command)


@pytest.mark.parametrize(
    "command", ["chezmoi diff", "yadm status", "home-manager build", "ansible-playbook -i prod site.yml"]
)
def test_read_only_dotfile_verbs(command: str) -> None:
    assert not _matches("claude-code", "dotfile_apply_commands", command)


@pytest.mark.xfail(
    strict=True,
    reason="known limit: bare `docker inspect NAME` and `systemctl show UNIT` print the environment among every "
    "other field; only a format or property that names it is read as a printer (the bare forms are everyday "
    "diagnostics, asked as unplaced programs)",
)
def test_a_bare_inspect_prints_the_environment() -> None:
    assert _prints("docker inspect api") and _prints("systemctl show api.service")


@pytest.mark.xfail(
    strict=True,
    reason="known limit: a printer whose words sit behind an option with a value before the subcommand "
    "(`databricks --profile p tokens create`) is not read by the minting grammar, which allows only "
    "`--name=value` options there so that prose after `-m` is never a subcommand",
)
def test_a_minting_verb_behind_an_option_value() -> None:
    assert _prints("databricks --profile p tokens create")


@pytest.mark.xfail(
    strict=True,
    reason="known limit: a printer whose own words are spelled so that only the shell resolves them - a program "
    "name as a glob class (`bin/[r]ails runner ...`), a pipe read on the whole line with an ANSI-C program name "
    "(`$'\\x74erraform' output -json | jq`), a Vault path reached by `cd` first - is asked, not refused: the "
    "table reads each command's words and the line's text, and these words are in neither",
)
def test_printers_spelled_for_the_shell_only() -> None:
    assert _line_prints("bin/[r]ails runner 'p Rails.application.credentials.x'")
    assert _line_prints("cd auth/userpass/login && vault write dev password=x")
