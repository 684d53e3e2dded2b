/*
 * The cheapest possible "SA", for scripts/bench/sa-pathrecord.mjs: it answers every SA Get by
 * sending the request straight back as a GetResp, computing nothing. Flooded the same way as the
 * real SAs, it measures what ibsim and the clients alone allow on this machine: the ceiling any SA
 * could reach through ibsim here.
 *
 *   sa-echo        (run under the umad2sim preload; prints READY once registered; stop with SIGTERM)
 * Built by the bench with `cc -O2 sa-echo.c -libumad`.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/umad.h>

#define MAD_LEN 256

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

int main(void) {
  signal(SIGTERM, on_term);
  if (umad_init() < 0) { fprintf(stderr, "sa-echo: umad_init failed\n"); return 1; }
  int port = umad_open_port(NULL, 0);
  if (port < 0) { fprintf(stderr, "sa-echo: umad_open_port failed (%d)\n", port); return 1; }
  long methods[16 / sizeof(long)];
  memset(methods, 0, sizeof methods);
  methods[0] = 1L << 1; /* Get */
  int agent = umad_register(port, 0x03, 2, 0, methods);
  if (agent < 0) { fprintf(stderr, "sa-echo: umad_register failed (%d)\n", agent); return 1; }
  printf("READY\n");
  fflush(stdout);
  void *buf = calloc(1, umad_size() + MAD_LEN);
  unsigned long n = 0;
  while (!stop) {
    int len = MAD_LEN;
    if (umad_recv(port, buf, &len, 200) < 0) continue;
    uint8_t *m = umad_get_mad(buf);
    if (m[3] & 0x80) continue;
    m[3] = 0x81;
    ib_mad_addr_t *a = umad_get_mad_addr(buf);
    umad_set_addr_net(buf, a->lid, a->qpn, a->sl, htonl(0x80010000));
    if (umad_send(port, agent, buf, MAD_LEN, 0, 0) == 0) n++;
  }
  fprintf(stderr, "sa-echo: answered %lu\n", n);
  return 0;
}
