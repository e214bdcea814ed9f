// pg-micro: Google Benchmark micro-benchmarks of kernel-sensitive operations,
// the ones a kernel change, a new probe or a noisy neighbour makes slower
// first: a syscall round trip, a wake-up through a pipe, process creation,
// page faults, mapping and unmapping, a small durable write.
//
// Each benchmark times one operation per iteration. Run it through the
// gbench adapter (workloads/micro/micro.json), which reads one value per
// benchmark per process; perfgate's repetitions are fresh processes.
//
// --scratch-dir DIR: where the write+fsync benchmark makes its file (default
// $TMPDIR, else /var/tmp). It must be on a disk file system: fsync on tmpfs
// returns at once and measures nothing.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

std::string g_scratch_dir;

constexpr size_t kPagesPerTouch = 64;
constexpr size_t kMapBytes = 64 * 1024;
constexpr size_t kWriteBytes = 4096;
constexpr off_t kWriteFileBytes = 1 << 20;

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// getppid is not cached by glibc (getpid once was), so every call enters the kernel.
void BM_SyscallGetppid(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(syscall(SYS_getppid));
}
BENCHMARK(BM_SyscallGetppid);

// One byte to a partner thread and one back: two wake-ups and two context
// switches (or cross-CPU wake-ups) per iteration, the run-queue path.
void BM_PipePingPong(benchmark::State& state) {
  int to_partner[2], from_partner[2];
  if (pipe(to_partner) != 0 || pipe(from_partner) != 0) {
    state.SkipWithError("pipe failed");
    return;
  }
  std::thread partner([&] {
    char c = 0;
    while (read(to_partner[0], &c, 1) == 1 && c != 'q') {
      if (write(from_partner[1], &c, 1) != 1) break;
    }
  });
  char c = 'p';
  for (auto _ : state) {
    if (write(to_partner[1], &c, 1) != 1 || read(from_partner[0], &c, 1) != 1) {
      state.SkipWithError("pipe I/O failed");
      break;
    }
  }
  c = 'q';
  if (write(to_partner[1], &c, 1) != 1) std::perror("pg-micro: pipe");
  partner.join();
  for (int fd : {to_partner[0], to_partner[1], from_partner[0], from_partner[1]}) close(fd);
}
BENCHMARK(BM_PipePingPong)->UseRealTime();

// fork, the child exits at once, the parent reaps it: page-table copy,
// process creation and exit, a SIGCHLD wake-up.
void BM_ForkWait(benchmark::State& state) {
  for (auto _ : state) {
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid < 0) {
      state.SkipWithError("fork failed");
      break;
    }
    int status = 0;
    waitpid(pid, &status, 0);
  }
}
BENCHMARK(BM_ForkWait)->UseRealTime();

// Touches 64 fresh pages, then drops them with MADV_DONTNEED so the next
// iteration faults again: a page fault, a page allocation and zeroing per page.
void BM_PageFaultTouch(benchmark::State& state) {
  const size_t page = PageSize();
  const size_t bytes = kPagesPerTouch * page;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    state.SkipWithError("mmap failed");
    return;
  }
  auto* bytes_p = static_cast<volatile char*>(p);
  for (auto _ : state) {
    for (size_t off = 0; off < bytes; off += page) bytes_p[off] = 1;
    madvise(p, bytes, MADV_DONTNEED);
  }
  munmap(p, bytes);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kPagesPerTouch));
}
BENCHMARK(BM_PageFaultTouch);

// Maps and unmaps 64 KiB without touching it: the VMA paths and mmap_lock.
void BM_MmapMunmap(benchmark::State& state) {
  for (auto _ : state) {
    void* p = mmap(nullptr, kMapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      state.SkipWithError("mmap failed");
      break;
    }
    benchmark::DoNotOptimize(p);
    munmap(p, kMapBytes);
  }
}
BENCHMARK(BM_MmapMunmap);

// A 4 KiB write and an fsync: the page cache, the file system's journal and
// one or more disk flushes. Cycles through a 1 MiB file so it stays small.
void BM_WriteFsync(benchmark::State& state) {
  std::string path = g_scratch_dir + "/pg-micro-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) {
    state.SkipWithError(("cannot create a file in " + g_scratch_dir + ": " + std::strerror(errno)).c_str());
    return;
  }
  unlink(path.c_str());  // removed however the process ends
  char buffer[kWriteBytes];
  std::memset(buffer, 'w', sizeof buffer);
  off_t offset = 0;
  for (auto _ : state) {
    if (pwrite(fd, buffer, sizeof buffer, offset) != static_cast<ssize_t>(sizeof buffer) || fsync(fd) != 0) {
      state.SkipWithError("write or fsync failed");
      break;
    }
    offset = (offset + static_cast<off_t>(sizeof buffer)) % kWriteFileBytes;
  }
  close(fd);
}
BENCHMARK(BM_WriteFsync)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const char* tmpdir = std::getenv("TMPDIR");
  g_scratch_dir = tmpdir && *tmpdir ? tmpdir : "/var/tmp";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--scratch-dir" && i + 1 < argc) {
      g_scratch_dir = argv[++i];
    } else {
      std::fprintf(stderr, "pg-micro: unknown argument %s\nusage: pg-micro [--benchmark_...] [--scratch-dir DIR]\n",
                   argv[i]);
      return 2;
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
