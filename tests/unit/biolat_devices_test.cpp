// Naming disks for the biolat probe's per-device metrics: the kernel's dev_t
// encoding, uevent parsing and metric-safe names, against a fake sysfs.
#include "probes/biolat_devices.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace perfgate {
namespace {

namespace fs = std::filesystem;

TEST(BiolatDevices, KernelDevIsMajorShiftedTwentyBitsOverMinor) {
  // vda on a virtio disk: 254:0; nvme0n1p3: 259:3; a minor above 255 (sd
  // beyond the 16th disk uses the extended range).
  EXPECT_EQ(KernelDev({254, 0}), 254u << 20);
  EXPECT_EQ(KernelDev({259, 3}), (259u << 20) | 3u);
  BlockDeviceNumber split = SplitKernelDev((8u << 20) | 300u);
  EXPECT_EQ(split.major, 8u);
  EXPECT_EQ(split.minor, 300u);
  BlockDeviceNumber round = SplitKernelDev(KernelDev({65, 1048575}));
  EXPECT_EQ(round.major, 65u);
  EXPECT_EQ(round.minor, 1048575u);
}

TEST(BiolatDevices, DevNameIsReadFromItsUeventLine) {
  EXPECT_EQ(DevNameFromUevent("MAJOR=254\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\nDISKSEQ=9\n"), "vda");
  EXPECT_EQ(DevNameFromUevent("DEVNAME=nvme0n1"), "nvme0n1");  // no trailing newline
  EXPECT_EQ(DevNameFromUevent("MAJOR=8\nMINOR=0\n"), "");
  // Only a whole key matches.
  EXPECT_EQ(DevNameFromUevent("XDEVNAME=sdz\nDEVNAME=sda\n"), "sda");
  EXPECT_EQ(DevNameFromUevent(""), "");
}

TEST(BiolatDevices, MetricSafeNamesKeepLowerCaseLettersDigitsDashAndUnderscore) {
  EXPECT_EQ(MetricSafeDeviceName("nvme0n1"), "nvme0n1");
  EXPECT_EQ(MetricSafeDeviceName("dm-0"), "dm-0");
  EXPECT_EQ(MetricSafeDeviceName("cciss/c0d0"), "cciss_c0d0");
  EXPECT_EQ(MetricSafeDeviceName("MyDisk.1"), "mydisk_1");
  EXPECT_EQ(MetricSafeDeviceName(""), "");
}

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "perfgate-sysfs-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void AddDevice(const std::string& numbers, const std::string& uevent) {
    fs::create_directories(root_ / "dev/block" / numbers);
    std::ofstream(root_ / "dev/block" / numbers / "uevent") << uevent;
  }
  fs::path root_;
};

TEST_F(FakeSysfs, NamesADiskByItsDevName) {
  AddDevice("254:0", "MAJOR=254\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\n");
  AddDevice("104:16", "MAJOR=104\nMINOR=16\nDEVNAME=cciss/c0d1\nDEVTYPE=disk\n");
  EXPECT_EQ(BlockDeviceName(KernelDev({254, 0}), root_.string()), "vda");
  EXPECT_EQ(BlockDeviceName(KernelDev({104, 16}), root_.string()), "cciss_c0d1");
}

TEST_F(FakeSysfs, UnknownDeviceIsNamedByItsNumbers) {
  EXPECT_EQ(BlockDeviceName(KernelDev({8, 16}), root_.string()), "dev8_16");
  AddDevice("8:32", "MAJOR=8\nMINOR=32\n");  // a uevent without DEVNAME
  EXPECT_EQ(BlockDeviceName(KernelDev({8, 32}), root_.string()), "dev8_32");
}

}  // namespace
}  // namespace perfgate
