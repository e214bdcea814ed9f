#include "target/kernel_vm.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/subprocess.h"

namespace fs = std::filesystem;

namespace perfgate {

namespace {

// The boot script's own exit statuses (gate/target/boot-vm.sh).
constexpr int kVmNotPrepared = 125;
constexpr int kVmTimedOut = 124;
constexpr int kVmNoStatus = 126;

double Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && access((fs::path(dir) / name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// QEMU's program for a guest of `arch` (VmSettings::arch), and its Debian package.
std::pair<std::string, std::string> QemuFor(const std::string& arch) {
  if (arch == "arm64") return {"qemu-system-aarch64", "qemu-system-arm"};
  return {"qemu-system-x86_64", "qemu-system-x86"};
}

std::string ArchOf(const VmSettings& settings) { return settings.arch.empty() ? HostVmArch() : settings.arch; }

// The lines of the boot log that say what went wrong: the script's own
// ("vm: ..."), QEMU's errors and the guest's ("perfgate-vm: insmod ...
// failed", "perfgate-vm: cannot ..."), else the log's last line.
std::string WhyFromLog(const std::string& log_file) {
  std::ifstream in(log_file);
  std::string line, why, last;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    last = line;
    const bool qemu_error = line.rfind("qemu-system-", 0) == 0 && line.find("error") != std::string::npos;
    if (line.rfind("vm: ", 0) == 0 || qemu_error || line.find("perfgate-vm: insmod") != std::string::npos ||
        line.find("perfgate-vm: cannot") != std::string::npos)
      why += (why.empty() ? "" : "; ") + line;
  }
  return why.empty() ? last : why;
}

std::string ReleaseFromLog(const std::string& log_file) {
  std::ifstream in(log_file);
  std::string line;
  const std::string marker = "perfgate-vm: kernel ";
  while (std::getline(in, line)) {
    const size_t at = line.find(marker);
    if (at == std::string::npos) continue;
    const std::string rest = line.substr(at + marker.size());
    return rest.substr(0, rest.find(' '));
  }
  return "";
}

}  // namespace

std::string HostVmArch() {
  utsname u{};
  uname(&u);
  return std::string(u.machine) == "aarch64" ? "arm64" : "x86_64";
}

std::string ElfVmArch(const std::string& path) {
  // e_ident (16 bytes), e_type (2), e_machine (2, little-endian on both).
  std::ifstream in(path, std::ios::binary);
  unsigned char header[20] = {};
  if (!in.read(reinterpret_cast<char*>(header), sizeof header)) return "";
  if (header[0] != 0x7f || header[1] != 'E' || header[2] != 'L' || header[3] != 'F' || header[5] != 1) return "";
  const int machine = header[18] | (header[19] << 8);
  if (machine == 62) return "x86_64";  // EM_X86_64
  if (machine == 183) return "arm64";  // EM_AARCH64
  return "";
}

void CheckVmPrerequisites(const KernelSide& side, const VmSettings& settings, const std::string& option) {
  if (!settings.arch.empty() && settings.arch != "x86_64" && settings.arch != "arm64")
    throw InputError("--vm-arch: expected x86_64 or arm64, got \"" + settings.arch + "\"");
  const auto [qemu, package] = QemuFor(ArchOf(settings));
  if (!OnPath(qemu)) throw InfraError(option + ": " + qemu + " is missing (apt-get install " + package + ")");
  if (access(settings.boot_script.c_str(), R_OK) != 0)
    throw InfraError(option + ": the boot script " + settings.boot_script + " is missing (a broken install?)");
  if (side.kernel.empty()) throw InputError(option + ": no kernel given");
  const bool is_path = side.kernel.find('/') != std::string::npos || side.kernel.ends_with(".deb");
  if (is_path && !fs::is_regular_file(side.kernel))
    throw InputError(option + " " + side.kernel + ": no such kernel image or package");
  for (const std::string& given : side.module_files) {
    // "FILE.ko [PARAM=VALUE]...": the module and its parameters.
    const std::string module = given.substr(0, given.find(' '));
    if (!fs::is_regular_file(module)) throw InputError(option + ": module " + module + ": no such file");
    if (!module.ends_with(".ko")) throw InputError(option + ": module " + module + ": not a .ko file");
    const std::string params = module.size() < given.size() ? given.substr(module.size() + 1) : "";
    if (params.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,= -") !=
        std::string::npos)
      throw InputError(option + ": module " + module +
                       ": parameters are NAME=VALUE words of letters, digits and "
                       "_.,-, not \"" +
                       params + "\"");
  }
  if (!side.modules_dir.empty() && !fs::is_directory(side.modules_dir))
    throw InputError(option + ": modules directory " + side.modules_dir + ": no such directory");
  if (settings.accel != "tcg" && settings.accel != "kvm" && settings.accel != "auto")
    throw InputError("--vm-accel: expected auto, tcg or kvm, got \"" + settings.accel + "\"");
}

std::string ChooseAccel(const KernelSide& side, const VmSettings& settings, const std::string& log_file,
                        const std::atomic<bool>* stop, std::string& why) {
  if (ArchOf(settings) != HostVmArch()) {
    why = "TCG: an " + ArchOf(settings) + " guest on this " + HostVmArch() + " host";
    return "tcg";
  }
  const int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    why = std::string("TCG: /dev/kvm cannot be opened (") + std::strerror(errno) + ")";
    return "tcg";
  }
  close(fd);
  VmSettings probe = settings;
  probe.accel = "kvm";
  probe.timeout_s = 120;
  probe.files.clear();
  probe.disk_mb = 0;
  try {
    if (BootAndRun(side, probe, {"true"}, "", "", log_file, stop).exit_code == 0) {
      why = "KVM: /dev/kvm boots this kernel";
      return "kvm";
    }
    why = "TCG: a guest under KVM did not run its command";
  } catch (const Error& e) {
    if (stop != nullptr && stop->load()) throw;
    why = "TCG: a guest under KVM failed: " + WhyFromLog(log_file);
  }
  return "tcg";
}

VmBoot BootAndRun(const KernelSide& side, const VmSettings& settings, const std::vector<std::string>& argv,
                  const std::string& guest_dir, const std::string& host_dir, const std::string& log_file,
                  const std::atomic<bool>* stop) {
  std::vector<std::string> script = {"bash",      settings.boot_script,
                                     "--cpus",    std::to_string(settings.cpus),
                                     "--memory",  std::to_string(settings.memory_mb),
                                     "--accel",   settings.accel,
                                     "--timeout", std::to_string(settings.timeout_s),
                                     "--arch",    ArchOf(settings)};
  // Where these are modules, the collecting disk needs them.
  if (!guest_dir.empty())
    script.insert(script.end(), {"--collect", guest_dir, host_dir, "--module", "virtio_pci", "--module", "virtio_blk"});
  if (settings.disk_mb > 0)
    script.insert(script.end(), {"--disk", std::to_string(settings.disk_mb), "--disk-mount", kVmDiskMount});
  if (!side.modules_dir.empty()) script.insert(script.end(), {"--modules-dir", side.modules_dir});
  for (const std::string& module : side.module_files) script.insert(script.end(), {"--insmod", module});
  if (!side.cmdline.empty()) script.insert(script.end(), {"--append", side.cmdline});
  for (const std::string& file : settings.files) script.insert(script.end(), {"--file", file});
  script.push_back(side.kernel);
  script.push_back("--");
  script.insert(script.end(), argv.begin(), argv.end());

  const int log_fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw InfraError("cannot write " + log_file + ": " + std::strerror(errno));
  const double start = Now();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    throw InfraError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // A process group of its own, so that a stop ends QEMU with the script.
    setpgid(0, 0);
    const int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, STDIN_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    // The script passes every PERFGATE_* variable into the guest.
    for (const std::string& assignment : settings.environment) {
      const size_t eq = assignment.find('=');
      setenv(assignment.substr(0, eq).c_str(), assignment.substr(eq + 1).c_str(), 1);
    }
    std::vector<char*> args = ArgvOf(script);
    execvp(args[0], args.data());
    dprintf(STDERR_FILENO, "vm: cannot run bash: %s\n", std::strerror(errno));
    _exit(127);
  }
  close(log_fd);
  setpgid(pid, pid);
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw InfraError(std::string("waitpid: ") + std::strerror(errno));
    if (stop != nullptr && stop->load()) {
      kill(-pid, SIGTERM);
      waitpid(pid, &status, 0);
      throw InfraError("interrupted while booting " + side.kernel + "; its log: " + log_file);
    }
    usleep(100 * 1000);
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  VmBoot boot{.exit_code = code, .seconds = Now() - start, .release = ReleaseFromLog(log_file)};
  switch (code) {
    case kVmNotPrepared:
      throw InfraError("cannot boot " + side.kernel + ": " + WhyFromLog(log_file) + " (log: " + log_file + ")");
    case kVmTimedOut:
      throw InfraError(side.kernel + ": the guest ran past " + std::to_string(settings.timeout_s) +
                       " s (log: " + log_file + ")");
    case kVmNoStatus:
      throw InfraError(side.kernel + ": the guest ended without the command's exit status (a panic?): " +
                       WhyFromLog(log_file) + " (log: " + log_file + ")");
    case 127:
      throw InfraError("the boot script, or the command in the guest, could not be run (exit 127): " +
                       WhyFromLog(log_file) + " (log: " + log_file + ")");
    default:
      return boot;
  }
}

}  // namespace perfgate
