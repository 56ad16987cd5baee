"""The bundle verb: build, sign and verify signed pack bundles (docs/bundles.md)."""

from __future__ import annotations

import argparse
from typing import TextIO

from policyengine.cli.common import EXIT_OK, resolve_pack

NAME = "bundle"
HELP = "build, sign and verify signed pack bundles"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The bundle verb's actions: build, keygen, sign, verify."""
    actions = parser.add_subparsers(dest="bundle_action", metavar="ACTION", required=True)
    build = actions.add_parser("build", help="write a pack folder as a deterministic .tar.gz bundle")
    build.add_argument(
        "folder", type=resolve_pack, metavar="PACK", help="the pack folder (holding pack.yaml) or a shipped name"
    )
    build.add_argument("-o", "--output", metavar="PACK.tar.gz", required=True, help="the bundle to write")
    keygen = actions.add_parser("keygen", help="create an Ed25519 key pair (PEM; the private key 0600)")
    keygen.add_argument("--private", metavar="KEY", required=True, help="the private key to create")
    keygen.add_argument("--public", metavar="KEY.pub", required=True, help="the public key to create")
    sign = actions.add_parser("sign", help="sign a bundle: writes BUNDLE.sig next to it")
    sign.add_argument("bundle", metavar="PACK.tar.gz")
    sign.add_argument("--key", metavar="KEY", required=True, help="the PEM private key")
    verify = actions.add_parser("verify", help="verify a bundle's signature, contents and pack digest")
    verify.add_argument("bundle", metavar="PACK.tar.gz")
    verify.add_argument("--public-key", metavar="KEY.pub", required=True, help="the PEM public key")
    verify.add_argument("--signature", metavar="SIG", help="the signature file (default: PACK.tar.gz.sig)")
    for action in (build, keygen, sign, verify):
        # As on every verb: --color is accepted after the action too; SUPPRESS keeps the top-level default.
        action.add_argument("--color", choices=["auto", "always", "never"], default=argparse.SUPPRESS)


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`bundle ACTION`: a BundleError (exit 2, with its reason) leaves nothing written or installed."""
    # cryptography loads only for this verb: every other verb, and the hook, start without it.
    from policyengine.service import bundles

    if args.bundle_action == "build":
        manifest = bundles.build_bundle(args.folder, args.output)
        print(f"built {args.output}: {manifest.name} {manifest.version} {manifest.digest}", file=out)
        print(
            f"  {len(manifest.files)} file(s); sign it with `policyengine bundle sign {args.output} --key KEY`",
            file=out,
        )
    elif args.bundle_action == "keygen":
        bundles.generate_keys(args.private, args.public)
        print(f"wrote {args.private} (private, 0600: keep it secret) and {args.public} (public)", file=out)
    elif args.bundle_action == "sign":
        signature = bundles.sign_bundle(args.bundle, args.key)
        print(f"signed {args.bundle}: {signature}", file=out)
    else:
        manifest = bundles.verify_bundle(args.bundle, args.public_key, args.signature)
        print(f"ok: {args.bundle}", file=out)
        print(f"name: {manifest.name}", file=out)
        print(f"version: {manifest.version}", file=out)
        print(f"digest: {manifest.digest}", file=out)
    return EXIT_OK
