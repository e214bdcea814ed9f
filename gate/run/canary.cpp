#include "run/canary.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace perfgate {

namespace {

double Now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// ---- the four pieces of work ----------------------------------------------

constexpr uint64_t kLoopQuantum = uint64_t{1} << 14;    // iterations between clock reads
constexpr double kLoopUnit = static_cast<double>(1 << 20);  // the metric's unit of iterations
constexpr size_t kStreamQuantum = size_t{1} << 18;      // bytes read between clock reads
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr size_t kFaultQuantum = size_t{128} << 10;  // bytes mapped, faulted in and unmapped at a time
constexpr double kMiB = 1024.0 * 1024.0;
// Quanta of faults a canary takes however small its budget: one page's
// fault costs from 1 to 5 us on the CI hosts from one moment to the next,
// and with a single quantum a half's reading spread by about 18 % over a
// run's repetitions (bench/canary.sh), too wide to tell a third slower.
constexpr int kMinFaultQuanta = 3;
constexpr size_t kReadSize = 4096;
constexpr size_t kFileSize = size_t{8} << 20;

// A chain of dependent multiplies and shifts: one core's integer speed, no
// memory traffic, nothing the compiler can fold or vectorise.
__attribute__((no_sanitize("address", "undefined"))) uint64_t Loop(uint64_t iterations, uint64_t x) {
  for (uint64_t i = 0; i < iterations; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    x ^= x >> 29;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// A buffer the size of the last-level cache (at least 8 MiB, at most 24
// MiB: perfgate's own memory stays small), read in turn, so that most reads
// miss the cache that the previous pass left to other data; and a file of
// kFileSize read with O_DIRECT, unlinked at once, so its reads go to the
// device. Set up once per process.
struct CanaryResources {
  const uint64_t* words = nullptr;
  size_t bytes = 0;
  int fd = -1;
  void* block = nullptr;  // aligned read buffer
  // Seconds per quantum of each piece, from the last canary: sizes the next.
  double loop_quantum_s = 20e-6, stream_quantum_s = 100e-6, fault_quantum_s = 100e-6, read_s = 100e-6;
  size_t page = 4096;
  size_t read_offset = 0;
  uint64_t sum = 0;
  uint64_t read_seed = 0x9e3779b97f4a7c15ULL;
  uint64_t loop_state = 1;
};

size_t StreamBytes() {
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
  const size_t want = llc > 0 ? static_cast<size_t>(llc) : size_t{16} << 20;
  return std::clamp(want, size_t{8} << 20, size_t{24} << 20) & ~(kStreamQuantum - 1);
}

// Sums a quantum of the buffer: a stream of loads the core can issue as
// fast as memory delivers them.
__attribute__((no_sanitize("address", "undefined"))) uint64_t Sum(const uint64_t* words, size_t count) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i + 4 <= count; i += 4) {
    a += words[i];
    b += words[i + 1];
    c += words[i + 2];
    d += words[i + 3];
  }
  return a + b + c + d;
}

// Maps a quantum of fresh anonymous memory, writes a byte to each page and
// unmaps it: a page fault, a zeroed page from the allocator and its return
// per page, as a workload that allocates pays them. Their cost moves with
// the host apart from the loop's and the stream's: a guest whose freed
// memory the hypervisor took back faults each page in twice, and on the CI
// hosts a workload of such faults slowed by a third for a few seconds while
// the loop stayed within 1 % (docs/verdicts.md). False when the map failed.
__attribute__((no_sanitize("address", "undefined"))) bool Faults(size_t page) {
  void* mem = mmap(nullptr, kFaultQuantum, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return false;
  for (size_t off = 0; off < kFaultQuantum; off += page) static_cast<volatile char*>(mem)[off] = 1;
  munmap(mem, kFaultQuantum);
  return true;
}

int OpenDirectFile() {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/var/tmp") + "/perfgate-canary-XXXXXX";
  const int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) return -1;
  unlink(path.c_str());
  // Written through the page cache once, then reopened for direct reads.
  std::vector<char> chunk(size_t{1} << 20);
  uint64_t x = 88172645463325252ULL;
  for (char& c : chunk) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<char>(x);
  }
  bool written = true;
  for (size_t off = 0; off < kFileSize && written; off += chunk.size())
    written = pwrite(fd, chunk.data(), chunk.size(), static_cast<off_t>(off)) == static_cast<ssize_t>(chunk.size());
  if (!written || fdatasync(fd) != 0) {
    close(fd);
    return -1;
  }
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  const int direct = open(self.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  close(fd);
  return direct;
}

CanaryResources& Resources() {
  static CanaryResources r;
  static std::once_flag once;
  std::call_once(once, [] {
    r.bytes = StreamBytes();
    if (const long page = sysconf(_SC_PAGESIZE); page > 0) r.page = static_cast<size_t>(page);
    void* mem = mmap(nullptr, r.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem != MAP_FAILED) {
      // Not copied into the workload's fork: its exec would tear the pages'
      // mappings down on the workload's own CPU time.
      madvise(mem, r.bytes, MADV_DONTFORK);
      std::memset(mem, 1, r.bytes);  // every page present before anything is timed
      r.words = static_cast<const uint64_t*>(mem);
    }
    r.fd = OpenDirectFile();
    if (r.fd >= 0 && posix_memalign(&r.block, kReadSize, kReadSize) != 0) {
      close(r.fd);
      r.fd = -1;
    }
  });
  return r;
}

template <typename Quantum>
double Timed(int quanta, Quantum quantum) {
  const double start = Now();
  for (int i = 0; i < quanta; ++i) quantum();
  return Now() - start;
}

int QuantaFor(double budget_s, double quantum_s, int at_least) {
  const double n = quantum_s > 0 ? budget_s / quantum_s : at_least;
  return std::clamp(static_cast<int>(std::lround(n)), at_least, 1 << 20);
}

}  // namespace

CanaryReading RunCanary(double budget_s, bool reads) {
  CanaryResources& r = Resources();
  CanaryReading reading;
  const double start = Now();
  // 40 % of the budget to the loop, 25 % to the stream, 20 % to the faults,
  // 15 % to the reads.
  const int loops = QuantaFor(0.4 * budget_s, r.loop_quantum_s, 4);
  const double loop_s = Timed(loops, [&] { r.loop_state = Loop(kLoopQuantum, r.loop_state); });
  r.loop_quantum_s = loop_s / loops;
  reading.cpu_s = loop_s / (static_cast<double>(loops) * static_cast<double>(kLoopQuantum)) * kLoopUnit;

  if (r.words != nullptr) {
    const int quanta = QuantaFor(0.25 * budget_s, r.stream_quantum_s, 1);
    const double stream_s = Timed(quanta, [&] {
      r.sum += Sum(r.words + r.read_offset / sizeof(uint64_t), kStreamQuantum / sizeof(uint64_t));
      asm volatile("" : : "r"(r.sum) : "memory");
      r.read_offset = (r.read_offset + kStreamQuantum) % r.bytes;
    });
    r.stream_quantum_s = stream_s / quanta;
    reading.memory_s = stream_s / (static_cast<double>(quanta) * static_cast<double>(kStreamQuantum)) * kGiB;
  }

  {
    const int quanta = QuantaFor(0.2 * budget_s, r.fault_quantum_s, kMinFaultQuanta);
    bool mapped = true;
    const double fault_s = Timed(quanta, [&] { mapped &= Faults(r.page); });
    if (mapped) {
      r.fault_quantum_s = fault_s / quanta;
      reading.fault_s = fault_s / (static_cast<double>(quanta) * static_cast<double>(kFaultQuantum)) * kMiB;
    }
  }

  if (reads && r.fd >= 0) {
    const int count = QuantaFor(0.15 * budget_s, r.read_s, 1);
    bool failed = false;
    const double read_s = Timed(count, [&] {
      r.read_seed = r.read_seed * 6364136223846793005ULL + 1;
      const off_t at = static_cast<off_t>((r.read_seed >> 33) % (kFileSize / kReadSize) * kReadSize);
      failed |= pread(r.fd, r.block, kReadSize, at) != static_cast<ssize_t>(kReadSize);
    });
    if (!failed) {
      r.read_s = read_s / count;
      reading.io_s = r.read_s;
    }
  }
  reading.elapsed_s = Now() - start;
  return reading;
}

void AddCanaryMetrics(const CanaryReading& reading, MetricSet& out) {
  const auto add = [&](const char* name, std::optional<double> value) {
    if (value) out[name] = ScalarMetric(name, *value, "s", Better::kNone);
  };
  add(kHostCanaryCpu, reading.cpu_s);
  add(kHostCanaryMemory, reading.memory_s);
  add(kHostCanaryFault, reading.fault_s);
  add(kHostCanaryIo, reading.io_s);
  add(kHostCanaryElapsed, reading.elapsed_s);
}

CanaryReading CanaryOf(const MetricSet& metrics) {
  const auto value = [&](const char* name) -> std::optional<double> {
    auto it = metrics.find(name);
    if (it == metrics.end()) return std::nullopt;
    return it->second.value;
  };
  return {value(kHostCanaryCpu), value(kHostCanaryMemory), value(kHostCanaryFault), value(kHostCanaryIo),
          value(kHostCanaryElapsed).value_or(0)};
}

double HostCanary::Budget() const {
  return last_wall_s_ > 0 ? std::clamp(kShareOfRepetition * last_wall_s_, kMinSeconds, kMaxSeconds) : kMinSeconds;
}

void HostCanary::Before() { before_ = RunCanary(Budget() / 2, false); }

CanaryReading BracketReading(const CanaryReading& before, const CanaryReading& after) {
  const auto slower = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
    if (a && b) return std::max(*a, *b);
    return a ? a : b;
  };
  return {slower(before.cpu_s, after.cpu_s), slower(before.memory_s, after.memory_s),
          slower(before.fault_s, after.fault_s), slower(before.io_s, after.io_s), before.elapsed_s + after.elapsed_s};
}

CanaryReading HostCanary::After(double wall_s) {
  const CanaryReading after = RunCanary(Budget() / 2);
  last_wall_s_ = wall_s;
  return BracketReading(before_, after);
}

std::string HostCanary::SpellOf(const CanaryReading& reading) {
  std::string spell;
  if (history_.size() >= kSpellHistory) {
    const auto median_of = [&](std::optional<double> CanaryReading::*part) -> std::optional<double> {
      std::vector<double> values;
      for (const CanaryReading& r : history_) {
        if (r.*part) values.push_back(*(r.*part));
      }
      if (values.size() < kSpellHistory) return std::nullopt;
      std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
      return values[values.size() / 2];
    };
    const struct {
      const char* name;
      std::optional<double> CanaryReading::*part;
    } parts[] = {{kHostCanaryCpu, &CanaryReading::cpu_s},
                 {kHostCanaryMemory, &CanaryReading::memory_s},
                 {kHostCanaryFault, &CanaryReading::fault_s}};
    double worst = kSpellFactor;
    for (const auto& [name, part] : parts) {
      const std::optional<double> median = median_of(part);
      if (!(reading.*part) || !median || !(*median > 0)) continue;
      const double ratio = *(reading.*part) / *median;
      if (ratio <= worst) continue;
      worst = ratio;
      char text[160];
      std::snprintf(text, sizeof text, "the host ran slower for a spell: %s took %.2fx its median before this repetition",
                    name, ratio);
      spell = text;
    }
  }
  history_.push_back(reading);
  return spell;
}

}  // namespace perfgate
