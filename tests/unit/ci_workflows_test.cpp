// The CI examples in ci/github parse as YAML and hang together: every
// workflow has triggers and jobs, and the PR-comment workflow follows the
// presubmit by its name. Parsed by python3-yaml (ci/install-deps.sh).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "harness/environment.h"

namespace perfgate {
namespace {

using testing::RunningInCi;

const char* kCheck = R"py(
import glob, sys, yaml
workflows = {}
for path in sorted(glob.glob(sys.argv[1] + '/ci/github/*.yml')):
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
  EXPECT_EQ(output, "4\n");
}

}  // namespace
}  // namespace perfgate
