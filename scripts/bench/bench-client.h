/* What the C SA bench clients share (sa-flood.c, storm-client.c): the wall clock in ms (the start
 * instant the benches give their clients is an epoch time), the exit on a failed umad call (naming
 * the program, the call, its return code and errno's text), and opening the port with an SA agent. */
#ifndef IBSM_BENCH_CLIENT_H
#define IBSM_BENCH_CLIENT_H
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/umad.h>

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

/* umad_init, the first port, an agent of the SA class (version 2): the port's id; the agent's in *agent. */
static int open_sa_agent(int *agent) {
  int rc = umad_init();
  if (rc < 0) die("umad_init", rc);
  int port = umad_open_port(NULL, 0);
  if (port < 0) die("umad_open_port", port);
  *agent = umad_register(port, 0x03, 2, 0, NULL);
  if (*agent < 0) die("umad_register", *agent);
  return port;
}
#endif
