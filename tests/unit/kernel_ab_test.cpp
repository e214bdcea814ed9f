// The kernel A/B's boots (pipeline/kernel_ab.h): their ABBA order, the
// sides' boots joined into runs whose repetitions pair within a boot pair,
// and what a kernel and its modules must be before anything boots
// (target/kernel_vm.h).
#include "pipeline/kernel_ab.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "target/kernel_vm.h"

namespace perfgate {
namespace {

TEST(KernelAb, BootsAlternateAbba) {
  EXPECT_EQ(BootOrder(1), (std::vector<bool>{false, true}));
  EXPECT_EQ(BootOrder(2), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(BootOrder(3), (std::vector<bool>{false, true, true, false, false, true}));
}

Repetition Rep(int index, double wall_ms, bool warmup = false) {
  Repetition r;
  r.index = index;
  r.warmup = warmup;
  r.metrics[kWorkloadWallTime] = ScalarMetric(kWorkloadWallTime, wall_ms, "ms");
  return r;
}

RunResults Boot(const std::string& kernel, std::vector<Repetition> reps, const std::string& error = "") {
  RunResults r;
  r.environment.kernel = kernel;
  ScenarioResult s;
  s.name = "smoke";
  s.repetitions = std::move(reps);
  s.error = error;
  s.duration_s = 2;
  r.scenarios.push_back(s);
  return r;
}

TEST(KernelAb, RepetitionsPairWithinTheirBootPair) {
  std::vector<BootPair> pairs = {
      {Boot("6.1-a", {Rep(0, 1, true), Rep(1, 10), Rep(2, 11)}),
       Boot("6.1-b", {Rep(0, 1, true), Rep(1, 20), Rep(2, 21)})},
      {Boot("6.1-a", {Rep(0, 1, true), Rep(1, 12), Rep(2, 13)}),
       Boot("6.1-b", {Rep(0, 1, true), Rep(1, 22), Rep(2, 23)})},
  };
  const auto [baseline, candidate] = JoinBootPairs(pairs);
  ASSERT_EQ(baseline.scenarios.size(), 1u);
  ASSERT_EQ(candidate.scenarios.size(), 1u);
  const auto& b = baseline.scenarios[0].repetitions;
  const auto& c = candidate.scenarios[0].repetitions;
  ASSERT_EQ(b.size(), 6u);
  ASSERT_EQ(c.size(), 6u);
  for (size_t i = 0; i < b.size(); ++i) {
    // The same index on both sides: a pair of one boot pair.
    EXPECT_EQ(b[i].index, c[i].index) << i;
    EXPECT_EQ(c[i].metrics.at(kWorkloadWallTime).value - b[i].metrics.at(kWorkloadWallTime).value, b[i].warmup ? 0 : 10)
        << i;
  }
  // Two boot pairs never share an index.
  EXPECT_NE(b[1].index, b[4].index);
  EXPECT_EQ(baseline.environment.kernel, "6.1-a");
  EXPECT_EQ(candidate.environment.kernel, "6.1-b");
  EXPECT_DOUBLE_EQ(candidate.scenarios[0].duration_s, 4);
}

TEST(KernelAb, AScenarioThatFailedInOneBootCarriesItsError) {
  std::vector<BootPair> pairs = {
      {Boot("a", {Rep(1, 10)}), Boot("b", {Rep(1, 20)})},
      {Boot("a", {Rep(1, 10)}), Boot("b", {}, "workload exited 1")},
  };
  const auto [baseline, candidate] = JoinBootPairs(pairs);
  EXPECT_EQ(baseline.scenarios[0].error, "");
  EXPECT_EQ(candidate.scenarios[0].error, "boot pair 2: workload exited 1");
}

TEST(KernelVm, AMissingModuleOrKernelFileIsBadInputNamingTheOption) {
  const std::string dir = testing::TempDir();
  VmSettings vm;
  vm.boot_script = dir + "/boot-vm.sh";
  std::ofstream(vm.boot_script) << "#!/bin/sh\n";
  std::ofstream(dir + "/planted.ko") << "";
  KernelSide side;
  side.kernel = "linux-image-cloud-amd64";
  side.module_files = {dir + "/absent.ko"};
  auto message = [&](const KernelSide& s) -> std::string {
    try {
      CheckVmPrerequisites(s, vm, "--candidate-kernel");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
      return e.what();
    }
    return "";
  };
  // Without QEMU on PATH the missing tool is said first (an InfraError).
  if (system("command -v qemu-system-x86_64 > /dev/null 2>&1") != 0) GTEST_SKIP() << "no QEMU here";
  EXPECT_NE(message(side).find("absent.ko: no such file"), std::string::npos);
  side.module_files = {dir + "/planted.ko delay_us=10"};
  EXPECT_EQ(message(side), "");
  side.module_files = {dir + "/planted.ko delay_us=$(reboot)"};
  EXPECT_NE(message(side).find("parameters are NAME=VALUE"), std::string::npos);
  side.module_files = {};
  side.kernel = dir + "/absent/bzImage";
  EXPECT_NE(message(side).find("no such kernel image or package"), std::string::npos);
}

TEST(KernelVm, AnExecutablesArchitectureIsReadFromItsElfHeader) {
  EXPECT_EQ(ElfVmArch("/proc/self/exe"), HostVmArch());
  const std::string dir = testing::TempDir();
  // The ELF header of an aarch64 executable, as far as e_machine (183).
  std::string arm64(20, '\0');
  arm64.replace(0, 4,
                "\x7f"
                "ELF");
  arm64[4] = 2;   // 64-bit
  arm64[5] = 1;   // little-endian
  arm64[16] = 3;  // ET_DYN
  arm64[18] = static_cast<char>(183);
  std::ofstream(dir + "/arm64-perfgate", std::ios::binary) << arm64;
  EXPECT_EQ(ElfVmArch(dir + "/arm64-perfgate"), "arm64");
  std::ofstream(dir + "/script") << "#!/bin/sh\necho not an ELF file\n";
  EXPECT_EQ(ElfVmArch(dir + "/script"), "");
  EXPECT_EQ(ElfVmArch(dir + "/absent"), "");
}

}  // namespace
}  // namespace perfgate
