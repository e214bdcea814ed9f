// A fixed amount of work for bench/contention_inflation.sh: N rounds of a
// multiply-xor hash, each also reading one byte of a MIB-mebibyte buffer at a
// hash-chosen place (MIB 0: the CPU alone; 8 or more: the shared cache and
// memory too). Prints the CPU time it was charged, user plus system, in s.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: contention_loop ROUNDS [MIB]\n");
    return 2;
  }
  const long rounds = atol(argv[1]);
  const size_t bytes = (argc > 2 ? (size_t)atol(argv[2]) : 0) << 20;
  unsigned char* buffer = bytes ? malloc(bytes) : NULL;
  if (buffer) memset(buffer, 1, bytes);
  volatile unsigned long hash = 1469598103934665603UL;
  for (long i = 0; i < rounds; i++) {
    hash = (hash ^ (unsigned long)i) * 1099511628211UL;
    if (buffer) hash += buffer[(hash >> 7) % bytes];
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  printf("%.6f\n", (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6);
  free(buffer);
  return 0;
}
