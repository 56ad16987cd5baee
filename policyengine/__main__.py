"""`python -m policyengine` runs the command line."""

import sys

from policyengine.cli.main import main

sys.exit(main())
