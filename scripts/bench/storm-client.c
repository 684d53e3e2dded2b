/*
 * One host of the re-registration storm through ibsim (scripts/bench/storm-ibsim.mjs, issue #32), in
 * C over libibumad so that a hundred hosts cost the two cores little next to the SA they measure.
 *
 *   storm-client <start-at-epoch-ms> <peer-port-guid,...>
 *
 * At <start-at> it sends, all at once, what a host sends on ClientReregister:
 *   - MCMemberRecord Set: join the IPoIB broadcast group ff12:401b:ffff::ffff:ffff, full member;
 *   - ServiceRecord Set: a service of its own (ServiceID from its port GUID), lease infinite;
 *   - InformInfo Set: subscribe to every trap;
 *   - a PathRecord Get (SGID, DGID, reversible, one path, P_Key 0xffff: the kernel's form) per peer.
 * Each request is resent after 1 s without an answer (up to 8 sends), and after a random, doubling
 * delay (20 ms first) when answered BUSY (up to 8 times). It checks each answer (the response method,
 * our TID, status 0) and prints one line:
 *   RESULT {"ok":N,"lost":N,"busy":N,"timeouts":N,"errors":N,"firstError":"...","lastMs":N}
 * lastMs: from <start-at> to its last answer. Record layouts: libopensm's ib_types.h (ib_member_rec_t,
 * ib_service_record_t, ib_inform_info_t, ib_path_rec_t). Built by the bench with
 * `cc -O2 storm-client.c -libumad`; run under the umad2sim preload with SIM_HOST naming its node.
 */
#include <endian.h>
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
#define QKEY 0x80010000
#define MAD_LEN 256
#define SA_DATA 56
#define MAX_REQ 1027
#define RESEND_MS 1000
#define MAX_SENDS 8
#define MAX_BUSY 8

enum { GET = 0x01, SET = 0x02 };
enum { INFORM_INFO = 0x0003, SERVICE_RECORD = 0x0031, MCMEMBER_RECORD = 0x0038, PATH_RECORD = 0x0035 };


static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, v); }
/* A GID: the link-local prefix fe80::/64 and a port GUID. */
static void put_gid(uint8_t *p, uint64_t guid) { put64(p, 0xfe80000000000000ull); put64(p + 8, guid); }

struct req {
  uint8_t mad[MAD_LEN];
  uint32_t tid;
  uint64_t due;   /* when to (re)send; 0: answered or given up */
  int sends, busy;
  int outstanding; /* sent, waiting for an answer */
};

int main(int argc, char **argv) {
  bench_program = "storm-client";
  if (argc != 3) {
    fprintf(stderr, "usage: storm-client <start-at-ms> <peer-guid,...>\n");
    return 2;
  }
  uint64_t start_at = strtoull(argv[1], 0, 10);
  static uint64_t peers[MAX_REQ];
  int npeers = 0;
  for (char *s = strtok(argv[2], ","); s && npeers < MAX_REQ - 3; s = strtok(0, ",")) peers[npeers++] = strtoull(s, 0, 16);

  int rc, agent;
  int port = open_sa_agent(&agent);
  umad_port_t p;
  if ((rc = umad_get_port(NULL, 0, &p)) < 0) die("umad_get_port", rc);
  uint64_t guid = be64toh(p.port_guid);
  int sa_lid = p.sm_lid;
  umad_release_port(&p);
  if (!sa_lid) { fprintf(stderr, "storm-client: the port has no SM LID yet\n"); return 1; }
  srand((unsigned)getpid());

  static struct req reqs[MAX_REQ];
  int n = 0;
  uint32_t tid_base = ((uint32_t)getpid() & 0xffff) << 16, next_tid = 1;
#define NEW(method, attr, mask)                                                                   \
  do {                                                                                           \
    memset(&reqs[n], 0, sizeof reqs[n]);                                                         \
    uint8_t *m_ = reqs[n].mad;                                                                   \
    m_[0] = 1; m_[1] = SA_CLASS; m_[2] = SA_VERSION; m_[3] = (method);                           \
    put16(m_ + 16, (attr));                                                                      \
    put64(m_ + 48, (mask));                                                                      \
    reqs[n].due = 1;                                                                             \
  } while (0)

  /* MCMemberRecord: MGID 0, PortGID 16, Scope/JoinState 48. Mask: MGID | PortGID | JoinState. */
  NEW(SET, MCMEMBER_RECORD, (1ull << 0) | (1ull << 1) | (1ull << 16));
  put64(reqs[n].mad + SA_DATA, 0xff12401bffff0000ull);
  put64(reqs[n].mad + SA_DATA + 8, 0x00000000ffffffffull);
  put_gid(reqs[n].mad + SA_DATA + 16, guid);
  reqs[n].mad[SA_DATA + 48] = 0x01; /* full member */
  n++;
  /* ServiceRecord: ServiceID 0, ServiceGID 8, ServiceP_Key 24, ServiceLease 28, ServiceName 48.
   * Mask: ServiceID | ServiceGID | ServiceP_Key | ServiceLease | ServiceName. */
  NEW(SET, SERVICE_RECORD, (1ull << 0) | (1ull << 1) | (1ull << 2) | (1ull << 4) | (1ull << 6));
  put64(reqs[n].mad + SA_DATA, 0x1000000000000000ull | (guid & 0xffffffffffull));
  put_gid(reqs[n].mad + SA_DATA + 8, guid);
  put16(reqs[n].mad + SA_DATA + 24, 0xffff);
  put32(reqs[n].mad + SA_DATA + 28, 0xffffffff);
  snprintf((char *)reqs[n].mad + SA_DATA + 48, 64, "storm-%016llx", (unsigned long long)guid);
  n++;
  /* InformInfo: GID 0 (0), LIDRangeBegin 0xffff (16), IsGeneric 1 (22), Subscribe 1 (23), Type
   * 0xffff (24), TrapNumber 0xffff (26), QPN 1 << 8 | RespTimeValue 18 (28), ProducerType 0xffffff (33). */
  NEW(SET, INFORM_INFO, 0);
  put16(reqs[n].mad + SA_DATA + 16, 0xffff);
  reqs[n].mad[SA_DATA + 22] = 1;
  reqs[n].mad[SA_DATA + 23] = 1;
  put16(reqs[n].mad + SA_DATA + 24, 0xffff);
  put16(reqs[n].mad + SA_DATA + 26, 0xffff);
  put32(reqs[n].mad + SA_DATA + 28, (1u << 8) | 18);
  reqs[n].mad[SA_DATA + 33] = 0xff; reqs[n].mad[SA_DATA + 34] = 0xff; reqs[n].mad[SA_DATA + 35] = 0xff;
  n++;
  /* PathRecord: DGID 8, SGID 24, Reversible/NumbPath 49, P_Key 50.
   * Mask: DGID | SGID | Reversible | NumbPath | P_Key. */
  for (int i = 0; i < npeers; i++) {
    NEW(GET, PATH_RECORD, (1ull << 2) | (1ull << 3) | (1ull << 11) | (1ull << 12) | (1ull << 13));
    put_gid(reqs[n].mad + SA_DATA + 8, peers[i]);
    put_gid(reqs[n].mad + SA_DATA + 24, guid);
    reqs[n].mad[SA_DATA + 49] = 0x81;
    put16(reqs[n].mad + SA_DATA + 50, 0xffff);
    n++;
  }

  size_t usz = umad_size() + MAD_LEN;
  void *tx = calloc(1, usz), *rx = calloc(1, usz);
  unsigned long ok = 0, lost = 0, busy = 0, timeouts = 0, errors = 0;
  char first_error[96] = "";
  uint64_t last = 0;
  int live = n;

  while (now_ms() < start_at) usleep(500);
  uint64_t t0 = now_ms();
  while (live > 0) {
    uint64_t t = now_ms();
    for (int i = 0; i < n; i++) {
      struct req *r = &reqs[i];
      if (!r->due || t < r->due) continue;
      if (r->outstanding) { /* no answer within RESEND_MS */
        timeouts++;
        r->outstanding = 0;
      }
      if (r->sends >= MAX_SENDS) { lost++; r->due = 0; live--; continue; }
      r->tid = tid_base | (next_tid++ & 0xffff);
      put32(r->mad + 12, r->tid);
      memcpy(umad_get_mad(tx), r->mad, MAD_LEN);
      umad_set_addr(tx, sa_lid, 1, 0, QKEY);
      int s = umad_send(port, agent, tx, MAD_LEN, 0, 0);
      if (s < 0) die("umad_send", s);
      r->sends++;
      r->outstanding = 1;
      r->due = t + RESEND_MS;
    }
    int len = MAD_LEN;
    if (umad_recv(port, rx, &len, 20) < 0) continue;
    uint8_t *a = umad_get_mad(rx);
    if (!(a[3] & 0x80)) continue; /* a request to us (a Report): not answered here */
    uint32_t tid = ntohl(*(uint32_t *)(a + 12));
    int i;
    for (i = 0; i < n; i++) if (reqs[i].outstanding && reqs[i].tid == tid) break;
    if (i == n) continue; /* a late answer to a resent request */
    struct req *r = &reqs[i];
    r->outstanding = 0;
    if (umad_status(rx)) { r->due = now_ms(); continue; } /* undeliverable: send again */
    uint16_t status = ntohs(*(uint16_t *)(a + 4));
    if (status & 0x0001) {
      busy++;
      if (r->busy++ >= MAX_BUSY) { lost++; r->due = 0; live--; continue; }
      r->sends = 0;
      r->due = now_ms() + (uint64_t)(20.0 * (1 << (r->busy - 1)) * (0.5 + (double)rand() / RAND_MAX));
      continue;
    }
    if (a[3] == 0x81 && status == 0) ok++; /* GetResp answers a Get and a Set */
    else if (errors++ == 0)
      snprintf(first_error, sizeof first_error, "attr 0x%04x answered method 0x%02x status 0x%04x", ntohs(*(uint16_t *)(r->mad + 16)), a[3], status);
    r->due = 0;
    live--;
    last = now_ms() - t0;
  }
  printf("RESULT {\"ok\":%lu,\"lost\":%lu,\"busy\":%lu,\"timeouts\":%lu,\"errors\":%lu,\"firstError\":\"%s\",\"lastMs\":%llu}\n", ok, lost, busy, timeouts, errors, first_error, (unsigned long long)last);
  fflush(stdout);
  umad_unregister(port, agent);
  umad_close_port(port);
  return 0;
}
