/*
 * The floor of the re-registration storm through ibsim (scripts/bench/storm-ibsim.mjs --sm floor,
 * issue #32): an "SA" that computes nothing. It takes the SA class's requests at the SM's port and
 * answers each at once with its own bytes, the method turned into GetResp and the status 0 (what
 * storm-client.c counts as answered). The time until every host has its answers from it is what
 * ibsim and the host processes cost by themselves: no SA through ibsim can answer faster.
 *
 *   storm-floor        (under the umad2sim preload, SIM_HOST naming the SM's node, SIM_SET_ISSM=1)
 *
 * Prints READY once its agent is registered, then answers until killed.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/umad.h>
#include "bench-client.h"

#define MAD_LEN 256

int main(void) {
  bench_program = "storm-floor";
  int rc = umad_init();
  if (rc < 0) die("umad_init", rc);
  int port = umad_open_port(NULL, 0);
  if (port < 0) die("umad_open_port", port);
  long methods[16 / sizeof(long)] = {0};
  /* Get (0x01), Set (0x02), GetTable (0x12), Delete (0x15): the requests an SA takes. */
  int wanted[] = {0x01, 0x02, 0x12, 0x15};
  for (unsigned i = 0; i < sizeof wanted / sizeof wanted[0]; i++) methods[wanted[i] / (8 * sizeof(long))] |= 1L << (wanted[i] % (8 * sizeof(long)));
  /* ibsim hands unsolicited requests only to a process marked as SM (the bench sets
   * SIM_SET_ISSM=1 for it); it registers the SM class as an SM does. */
  int smi = umad_register(port, 0x81, 1, 0, NULL);
  if (smi < 0) die("umad_register(SM class)", smi);
  int agent = umad_register(port, 0x03, 2, 1, methods);
  if (agent < 0) die("umad_register", agent);
  printf("READY\n");
  fflush(stdout);
  uint8_t rx[umad_size() + MAD_LEN];
  uint8_t tx[umad_size() + MAD_LEN];
  for (;;) {
    int len = MAD_LEN;
    if (umad_recv(port, rx, &len, -1) < 0) continue;
    uint8_t *a = umad_get_mad(rx);
    if (a[3] & 0x80) continue; /* a response: not ours to answer */
    memcpy(tx, rx, sizeof tx);
    uint8_t *m = umad_get_mad(tx);
    m[3] = 0x81;      /* GetResp */
    m[4] = m[5] = 0;  /* status 0 */
    ib_mad_addr_t *ad = umad_get_mad_addr(rx);
    umad_set_addr(tx, ntohs(ad->lid), ntohl(ad->qpn), ad->sl, ntohl(ad->qkey));
    rc = umad_send(port, agent, tx, len > 0 ? len : MAD_LEN, 0, 0);
    if (rc < 0) die("umad_send", rc);
  }
}
