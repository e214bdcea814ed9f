// What the gate's steps (perfgatePrGate, perfgatePrGateMerge) do with
// ci/pr-gate.sh's exit code: the JUnit file and the out dir kept, the build
// unstable when a check failed, failed on anything else. `infra` says what
// exit 3 means for the caller.
//
//   return perfgateGateResult(out, code, 'build or infrastructure failure')
def call(String out, int code, String infra) {
  junit allowEmptyResults: true, testResults: "${out}/junit.xml"
  archiveArtifacts artifacts: "${out}/**", allowEmptyArchive: true
  if (code == 1) {
    unstable('perfgate: a check failed against the merge base')
  } else if (code != 0) {
    error("perfgate: exit ${code} (2 bad input, 3 ${infra})")
  }
  return code
}

// ci/pr-gate.sh's options, each one word for the shell.
String quote(List options) {
  return options.collect { "'" + it.toString().replace("'", "'\\''") + "'" }.join(' ')
}
