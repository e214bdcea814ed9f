// The CPU's name in a run's fingerprint, from /proc/cpuinfo as x86 and
// arm64 kernels print it.
#include "run/environment.h"

#include <gtest/gtest.h>

#include <string>

namespace perfgate {
namespace {

// One processor's block of an arm64 /proc/cpuinfo.
std::string ArmCore(int n, const std::string& implementer, const std::string& part) {
  return "processor\t: " + std::to_string(n) +
         "\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: " + implementer +
         "\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: " + part + "\nCPU revision\t: 3\n\n";
}

TEST(CpuModel, X86NamesItsCpuAndTheBoardIsNotAdded) {
  const std::string cpuinfo =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n"
      "model name\t: AMD EPYC 7B13\nstepping\t: 0\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
  EXPECT_EQ(CpuModelFrom(cpuinfo, "Google Compute Engine"), "AMD EPYC 7B13");
}

TEST(CpuModel, AnArmBoardIsNamedWithItsCores) {
  std::string cpuinfo;
  for (int i = 0; i < 4; ++i) cpuinfo += ArmCore(i, "0x41", "0xd08");
  EXPECT_EQ(CpuModelFrom(cpuinfo, "Raspberry Pi 4 Model B Rev 1.4"), "Raspberry Pi 4 Model B Rev 1.4: ARM Cortex-A72");
  EXPECT_EQ(CpuModelFrom(cpuinfo, ""), "ARM Cortex-A72");
}

TEST(CpuModel, APhonesMixedCoresAreCountedByKind) {
  std::string cpuinfo;
  for (int i = 0; i < 4; ++i) cpuinfo += ArmCore(i, "0x41", "0xd05");
  for (int i = 4; i < 7; ++i) cpuinfo += ArmCore(i, "0x41", "0xd41");
  cpuinfo += ArmCore(7, "0x41", "0xd44");
  EXPECT_EQ(CpuModelFrom(cpuinfo, ""), "ARM Cortex-A55 x4 + ARM Cortex-A78 x3 + ARM Cortex-X1 x1");
}

TEST(CpuModel, CoresOfOtherImplementersAndUnknownPartsKeepTheirCodes) {
  EXPECT_EQ(CpuModelFrom(ArmCore(0, "0x51", "0x805"), ""), "Qualcomm part 0x805");
  EXPECT_EQ(CpuModelFrom(ArmCore(0, "0x41", "0xfff"), ""), "ARM part 0xfff");
  EXPECT_EQ(CpuModelFrom(ArmCore(0, "0x00", "0x051"), "linux,dummy-virt"),
            "linux,dummy-virt: implementer 0x00 part 0x051");
}

TEST(CpuModel, AnOldArmKernelsHardwareLineNamesTheSoc) {
  const std::string cpuinfo = ArmCore(0, "0x41", "0xd03") + "Hardware\t: Qualcomm Technologies, Inc MSM8953\n";
  EXPECT_EQ(CpuModelFrom(cpuinfo, ""), "Qualcomm Technologies, Inc MSM8953: ARM Cortex-A53");
}

TEST(CpuModel, NothingKnownIsUnknown) {
  EXPECT_EQ(CpuModelFrom("", ""), "unknown");
  EXPECT_EQ(CpuModelFrom("processor\t: 0\nmodel name:\n", ""), "unknown");
}

}  // namespace
}  // namespace perfgate
