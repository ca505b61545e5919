/* Whole-process wall time of a program with and without LD_PRELOAD=LIB, for bench/preload-cost:
 *   exec_time RUNS LIB PROG ARGS…
 * Runs PROG RUNS times each way, interleaved (without, with; then with, without; …) so that drift on a
 * busy machine falls on both alike; prints one "without NS FAULTS" or "with NS FAULTS" line per run:
 * posix_spawn to wait4 on CLOCK_MONOTONIC, and the child's minor page faults (what the loader and the
 * library touched: a count, steady where time is noisy). stdout and stderr of PROG go to /dev/null. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static long long run(char **argv, char **env, posix_spawn_file_actions_t *fa, long *faults) {
  pid_t pid;
  long long t0 = now_ns();
  if (posix_spawn(&pid, argv[0], fa, NULL, argv, env) != 0) return -1;
  int status;
  struct rusage ru;
  wait4(pid, &status, 0, &ru);
  long long t = now_ns() - t0;
  *faults = ru.ru_minflt;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t : -1;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: exec_time RUNS LIB PROG ARGS...\n");
    return 2;
  }
  int runs = atoi(argv[1]);
  int n = 0;
  while (environ[n]) n++;
  char **without = calloc((size_t)n + 1, sizeof *without), **with = calloc((size_t)n + 2, sizeof *with);
  int a = 0, b = 0;
  for (int i = 0; i < n; i++)
    if (strncmp(environ[i], "LD_PRELOAD=", 11)) without[a++] = with[b++] = environ[i];
  char *preload = malloc(strlen(argv[2]) + 12);
  sprintf(preload, "LD_PRELOAD=%s", argv[2]);
  with[b++] = preload;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  for (int i = 0; i < runs; i++) {
    for (int k = 0; k < 2; k++) {
      int use = (i + k) % 2; /* alternate which goes first */
      long faults = 0;
      long long t = run(argv + 3, use ? with : without, &fa, &faults);
      if (t < 0) {
        fprintf(stderr, "exec_time: %s failed\n", argv[3]);
        return 1;
      }
      printf("%s %lld %ld\n", use ? "with" : "without", t, faults);
    }
  }
  return 0;
}
