#!/usr/bin/python3
"""The Jenkinsfile check passes the shipped Jenkinsfile and fails broken copies
of it; every other Jenkinsfile named passes too.

Usage: check_jenkinsfile_test.py JENKINSFILE [OTHER_JENKINSFILE...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_jenkinsfile  # noqa: E402

# (what to change, into what, a word the complaint must hold)
BREAKAGES = [
    ("steps { script { runShard(1, SHARDS) } }", "steps { script { runShard(1, SHARDS) }", "never closed"),
    ("'Shard 2'", "'Shard 2", "unterminated string"),
    ("runShard(2, SHARDS)", "runShard(2, SHARDS]", "closes the"),
    ("--out shard-${shard}\")", "--out shard-${shard\")", "unterminated"),
    ("      post {\n        always {\n          junit testResults: 'perfgate-out/junit.xml', allowEmptyResults: false",
     "      post {\n        sometimes {\n          junit testResults: 'perfgate-out/junit.xml', allowEmptyResults: false",
     "unknown post condition"),
    ("stage('Paired night') {\n      when {", "stage('Paired night') {\n      whenever {", "unknown section in a stage"),
    ("    stage('Merge') {", "    stag('Merge') {", "only stage blocks"),
    ("        stage('Shard 2') {\n          agent { label 'perfgate' }\n          steps",
     "        stage('Shard 2') {\n          agent { label 'perfgate' }\n          step", "exactly one of"),
    ("parallel {\n        stage('Shard 1') {", "parallel {\n        steps {}\n        stage('Shard 1') {",
     "only stage blocks"),
    ("  agent none\n  parameters", "  parameters", "one agent section"),
    ("  options {", "  settings {", "unknown pipeline section"),
    ("pipeline {", "pipelines {", "one pipeline"),
    ("stage('Verdict') {", "stage {", "needs a name"),
]


def main(path, others):
    with open(path, encoding='utf-8') as f:
        good = f.read()
    failures = []
    problems = check_jenkinsfile.check(good)
    if problems:
        failures.append('the shipped Jenkinsfile fails: %s' % problems)
    for other in others:
        with open(other, encoding='utf-8') as f:
            problems = check_jenkinsfile.check(f.read())
        if problems:
            failures.append('%s fails: %s' % (other, problems))
    for old, new, expected in BREAKAGES:
        if good.count(old) != 1:
            failures.append('the Jenkinsfile no longer holds %r once; update this test' % old)
            continue
        problems = check_jenkinsfile.check(good.replace(old, new))
        if not any(expected in message for _, message in problems):
            failures.append('%r -> %r: expected a complaint with %r, got %s' % (old, new, expected, problems))
    for f in failures:
        print(f)
    if not failures:
        print('Jenkinsfile check: shipped files pass (%d), %d broken copies fail' % (1 + len(others), len(BREAKAGES)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2:]))
