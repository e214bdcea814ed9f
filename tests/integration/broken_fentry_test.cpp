// A probe whose fentry program is broken on purpose (it misreads the syscall
// number), tested like every probe: forced to fentry, it must count the
// child's getppid calls. Instantiated only where fentry works
// (PERFGATE_TEST_FUNCTION_ATTACH=1 or fentry), and left out of the virtual machine's
// probe tests: tests/vm/harness-test.sh runs it there and expects it to fail,
// which shows that those tests catch a broken fentry program.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <algorithm>
#include <vector>

#include "broken_fentry.skel.h"
#include "harness/environment.h"
#include "harness/probe.h"
#include "probes/hooks.h"
#include "probes/skeleton.h"

namespace perfgate {
namespace {

std::vector<AttachType> FentryWhereTested() {
  std::vector<AttachType> types = TestedFunctionAttachTypes();
  types.erase(std::remove_if(types.begin(), types.end(), [](AttachType t) { return t != AttachType::kFentry; }),
              types.end());
  return types;
}

class DeliberatelyBrokenFentry : public ::testing::TestWithParam<AttachType> {};

TEST_P(DeliberatelyBrokenFentry, CountsEveryGetppidOfTheChild) {
  PERFGATE_REQUIRE_ROOT();
  ProbeOptions options;
  options.allowed_attach_types = {GetParam()};
  HookPlan plan("broken_fentry", {TracepointHook("raw_syscalls", "sys_enter", "broken_enter", {"x64_sys_call", "invoke_syscall"})},
                options);
  HeldChild child([] { CallGetppid(kGetppidCalls); });
  AttachedSkeleton<broken_fentry_bpf> skeleton({broken_fentry_bpf__open, broken_fentry_bpf__destroy});
  skeleton.Load(plan, [&](broken_fentry_bpf& skel) {
    skel.rodata->target_tgid = static_cast<uint32_t>(child.pid());
    skel.rodata->getppid_nr = SYS_getppid;
  });
  EXPECT_EQ(plan.Choices().front().attach_type, ToString(GetParam()));
  ASSERT_TRUE(child.RunToCompletion());
  EXPECT_EQ(skeleton.get()->bss->getppid_calls, static_cast<uint64_t>(kGetppidCalls));
}

INSTANTIATE_TEST_SUITE_P(FunctionAttachTypes, DeliberatelyBrokenFentry, ::testing::ValuesIn(FentryWhereTested()),
                         AttachTypeName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DeliberatelyBrokenFentry);

}  // namespace
}  // namespace perfgate
