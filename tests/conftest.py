"""Fixtures shared by several test modules; helpers that tests import by name live in support.py.

Session-scoped, so the expensive setup happens once per run:

  bfcl_catalog  the vendored BFCL tool catalog (examples/bfcl-tools.jsonl) as {name: ToolDefinition};
                definitions are frozen, so every module can share them.
  bfcl_calls    the vendored recorded BFCL calls (examples/bfcl-calls.jsonl), in file order; shared,
                so copy a call's arguments before changing them.

The suite, and every process it starts, keeps the compiled-pack cache in a folder of its own and
starts no warm hook helper (tests of the helper turn it on for themselves): a test run leaves
nothing in the user's cache and no process behind.

Under PYTHONDONTWRITEBYTECODE the suite still keeps its bytecode, in a folder of the temporary
directory (sys.pycache_prefix), never beside the sources: otherwise every run, and every xdist
worker, compiles the package from source and rewrites the asserts of ~110 test modules again
(~10 s of each worker's collection).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any

if sys.dont_write_bytecode:
    # Set before the package and the test modules are imported: imports, and pytest's assert
    # rewriting, follow both settings.
    sys.pycache_prefix = os.path.join(tempfile.gettempdir(), "policyengine-test-pycache")
    sys.dont_write_bytecode = False

import pytest
from hypothesis import settings

from policyengine import ToolDefinition
from policyengine.tools.catalog import load_catalog
from support import BFCL_CALLS, BFCL_TOOLS

os.environ["POLICYENGINE_CACHE"] = tempfile.mkdtemp(prefix="policyengine-test-cache-")
os.environ["POLICYENGINE_HOOK_HELPER"] = "off"

# In CI every property test runs the same examples each time (derandomized): a gate must not pass or
# fail by luck. Local runs keep exploring new examples, which is how such tests find new cases.
if os.environ.get("CI"):
    settings.register_profile("ci", derandomize=True)
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def bfcl_catalog() -> dict[str, ToolDefinition]:
    """The BFCL corpus catalog, loaded once."""
    return load_catalog(BFCL_TOOLS)


@pytest.fixture(scope="session")
def bfcl_calls() -> tuple[dict[str, Any], ...]:
    """The recorded BFCL calls, read once."""
    return tuple(json.loads(line) for line in BFCL_CALLS.read_text("utf-8").splitlines() if line.strip())
