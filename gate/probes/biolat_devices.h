// Naming the disks of the biolat probe's per-device metrics: the kernel's
// dev_t (as block tracepoints record it) to the disk's name in sysfs.
#pragma once

#include <cstdint>
#include <string>

namespace perfgate {

struct BlockDeviceNumber {
  uint32_t major = 0;
  uint32_t minor = 0;
};

// The kernel-internal dev_t of block tracepoints and struct gendisk is
// major << 20 | minor (MINORBITS), unlike the user-space encoding of st_dev.
BlockDeviceNumber SplitKernelDev(uint32_t dev);
uint32_t KernelDev(BlockDeviceNumber number);

// DEVNAME=... of a sysfs uevent file's text; empty when absent.
std::string DevNameFromUevent(const std::string& uevent);

// A device name as a component of a dot-separated, lower-case metric name:
// lower case, [a-z0-9_-] kept, anything else (the '/' of "cciss/c0d0", a
// '.') becomes '_'. Empty stays empty.
std::string MetricSafeDeviceName(const std::string& name);

// The disk's name from <sysfs_root>/dev/block/MAJ:MIN/uevent, made metric
// safe, or "dev<major>_<minor>" when sysfs does not know the device (it went
// away, or sysfs is not mounted).
std::string BlockDeviceName(uint32_t kernel_dev, const std::string& sysfs_root = "/sys");

}  // namespace perfgate
