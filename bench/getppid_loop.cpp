// The cheapest real syscall in a tight loop: what a syscall probe's per-event
// cost is measured against. Prints ns per call so scripts can take medians:
// wall-clock time by default, or with `cpu` the loop thread's CPU time, which
// a busy machine (other processes taking turns on the CPUs) inflates far
// less than the wall clock.
//
//   getppid_loop [ITERATIONS=2000000] [wall|cpu]
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

double ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = argc > 1 ? std::atol(argv[1]) : 2'000'000;
  const char* clock = argc > 2 ? argv[2] : "wall";
  bool cpu = std::strcmp(clock, "cpu") == 0;
  if (iterations <= 0 || (!cpu && std::strcmp(clock, "wall") != 0)) {
    std::fprintf(stderr, "usage: %s [iterations > 0] [wall|cpu]\n", argv[0]);
    return 2;
  }
  auto begin = std::chrono::steady_clock::now();
  double cpu_begin = ThreadCpuNs();
  // syscall() rather than getppid(): libc must not cache or vDSO the call.
  for (long i = 0; i < iterations; ++i) syscall(SYS_getppid);
  double ns = ThreadCpuNs() - cpu_begin;
  if (!cpu) ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - begin).count();
  std::printf("%.2f\n", ns / static_cast<double>(iterations));
  return 0;
}
