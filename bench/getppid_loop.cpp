// The cheapest real syscall in a tight loop: what a syscall probe's per-event
// cost is measured against. Prints ns per call so scripts can take medians.
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  long iterations = argc > 1 ? std::atol(argv[1]) : 2'000'000;
  if (iterations <= 0) {
    std::fprintf(stderr, "usage: %s [iterations > 0]\n", argv[0]);
    return 2;
  }
  auto begin = std::chrono::steady_clock::now();
  // syscall() rather than getppid(): libc must not cache or vDSO the call.
  for (long i = 0; i < iterations; ++i) syscall(SYS_getppid);
  auto elapsed = std::chrono::steady_clock::now() - begin;
  double ns = std::chrono::duration<double, std::nano>(elapsed).count();
  std::printf("%.2f\n", ns / static_cast<double>(iterations));
  return 0;
}
