/*
 * The reference loop for scripts/bench/umad-rtt.mjs: directed-route NodeInfo Gets over libibumad
 * with a window of N outstanding, for a fixed time. Responses are matched on the low 32 bits of
 * the TID (the library and ibsim own the high bits). A MAD handed back with a non-zero status
 * (dropped) is counted and sent again.
 *
 * usage: umad-rtt <seconds> <outstanding> <hops>   (hops 0: the local port; 1: out of port 1)
 * prints: {"done":N,"errors":N,"seconds":S,"rate":R}
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <infiniband/umad.h>

#define MAD_LEN 256
#define SLOTS 4096 /* power of two, larger than any window */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return ntohl(v);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s <seconds> <outstanding> <hops>\n", argv[0]);
		return 2;
	}
	double seconds = atof(argv[1]);
	int window = atoi(argv[2]);
	int hops = atoi(argv[3]);
	if (window < 1 || window >= SLOTS || hops < 0 || hops > 1) {
		fprintf(stderr, "outstanding must be 1-%d and hops 0 or 1\n", SLOTS - 1);
		return 2;
	}
	umad_init();
	int port = umad_open_port(NULL, 0);
	if (port < 0) {
		fprintf(stderr, "umad_open_port: %s\n", strerror(-port));
		return 1;
	}
	long mask[16 / sizeof(long)] = { 0 };
	int agent = umad_register(port, 0x81, 1, 0, mask);
	if (agent < 0 || umad_register(port, 0x01, 1, 0, mask) < 0) {
		fprintf(stderr, "umad_register failed\n");
		return 1;
	}
	size_t usz = umad_size();
	uint8_t *sbuf = calloc(1, usz + MAD_LEN), *rbuf = calloc(1, usz + MAD_LEN);
	uint8_t *mad = umad_get_mad(sbuf);
	mad[0] = 1;		/* base version */
	mad[1] = 0x81;		/* directed-route SMP */
	mad[2] = 1;
	mad[3] = 0x01;		/* Get */
	mad[7] = hops;		/* hop count; hop pointer 0 */
	mad[16] = 0x00;
	mad[17] = 0x11;		/* NodeInfo */
	mad[32] = mad[33] = mad[34] = mad[35] = 0xff;	/* DrSLID, DrDLID permissive */
	mad[129] = 1;		/* initial path[1] */
	umad_set_addr(sbuf, 0xffff, 0, 0, 0);

	static uint32_t slot[SLOTS];
	uint32_t seq = 1;
	long done = 0, errors = 0;
	int outstanding = 0;
	double start = now(), end = start + seconds;

	for (;;) {
		int running = now() < end;
		while (running && outstanding < window) {
			put32(mad + 12, seq);
			slot[seq & (SLOTS - 1)] = seq;
			if (umad_send(port, agent, sbuf, MAD_LEN, 0, 0) < 0) {
				fprintf(stderr, "umad_send failed\n");
				return 1;
			}
			seq++;
			outstanding++;
		}
		if (!outstanding)
			break;
		int len = MAD_LEN;
		int r = umad_recv(port, rbuf, &len, 1000);
		if (r < 0) {
			if (r == -ETIMEDOUT && !running)
				break;	/* lost ones at the end */
			continue;
		}
		uint32_t tid = get32((uint8_t *)umad_get_mad(rbuf) + 12);
		if (slot[tid & (SLOTS - 1)] != tid)
			continue;
		slot[tid & (SLOTS - 1)] = 0;
		outstanding--;
		if (umad_status(rbuf))
			errors++;
		else
			done++;
	}
	double elapsed = now() - start;
	printf("{\"done\":%ld,\"errors\":%ld,\"seconds\":%.3f,\"rate\":%.0f}\n", done, errors, elapsed, done / elapsed);
	umad_close_port(port);
	return 0;
}
