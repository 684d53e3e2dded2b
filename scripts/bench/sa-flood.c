/*
 * A PathRecord flood client in C over libibumad, for scripts/bench/sa-pathrecord.mjs.
 *
 * The Node flood client (test/fixtures/ibsim-sa-client.mjs) spends more CPU per request than the SA
 * it measures, and on a two-core machine that CPU is taken from the SA and from ibsim. This client
 * costs a few microseconds per request, so the figure it reports is the SA's (and ibsim's).
 *
 *   sa-flood <slid> <sa-lid> <outstanding> <duration-ms> <start-at-epoch-ms> <dlid,dlid,...>
 *
 * <slid> 0 means the port's own LID and <sa-lid> 0 the port's SM LID. It keeps <outstanding>
 * PathRecord Gets (SLID = <slid>, DLID cycling through the list) in flight to <sa-lid> from
 * <start-at> for <duration-ms>. It checks every answer (GetResp, our TID, the DLID we asked for),
 * resends after 1 s without an answer, or at once when the request comes back undeliverable
 * (umad status non-zero), and prints one line:
 *   RESULT {"answered":N,"ok":N,"errors":N,"timeouts":N,"undelivered":N,"elapsedMs":N}
 * Built by the bench with `cc -O2 sa-flood.c -libumad`; run under the umad2sim preload.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/umad.h>
#include "bench-client.h"

#define SA_CLASS 0x03
#define SA_VERSION 2
#define PATH_RECORD 0x0035
#define QKEY 0x80010000
#define MAD_LEN 256
#define SA_DATA 56
#define MAX_OUT 1024
#define RESEND_MS 1000


struct slot { uint32_t tid; uint16_t dlid; uint64_t sent; };

int main(int argc, char **argv) {
  bench_program = "sa-flood";
  if (argc != 7) {
    fprintf(stderr, "usage: sa-flood <slid> <sa-lid> <outstanding> <duration-ms> <start-at-ms> <dlid,...>\n");
    return 2;
  }
  int slid = atoi(argv[1]), salid = atoi(argv[2]), outstanding = atoi(argv[3]);
  uint64_t duration = strtoull(argv[4], 0, 10), start_at = strtoull(argv[5], 0, 10);
  if (outstanding < 1 || outstanding > MAX_OUT) { fprintf(stderr, "sa-flood: outstanding must be 1..%d\n", MAX_OUT); return 2; }
  uint16_t *dlids = calloc(65536, sizeof *dlids);
  int ndl = 0;
  for (char *s = strtok(argv[6], ","); s && ndl < 65536; s = strtok(0, ",")) dlids[ndl++] = (uint16_t)atoi(s);
  if (!ndl) { fprintf(stderr, "sa-flood: no DLIDs\n"); return 2; }

  int rc, agent;
  int port = open_sa_agent(&agent);
  if (slid == 0 || salid == 0) { /* our own LID and the SM's, as the port showed them when we attached */
    umad_port_t p;
    if ((rc = umad_get_port(NULL, 0, &p)) < 0) die("umad_get_port", rc);
    if (slid == 0) slid = p.base_lid;
    if (salid == 0) salid = p.sm_lid;
    umad_release_port(&p);
    if (!slid || !salid) { fprintf(stderr, "sa-flood: the port has no LID or no SM LID yet (LID %d, SM LID %d)\n", slid, salid); return 1; }
  }

  size_t usz = umad_size() + MAD_LEN;
  void *tx = calloc(1, usz), *rx = calloc(1, usz);
  uint8_t *m = umad_get_mad(tx);
  m[0] = 1; m[1] = SA_CLASS; m[2] = SA_VERSION; m[3] = 0x01; /* Get */
  *(uint16_t *)(m + 16) = htons(PATH_RECORD);
  *(uint32_t *)(m + 52) = htonl((1u << 4) | (1u << 5)); /* ComponentMask: DLID | SLID */
  *(uint16_t *)(m + SA_DATA + 42) = htons((uint16_t)slid);
  umad_set_addr(tx, salid, 1, 0, QKEY);

  struct slot slots[MAX_OUT];
  uint32_t tid_base = ((uint32_t)getpid() & 0xffff) << 16, next_tid = 0;
  unsigned long answered = 0, ok = 0, errors = 0, timeouts = 0, undelivered = 0;
  int k = 0;

  while (now_ms() < start_at) usleep(1000);
  uint64_t t0 = now_ms(), end = t0 + duration;

#define SEND(i)                                                               \
  do {                                                                        \
    slots[i].tid = tid_base | (next_tid++ & 0xffff);                          \
    slots[i].dlid = dlids[k++ % ndl];                                         \
    slots[i].sent = now_ms();                                                 \
    *(uint32_t *)(m + 12) = htonl(slots[i].tid);                              \
    *(uint16_t *)(m + SA_DATA + 40) = htons(slots[i].dlid);                   \
    int r_ = umad_send(port, agent, tx, MAD_LEN, 0, 0);                       \
    if (r_ < 0) die("umad_send", r_);                                         \
  } while (0)

  for (int i = 0; i < outstanding; i++) SEND(i);
  int live = outstanding;
  while (live > 0) {
    int len = MAD_LEN;
    int r = umad_recv(port, rx, &len, 100);
    uint64_t t = now_ms();
    if (r >= 0) {
      uint8_t *a = umad_get_mad(rx);
      uint32_t tid = ntohl(*(uint32_t *)(a + 12));
      int i;
      for (i = 0; i < outstanding; i++) if (slots[i].sent && slots[i].tid == tid) break;
      if (i == outstanding) continue; /* a late answer to a resent request */
      if (umad_status(rx)) { /* our own request, undeliverable (ibsim hands it back at once) */
        undelivered++;
        slots[i].sent = 0;
        if (t < end) SEND(i); else live--;
        continue;
      }
      answered++;
      uint16_t status = ntohs(*(uint16_t *)(a + 4));
      uint16_t rdlid = ntohs(*(uint16_t *)(a + SA_DATA + 40));
      if (a[3] == 0x81 && status == 0 && rdlid == slots[i].dlid) ok++;
      else if (errors++ == 0 && getenv("SA_FLOOD_DEBUG"))
        fprintf(stderr, "sa-flood: answer method 0x%x status 0x%x DLID %u (asked %u) umad status %d\n", a[3], status, rdlid, slots[i].dlid, umad_status(rx));
      slots[i].sent = 0;
      if (t < end) SEND(i); else live--;
    }
    for (int i = 0; i < outstanding; i++) {
      if (slots[i].sent && t - slots[i].sent >= RESEND_MS) {
        timeouts++;
        slots[i].sent = 0;
        if (t < end) SEND(i); else live--;
      }
    }
  }
  uint64_t elapsed = now_ms() - t0;
  printf("RESULT {\"answered\":%lu,\"ok\":%lu,\"errors\":%lu,\"timeouts\":%lu,\"undelivered\":%lu,\"elapsedMs\":%llu}\n",
         answered, ok, errors, timeouts, undelivered, (unsigned long long)elapsed);
  fflush(stdout);
  umad_unregister(port, agent);
  umad_close_port(port);
  return 0;
}
