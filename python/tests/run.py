"""Runs the Python suite (ctest's python_tests, .ci/run): python run.py [TESTS_DIR] [pytest args].

Says what to install when pytest or numpy is missing, and fails when pytest collects nothing
(its exit 5), which would otherwise pass for a suite that silently stopped being found.
"""

import os
import sys


def main() -> int:
    missing = []
    for name in ("pytest", "numpy"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        print(
            f"the Python tests need {' and '.join(missing)}: run "
            f"`{sys.executable} -m pip install {' '.join(missing)}`",
            file=sys.stderr,
        )
        return 1
    import pytest

    args = sys.argv[1:] or [os.path.dirname(os.path.abspath(__file__))]
    # -rs: the reason of every skip (no GPU, no torch) is printed, never silent.
    rc = pytest.main(["-q", "-rs", "-p", "no:cacheprovider", *args])
    if rc == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("pytest collected no tests: the suite was not found", file=sys.stderr)
        return 1
    return int(rc)


if __name__ == "__main__":
    sys.exit(main())
