// perfgate's pull-request gate as a Jenkins shared-library step, for any
// repository built by a multibranch pipeline:
//
//   @Library('perfgate') _
//   perfgatePrGate(suite: 'perf/suite.json', buildCommand: 'make -j"$(nproc)"')
//
// On a change request it builds the merge base with the target branch and
// the head, runs `perfgate ab` on the suite with both build directories, and
// publishes the JUnit results and the out dir. The logic is ci/pr-gate.sh of
// the library's own checkout, which runs the same way outside Jenkins.
// Parameters: suite, buildCommand (required); buildDir ('.'), dirVariable
// ('BUILD_DIR'), repetitions, strict (false), user ('nobody'), perfgate
// (path of the binary; default the installed package's), accept (a list of
// 'SCENARIO/CHECK <= +N%: reason': regressions accepted within a bound for
// this run; commits say the same with a Perfgate-Accept trailer), instrument
// (false: count instructions under Valgrind in every scenario that can, for
// a suite that does not say "instrument": true), outDir ('perfgate-out'; one
// per suite when a build gates several), shard ('K/N': run only that shard
// of the suite, each check decided as one of the whole suite's family; its
// regressions are left to perfgatePrGateMerge, see ci/jenkins/Jenkinsfile.sharded).
def call(Map args) {
  if (!args.suite || !args.buildCommand) {
    error('perfgatePrGate: suite and buildCommand are required')
  }
  if (!env.CHANGE_ID) {
    echo 'perfgatePrGate: not a change request; nothing to gate'
    return 0
  }
  // The script comes from the library, not from the change being gated.
  writeFile file: '.perfgate-pr-gate.sh', text: libraryResource('perfgate/pr-gate.sh')
  String out = args.outDir ?: 'perfgate-out'
  if (!(out ==~ /[A-Za-z0-9._-]+/) || out.contains('..')) {
    error("perfgatePrGate: outDir '${out}' must be a plain directory name")
  }
  List<String> options = [
    '--suite', args.suite,
    '--build-cmd', args.buildCommand,
    '--build-dir', args.buildDir ?: '.',
    '--dir-var', args.dirVariable ?: 'BUILD_DIR',
    '--user', args.user ?: 'nobody',
    '--base', "origin/${env.CHANGE_TARGET}",
    '--head', 'HEAD',
    '--out', out,
  ]
  if (args.repetitions) {
    options += ['--reps', args.repetitions.toString()]
  }
  if (args.strict) {
    options += ['--strict']
  }
  if (args.instrument) {
    options += ['--instrument']
  }
  if (args.shard) {
    options += ['--shard', args.shard.toString()]
  }
  if (args.perfgate) {
    options += ['--perfgate', args.perfgate]
  }
  for (def accepted in (args.accept ?: [])) {
    options += ['--accept', accepted.toString()]
  }
  String quoted = perfgateGateResult.quote(options)
  sh "git fetch --no-tags origin '+refs/heads/${env.CHANGE_TARGET}:refs/remotes/origin/${env.CHANGE_TARGET}'"
  int code = sh(returnStatus: true, script: "sudo bash .perfgate-pr-gate.sh ${quoted}")
  sh "sudo chown -R \"\$(id -u):\$(id -g)\" '${out}' || true"
  if (args.shard) {
    // The merge decides: a shard stops the build only on bad input or infrastructure.
    if (code != 0 && code != 1) {
      error("perfgate: shard ${args.shard} exited ${code} (2 bad input, 3 build or infrastructure failure)")
    }
    return code
  }
  return perfgateGateResult(out, code, 'build or infrastructure failure')
}
