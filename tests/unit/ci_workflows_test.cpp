// The CI examples in ci/github parse as YAML and hang together: every
// workflow has triggers and jobs, the PR-comment workflow follows the
// presubmit by its name, the composite actions are well formed, and the
// presubmit gates perfgate with its own pull-request gate. Parsed by python3-yaml (ci/install-deps.sh).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "harness/environment.h"
#include "harness/paths.h"

namespace perfgate {
namespace {

using testing::RunningInCi;

const char* kCheck = R"py(
import glob, sys, yaml
workflows = {}
for path in sorted(glob.glob(sys.argv[1] + '/ci/github/*.yml') + glob.glob(sys.argv[1] + '/ci/project/github/*.yml')):
    with open(path) as f:
        doc = yaml.safe_load(f)
    # YAML 1.1 reads the key "on" as true.
    triggers = doc.get('on', doc.get(True))
    assert triggers, path + ': no triggers'
    assert doc.get('jobs'), path + ': no jobs'
    for name, job in doc['jobs'].items():
        assert job.get('runs-on') and job.get('steps'), path + ': job ' + name + ' lacks runs-on or steps'
    workflows[doc['name']] = triggers
followed = workflows['perfgate PR comment']['workflow_run']['workflows']
assert all(w in workflows for w in followed), 'workflow_run follows an unknown workflow: ' + str(followed)
# Composite actions: every shell step names its shell, every input it uses is declared.
import re
for path in sorted(glob.glob(sys.argv[1] + '/ci/github/*/action.yml')):
    with open(path) as f:
        action = yaml.safe_load(f)
    assert action['runs']['using'] == 'composite', path + ': not a composite action'
    for step in action['runs']['steps']:
        assert 'uses' in step or step.get('shell'), path + ': a run step without shell'
    used = set(re.findall(r'inputs\.([a-z0-9-]+)', open(path).read()))
    assert used <= set(action['inputs']), path + ': undeclared inputs ' + str(used - set(action['inputs']))
# perfgate's own presubmit gates itself with that action.
steps = [s for job in yaml.safe_load(open(sys.argv[1] + '/ci/project/github/presubmit.yml'))['jobs'].values() for s in job['steps']]
assert any(s.get('uses') == './ci/github/pr-gate' for s in steps), 'presubmit does not use the pull-request gate'
print(len(workflows))
)py";

TEST(CiWorkflows, ParseAsYamlAndReferToEachOther) {
  if (std::system("/usr/bin/python3 -c 'import yaml' 2>/dev/null") != 0) {
    if (RunningInCi()) FAIL() << "python3-yaml is missing (CI=true)";
    GTEST_SKIP() << "python3-yaml is not installed";
  }
  std::string command = "/usr/bin/python3 -c \"$PERFGATE_YAML_CHECK\" '" + std::string(PERFGATE_SOURCE_DIR) + "' 2>&1";
  setenv("PERFGATE_YAML_CHECK", kCheck, 1);
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
  int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_EQ(output, "5\n");
}

}  // namespace
}  // namespace perfgate
