"""What a fresh interpreter has imported after some import statements: the import-cost
and dependency-rule tests look at that, not at timings."""

from __future__ import annotations

import json
import subprocess
import sys


def modules_after(imports: str) -> set[str]:
    """The names in `sys.modules` of a new interpreter that ran `imports`."""
    code = f"{imports}\nimport json as _j, sys as _s\nprint(_j.dumps(sorted(_s.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))
