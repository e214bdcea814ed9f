// A kernel as where a suite runs: QEMU boots it with an initramfs of this
// host's files (the boot script, gate/target/boot-vm.sh, installed next to
// perfgate's workload programs as pg-boot-vm), runs one command in it as
// root and brings a directory of the guest's back. The kernel A/B
// (pipeline/kernel_ab.h) boots each side's kernel in turn with it.
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace perfgate {

// One side of a kernel A/B: what boots, with what.
struct KernelSide {
  // A Debian kernel package's name (linux-image-6.1.0-57-cloud-amd64, or a
  // meta-package such as linux-image-cloud-amd64), the path of a kernel
  // package (.deb), or the path of a kernel image (bzImage, vmlinuz).
  std::string kernel;
  std::string modules_dir;  // with a kernel image: its lib/modules/VERSION
  // .ko files loaded before the command, each "FILE.ko [PARAM=VALUE]...".
  std::vector<std::string> module_files;
  std::string cmdline;  // appended to the kernel's command line
};

// Where a boot's disk (VmSettings::disk_mb) is mounted: the fio adapter's
// default scratch directory, and where a command workload finds a block device's file system.
inline constexpr const char* kVmDiskMount = "/var/tmp";

// How the virtual machine is made.
struct VmSettings {
  std::string boot_script;  // pg-boot-vm
  // The guest's architecture, "x86_64" or "arm64" (QEMU's aarch64); empty:
  // this host's. Another than this host's runs under TCG.
  std::string arch;
  int cpus = 2;
  int memory_mb = 2048;
  // "tcg" (QEMU's emulation: works everywhere, its timings are the
  // emulator's), "kvm" (the host's CPU: timings near a real machine's) or
  // "auto" (ChooseAccel: KVM where it boots, else TCG).
  std::string accel = "auto";
  int timeout_s = 1800;  // a boot that runs longer is stopped (InfraError)
  // With more than 0: a fresh, empty ext4 disk of this many MiB in each
  // boot, mounted at kVmDiskMount.
  int disk_mb = 0;
  std::vector<std::string> files;        // host files the guest gets at the same paths
  std::vector<std::string> environment;  // NAME=VALUE set for the command
};

// What a boot did.
struct VmBoot {
  int exit_code = 0;  // the command's
  double seconds = 0;
  std::string release;  // `uname -r` in the guest, from its first line
};

// This host's architecture as VmSettings::arch names it ("x86_64", "arm64").
std::string HostVmArch();

// The architecture of the ELF executable `path` as VmSettings::arch names
// it; empty for a file that is not one, or of another architecture.
std::string ElfVmArch(const std::string& path);

// Checks what a boot needs before anything runs: QEMU for the guest's
// architecture, the boot script, every module file and a
// kernel given as a path. InputError naming `option` for a missing file;
// InfraError for a missing tool (naming its Debian package).
void CheckVmPrerequisites(const KernelSide& side, const VmSettings& settings, const std::string& option);

// What --vm-accel auto becomes: "kvm" when /dev/kvm can be opened and a
// guest of `side` boots under it (`log_file` keeps that boot's output),
// else "tcg"; `why` says which and why, for the report.
std::string ChooseAccel(const KernelSide& side, const VmSettings& settings, const std::string& log_file,
                        const std::atomic<bool>* stop, std::string& why);

// Boots `side`, runs argv in it (from `/`), and copies the guest's
// `guest_dir` (what it holds after the command, even when it failed) into
// the existing `host_dir` (neither when `guest_dir` is empty). Everything the guest and QEMU print goes to
// `log_file`. InfraError when the kernel could not be booted, the guest
// ended without the command's status (a panic) or ran past the timeout;
// `stop` (SIGINT, SIGTERM) ends QEMU and throws InfraError too.
VmBoot BootAndRun(const KernelSide& side, const VmSettings& settings, const std::vector<std::string>& argv,
                  const std::string& guest_dir, const std::string& host_dir, const std::string& log_file,
                  const std::atomic<bool>* stop);

}  // namespace perfgate
