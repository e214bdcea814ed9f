#!/usr/bin/python3
"""Reads a junit.xml the way the CI tools perfgate targets do and checks it.

usage: junit_check.py JUNIT_XML TESTS FAILURES ERRORS SKIPPED

Through junitparser (what EnricoMi/publish-unit-test-result-action uses):
for <testsuites> and every <testsuite>, the tests/failures/errors/skipped
attributes equal what its testcases contain, the totals equal the expected
numbers, and (classname, name) is unique. Then what each other tool reads,
from the raw elements: see jenkins_problems, dorny_problems and
mikepenz_problems. Exit 0 when all hold; otherwise prints each problem and
exits 1. Exit 2 when junitparser is missing.
"""
import sys
import xml.etree.ElementTree as ElementTree

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


def is_seconds(text):
    try:
        return text is not None and float(text) >= 0
    except ValueError:
        return False


def jenkins_problems(root):
    """Jenkins names suites by @name and merges equal names; needs classname and name per testcase."""
    problems = []
    names = [suite.get("name") for suite in root.iter("testsuite")]
    if None in names or len(set(names)) != len(names):
        problems.append(f"jenkins: testsuite names missing or repeated: {names!r}")
    for case in root.iter("testcase"):
        if not case.get("classname") or not case.get("name"):
            problems.append(f"jenkins: testcase without classname or name: {case.attrib!r}")
        if len([c for c in case if c.tag in ("failure", "error", "skipped")]) > 1:
            problems.append(f"jenkins: testcase {case.get('name')!r} has more than one outcome; only the first counts")
    return problems


def dorny_problems(root):
    """dorny/test-reporter reads testsuites/testsuite attributes and every testcase's time."""
    problems = []
    if root.tag != "testsuites":
        problems.append(f"dorny: root is <{root.tag}>, not <testsuites>")
    for suite in root.iter("testsuite"):
        for attribute in ("name", "tests", "failures", "errors", "skipped", "time"):
            if suite.get(attribute) is None:
                problems.append(f"dorny: testsuite {suite.get('name')!r} lacks {attribute}")
        if not is_seconds(suite.get("time")):
            problems.append(f"dorny: testsuite {suite.get('name')!r} time {suite.get('time')!r} is not seconds")
    for case in root.iter("testcase"):
        if not is_seconds(case.get("time")):
            problems.append(f"dorny: testcase {case.get('name')!r} time {case.get('time')!r} is not seconds")
    return problems


def mikepenz_problems(root):
    """mikepenz/action-junit-report titles an annotation with the message and fills it with the text."""
    problems = []
    for case in root.iter("testcase"):
        for outcome in case:
            if outcome.tag not in ("failure", "error"):
                continue
            if not outcome.get("message") or "\n" in outcome.get("message"):
                problems.append(f"mikepenz: {outcome.tag} of {case.get('name')!r} needs a one-line message")
            if not (outcome.text or "").strip():
                problems.append(f"mikepenz: {outcome.tag} of {case.get('name')!r} has no detail text")
    return problems


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
    root = ElementTree.parse(path).getroot()
    problems += jenkins_problems(root) + dorny_problems(root) + mikepenz_problems(root)
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
