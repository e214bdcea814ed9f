// Which canary follows a workload of page faults (bench/fault_tracking.sh):
// for SECONDS, rounds of three parts one after the other — the host
// canary's dependent integer loop, thirty 256 KiB map-touch-unmap rounds
// (the smoke workload's own pattern) and a 512 KiB fault probe — and per
// 20 rounds the median of each part, one line "loop_ms rounds_ms probe_ms".
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t state = 1;

static double Loop(void) {
  const double start = Now();
  uint64_t x = state;
  for (int i = 0; i < 100000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    x ^= x >> 29;
    __asm__ volatile("" : "+r"(x));
  }
  state = x;
  return Now() - start;
}

static double Faults(size_t bytes, int rounds) {
  const long page = sysconf(_SC_PAGESIZE);
  const double start = Now();
  for (int r = 0; r < rounds; ++r) {
    char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) exit(1);
    for (size_t i = 0; i < bytes; i += (size_t)page) ((volatile char*)p)[i] = 1;
    munmap(p, bytes);
  }
  return Now() - start;
}

static int Compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double Median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, Compare);
  return v[n / 2];
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 60;
  const double end = Now() + seconds;
  while (Now() < end) {
    double loop[20], rounds[20], probe[20];
    for (int k = 0; k < 20; ++k) {
      loop[k] = Loop();
      probe[k] = Faults(512 * 1024, 1);
      rounds[k] = Faults(256 * 1024, 30);
      usleep(5000);
    }
    printf("%.4f %.4f %.4f\n", Median(loop, 20) * 1e3, Median(rounds, 20) * 1e3, Median(probe, 20) * 1e3);
    fflush(stdout);
  }
  return 0;
}
