#!/usr/bin/env python3
"""What a test run skipped, and why: the summary `make test` prints after ctest.

    tools/test_summary.py CTEST_JUNIT [PYTEST_JUNIT]

CTEST_JUNIT is ctest's `--output-junit` file; PYTEST_JUNIT the one pytest writes for the
python_tests entry (python/CMakeLists.txt), read only when that entry ran in this ctest run.
ctest's own output says "100% tests passed" and names the skipped entries without their
reasons; this lists each skipped entry with the reason its output gives, the tests that a
passing test binary skipped inside it (the harness's "[ SKIP ] name: reason" lines), and each
skipped Python test with pytest's reason, grouped by reason. Standard library only: it runs
with any python3.

Exit status: 0 when it could read the files (whatever the tests did), 2 when it could not.
"""

import os
import re
import sys
import textwrap
import xml.etree.ElementTree as ET
from datetime import datetime

# ctest's <skipped message> for a test that skipped itself (SKIP_RETURN_CODE,
# SKIP_REGULAR_EXPRESSION); any other message ("Unable to find executable", ...) is a test
# that could not run, which ctest counts as failed.
SKIPPED_BY_TEST = {"SKIP_RETURN_CODE=77", "SKIP_REGULAR_EXPRESSION_MATCHED"}
HARNESS_SKIP = re.compile(r"^\[ SKIP \] (\S+): (.*)$")  # tests/harness/harness_test.c


def skip_reason(output: str, fallback: str):
    """Why an entry skipped, from its output, and how many of its tests that covers: the
    harness's reasons, else the last line that mentions a skip (sp_test_unavailable's
    "skipped: ...", the examples' "...: skipped, ..."), else the last line it printed, else
    ctest's message."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    harness = [m.group(2) for m in map(HARNESS_SKIP.match, lines) if m]
    if len(set(harness)) == 1:
        return harness[0], plural(len(harness), "test")
    if harness:
        return "; ".join(f"{r} ({plural(n, 'test')})" for r, n in counted(harness)), ""
    for line in reversed(lines):
        if "skip" in line.lower():
            return re.sub(r"^skipped: ", "", line), ""
    return (lines[-1] if lines else fallback), ""


def counted(items: list) -> list:
    """(item, count) for each distinct item, most frequent first, else in order of appearance."""
    counts = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def print_by_reason(by_reason: dict) -> None:
    """Each reason once, most frequent first, with what it covers wrapped under it:
    by_reason maps a reason to {group: [names]} (group "" for names without one)."""
    def size(groups):
        return sum(map(len, groups.values()))
    for reason, groups in sorted(by_reason.items(), key=lambda kv: -size(kv[1])):
        print(f"  {size(groups)} skipped: {reason}")
        for group, names in groups.items():
            first = f"    {group}: " if group else "    "
            # lines break between names only (a no-break space inside each while wrapping)
            text = textwrap.fill(", ".join(n.replace(" ", "\xa0") for n in names), width=100,
                                 initial_indent=first, subsequent_indent=" " * 8,
                                 break_on_hyphens=False)
            print(text.replace("\xa0", " "))


def read_xml(path: str) -> ET.Element:
    try:
        return ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        print(f"test_summary: cannot read {path}: {exc}", file=sys.stderr)
        sys.exit(2)


def testcases(root: ET.Element) -> list:
    # ctest writes one <testsuite>; pytest a <testsuites> around one or more
    return list(root.iter("testcase"))


def ctest_summary(path: str):
    """Prints the ctest part; returns (the run's start time or None, python_tests' status)."""
    root = read_xml(path)
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    cases = testcases(root)
    if not cases:
        print(f"test_summary: {path} lists no tests", file=sys.stderr)
        sys.exit(2)
    skipped, not_run, disabled, inner = [], [], [], []
    passed = failed = 0
    python_status = None
    for case in cases:
        name, status = case.get("name"), case.get("status")
        output = case.findtext("system-out") or ""
        if name == "python_tests":
            python_status = status
        skip = case.find("skipped")
        if status == "disabled":
            disabled.append(name)
        elif skip is not None and skip.get("message") in SKIPPED_BY_TEST:
            reason, detail = skip_reason(output, skip.get("message"))
            skipped.append((name + (f" ({detail})" if detail else ""), reason))
        elif skip is not None:
            not_run.append((name, skip.get("message") or "not run"))
        elif status == "fail":
            failed += 1
        else:
            passed += 1
            within = [m.groups() for m in map(HARNESS_SKIP.match, output.splitlines()) if m]
            if within:
                inner.append((name, within))
    counts = [f"{passed} passed", f"{len(skipped)} skipped"]
    if failed:
        counts.append(f"{failed} failed")
    if not_run:
        counts.append(f"{len(not_run)} could not run")
    if disabled:
        counts.append(f"{len(disabled)} disabled")
    print(f"ctest: {len(cases)} entries: {', '.join(counts)}")
    by_reason = {}
    for name, reason in skipped:
        by_reason.setdefault(reason, {}).setdefault("", []).append(name)
    print_by_reason(by_reason)
    for name, reason in not_run:
        print(f"  not run: {name}: {reason}")
    for name in disabled:
        print(f"  disabled: {name}")
    if inner:
        # the tests a binary skipped while the others passed (ctest counts it passed)
        by_reason = {}
        for name, within in inner:
            for test, reason in within:
                by_reason.setdefault(reason, {}).setdefault(name, []).append(test)
        entries = "1 passing entry" if len(inner) == 1 else f"{len(inner)} passing entries"
        print(f"ctest: tests skipped inside {entries} (by entry):")
        print_by_reason(by_reason)
    started = None
    if suite is not None and suite.get("timestamp"):
        try:
            started = datetime.fromisoformat(suite.get("timestamp")).timestamp()
        except ValueError:
            pass
    return started, python_status


def pytest_summary(path: str, started, python_status) -> None:
    if python_status is None:
        return  # python_tests is not in this run (not built, or not selected)
    if python_status not in ("run", "fail"):
        print("pytest (python_tests): did not run")
        return
    if not os.path.exists(path):
        print(f"pytest (python_tests): wrote no {path}, so its skips are unknown here "
              "(its output, `ctest -V -R python_tests`, lists them after 'short test summary')")
        return
    if started is not None and os.path.getmtime(path) < started - 1:
        print(f"pytest (python_tests): {path} is older than this ctest run; not read")
        return
    cases = testcases(read_xml(path))
    by_reason = {}  # reason -> {module: [tests]}, in the suite's order
    n_skipped = 0
    for case in cases:
        skip = case.find("skipped")
        if skip is None:
            continue
        n_skipped += 1
        # classname: the module's dotted path (and class), name: the test with its parameters
        module = case.get("classname", "").split(".")
        module = ".".join(module[-1:] if not module[-1][:1].isupper() else module[-2:])
        reason = skip.get("message") or "skipped"
        by_reason.setdefault(reason, {}).setdefault(module, []).append(case.get("name"))
    print(f"pytest (python_tests): {len(cases)} tests, {n_skipped} skipped")
    print_by_reason(by_reason)


def main(argv: list) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    print("---- what was skipped, and why (tools/test_summary.py)")
    started, python_status = ctest_summary(argv[1])
    if len(argv) == 3:
        pytest_summary(argv[2], started, python_status)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
