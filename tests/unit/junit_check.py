#!/usr/bin/python3
"""Reads a junit.xml the way CI plugins do (junitparser) and checks its counts.

usage: junit_check.py JUNIT_XML TESTS FAILURES ERRORS SKIPPED

Checks, for <testsuites> and every <testsuite>, that the tests/failures/errors/
skipped attributes equal what its testcases contain, that the totals equal the
expected numbers, and that (classname, name) is unique. Exit 0 when all hold;
otherwise prints each mismatch and exits 1. Exit 2 when junitparser is missing.
"""
import sys

try:
    from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite
except ImportError:
    print("junitparser is not installed for " + sys.executable)
    sys.exit(2)


def counted(cases):
    """tests, failures, errors, skipped as the testcases themselves say."""
    tally = [0, 0, 0, 0]
    for case in cases:
        tally[0] += 1
        for result in case.result:
            if isinstance(result, Failure):
                tally[1] += 1
            elif isinstance(result, Error):
                tally[2] += 1
            elif isinstance(result, Skipped):
                tally[3] += 1
    return tally


def declared(element):
    return [int(element.tests or 0), int(element.failures or 0), int(element.errors or 0), int(element.skipped or 0)]


def main(argv):
    path, expected = argv[1], [int(n) for n in argv[2:6]]
    xml = JUnitXml.fromfile(path)
    suites = [xml] if isinstance(xml, TestSuite) else list(xml)
    problems = []
    total = [0, 0, 0, 0]
    seen = set()
    for suite in suites:
        cases = list(suite)
        own = counted(cases)
        if declared(suite) != own:
            problems.append(f"testsuite {suite.name!r} declares {declared(suite)}, its testcases hold {own}")
        total = [a + b for a, b in zip(total, own)]
        for case in cases:
            key = (case.classname, case.name)
            if key in seen:
                problems.append(f"duplicate testcase {key!r}")
            seen.add(key)
    if not isinstance(xml, TestSuite) and declared(xml) != total:
        problems.append(f"testsuites declares {declared(xml)}, its testcases hold {total}")
    if total != expected:
        problems.append(f"expected {expected} (tests, failures, errors, skipped), found {total}")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 6:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv))
