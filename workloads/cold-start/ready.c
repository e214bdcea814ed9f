// pg-ready: an app whose start-up takes a known time, for the cold-start
// adapter's tests and its planted-slowdown scenario. It maps and reads the
// files given with --map (page faults: major ones when they were evicted),
// waits --delay-ms (plus --extra-delay-ms, the planted slowdown of the
// shipped suite), then becomes ready the way --ready says and, unless that
// is "exit", serves (sleeps) until it is stopped.
//
//   pg-ready [--delay-ms MS] [--extra-delay-ms MS] [--map FILE]... --ready stdout|stderr|phase|exit|file PATH|port N
//
// stdout/stderr: prints "ready" on that stream; phase: prints the phase line
// {"phase": "start", "begin_ns": B, "end_ns": E} (CLOCK_MONOTONIC); file:
// writes PATH; port: listens on 127.0.0.1:N; exit: exits 0.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void Die(const char* what) {
  fprintf(stderr, "pg-ready: %s\n", what);
  exit(2);
}

static unsigned long long MonotonicNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

// Reads every page of the file through a mapping, as a loader touches a library.
static unsigned long TouchFile(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die("cannot open a --map file");
  struct stat st;
  if (fstat(fd, &st) != 0) Die("cannot stat a --map file");
  unsigned long sum = 0;
  if (st.st_size > 0) {
    const unsigned char* p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) Die("cannot map a --map file");
    // No readahead beyond the page touched: one major fault per page read from the disk.
    madvise((void*)p, (size_t)st.st_size, MADV_RANDOM);
    for (off_t i = 0; i < st.st_size; i += 4096) sum += p[i];
    munmap((void*)p, (size_t)st.st_size);
  }
  close(fd);
  return sum;
}

int main(int argc, char** argv) {
  const unsigned long long begin = MonotonicNs();
  long delay_ms = 0;
  const char* ready = NULL;
  const char* target = NULL;
  unsigned long sum = 0;
  for (int i = 1; i < argc; ++i) {
    if ((strcmp(argv[i], "--delay-ms") == 0 || strcmp(argv[i], "--extra-delay-ms") == 0) && i + 1 < argc) {
      delay_ms += strtol(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--map") == 0 && i + 1 < argc) {
      sum += TouchFile(argv[++i]);
    } else if (strcmp(argv[i], "--ready") == 0 && i + 1 < argc) {
      ready = argv[++i];
      if ((strcmp(ready, "file") == 0 || strcmp(ready, "port") == 0) && i + 1 < argc) target = argv[++i];
    } else {
      Die("usage: pg-ready [--delay-ms MS] [--extra-delay-ms MS] [--map FILE]... --ready stdout|stderr|phase|exit|file "
          "PATH|port N");
    }
  }
  if (ready == NULL || delay_ms < 0) Die("--ready is required, --delay-ms must be >= 0");
  if ((strcmp(ready, "file") == 0 || strcmp(ready, "port") == 0) && target == NULL)
    Die("--ready file|port needs a value");
  int listener = -1;
  if (strcmp(ready, "port") == 0) {
    listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)atoi(target));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (listener < 0 || bind(listener, (struct sockaddr*)&addr, sizeof addr) != 0) Die("cannot bind the port");
  }
  const struct timespec delay = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
  while (nanosleep(&delay, NULL) != 0) {
  }
  // How long the app itself took from main() to its readiness, printed
  // before readiness is signalled (a server may be stopped right after) or
  // in the same write as the marker line: perfgate's time to ready minus
  // this is exec, the loader, and the marker's own latency.
  char measured[128];
  snprintf(measured, sizeof measured, "{\"metric\": \"ready.main_to_ready\", \"value\": %.3f, \"unit\": \"ms\"}\n",
           (double)(MonotonicNs() - begin) / 1e6);
  if (strcmp(ready, "stdout") == 0) {
    printf("ready (checksum %lu)\n%s", sum, measured);
    fflush(stdout);
  } else if (strcmp(ready, "phase") == 0) {
    printf("{\"phase\": \"start\", \"begin_ns\": %llu, \"end_ns\": %llu}\n%s", begin, MonotonicNs(), measured);
    fflush(stdout);
  } else {
    fputs(measured, stdout);
    fflush(stdout);
    if (strcmp(ready, "stderr") == 0) {
      fprintf(stderr, "ready (checksum %lu)\n", sum);
    } else if (strcmp(ready, "file") == 0) {
      int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0 || write(fd, "ready\n", 6) != 6) Die("cannot write the --ready file");
      close(fd);
    } else if (strcmp(ready, "port") == 0) {
      if (listen(listener, 16) != 0) Die("cannot listen");
    } else if (strcmp(ready, "exit") == 0) {
      return 0;
    } else {
      Die("unknown --ready kind");
    }
  }
  for (;;) pause();  // serving until stopped
}
