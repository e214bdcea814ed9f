// The sharded pull-request gate's last step: joins the out dirs of the
// perfgatePrGate(shard: 'K/N') steps (unstashed into this workspace) into
// one verdict, JUnit file and report (ci/pr-gate.sh --merge-shards). Each
// shard built and ran the merge base and the head interleaved on its own
// agent and decided its checks as members of the whole suite's family. A
// shard whose out dir holds no results.json (it crashed, or its agent was
// lost) makes the gate fail with exit 3, never pass with fewer checks.
//
//   perfgatePrGateMerge(shards: 2, dirs: ['shard-1/perfgate-out', 'shard-2/perfgate-out'])
//
// Parameters: shards (required), dirs (the shards' out dirs; default
// 'shard-K/perfgate-out' for K = 1..shards), outDir ('perfgate-out'),
// perfgate (path of the binary; default the installed package's).
def call(Map args) {
  int shards = (args.shards ?: 0) as int
  if (shards < 1) {
    error('perfgatePrGateMerge: shards is required')
  }
  String out = args.outDir ?: 'perfgate-out'
  if (!(out ==~ /[A-Za-z0-9._-]+/) || out.contains('..')) {
    error("perfgatePrGateMerge: outDir '${out}' must be a plain directory name")
  }
  List<String> dirs = args.dirs ?: (1..shards).collect { "shard-${it}/perfgate-out".toString() }
  writeFile file: '.perfgate-pr-gate.sh', text: libraryResource('perfgate/pr-gate.sh')
  List<String> options = ['--merge-shards', shards.toString(), '--out', out]
  if (args.perfgate) {
    options += ['--perfgate', args.perfgate]
  }
  options += dirs
  String quoted = perfgateGateResult.quote(options)
  int code = sh(returnStatus: true, script: "bash .perfgate-pr-gate.sh ${quoted}")
  return perfgateGateResult(out, code, 'a shard did not run or an infrastructure failure')
}
