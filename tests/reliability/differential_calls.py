#!/usr/bin/env python3
"""The differential harness (tests/apps/differential.py) for programs that print one line per call.

  differential_calls.py <the arguments of differential.py>

tests/apps/differential.py accepts only `checksum <name> <hex>` lines and PASS on stdout. The
bad-input table (bad_input.c) prints `<call name> <error code>` for each invalid call, and those
lines are what must match bare and under coex. This wrapper widens the accepted line grammar to
include them and then runs differential.py's main() unchanged: same modes, same report checks,
same failure messages (docs/reliability.md).
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "apps"))
import differential  # noqa: E402  (needs the path above)

differential.OUTPUT_LINE = re.compile(rb"^(checksum [A-Za-z0-9_]+ [0-9a-f]{16}|[a-z][a-z0-9_]* -?[0-9]+)$")

if __name__ == "__main__":
    sys.exit(differential.main(sys.argv[1:]))
