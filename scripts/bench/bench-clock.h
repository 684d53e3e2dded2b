/* What the C bench clients share (sa-flood.c, storm-client.c): the wall clock in ms (the start
 * instant the benches give their clients is an epoch time) and the exit on a failed umad call,
 * naming the program, the call, its return code and errno's text. */
#ifndef IBSM_BENCH_CLOCK_H
#define IBSM_BENCH_CLOCK_H
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *bench_program;

static void die(const char *what, int rc) {
  fprintf(stderr, "%s: %s failed (%d: %s)\n", bench_program, what, rc, strerror(rc < 0 ? -rc : errno));
  exit(1);
}
#endif
