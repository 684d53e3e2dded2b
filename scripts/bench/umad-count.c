/*
 * MAD counting shim for scripts/bench/sm-vs-opensm.mjs: preloaded into an SM (OpenSM or ibsm) so
 * that both are counted the same way, at the libibumad boundary.
 *
 * It wraps umad_send() and umad_recv(), forwards to the real ones (dlsym(RTLD_NEXT)), and counts
 * every MAD handed to umad_send by (management class, method, attribute ID), plus send errors and
 * received MADs carrying a non-zero status (a send the simulator dropped or timed out).
 *
 * The counters live in a file named by $UMAD_COUNT_FILE, mmap()ed MAP_SHARED, so the figures are
 * on disk whatever way the process ends (exit, SIGTERM, SIGKILL): there is no exit hook to miss.
 * At exit (destructor) it also stores the peak RSS (getrusage ru_maxrss) and the CPU time used
 * (user + system) into the header; the first umad_send stamps its wall-clock time.
 *
 * File layout (little endian, all fields 64-bit):
 *   [0] magic 0x31544e43444d4155 ("UAMDCNT1")  [1] slots  [2] send errors  [3] recv with status != 0
 *   [4] total sends  [5] peak RSS kB (0 until exit)  [6] first umad_send, µs since the epoch
 *   [7] CPU µs, user + system (0 until exit)
 *   then `slots` entries of { key, count }: key = 1 + (class << 24 | method << 16 | attrId), 0 = empty.
 *
 * build: cc -shared -fPIC -O2 -o umad-count.so umad-count.c -ldl
 * use:   LD_PRELOAD="umad-count.so /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so" UMAD_COUNT_FILE=f prog
 * (the shim defines neither open/read/write nor anything umad2sim defines, so the order only
 * matters in that the shim must be found before libibumad, which any LD_PRELOAD entry is).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x31544e43444d4155ULL
#define SLOTS 1024 /* power of two */
#define HDR 8

typedef int (*send_fn)(int, int, void *, int, int, int);
typedef int (*recv_fn)(int, void *, int *, int);
typedef void *(*getmad_fn)(void *);
typedef int (*status_fn)(void *);

static send_fn real_send;
static recv_fn real_recv;
static getmad_fn get_mad;
static status_fn get_status;
static volatile uint64_t *table; /* HDR + 2 * SLOTS words, or NULL when not counting */

static void setup(void)
{
	static int done;
	if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		return;
	real_send = (send_fn)dlsym(RTLD_NEXT, "umad_send");
	real_recv = (recv_fn)dlsym(RTLD_NEXT, "umad_recv");
	get_mad = (getmad_fn)dlsym(RTLD_DEFAULT, "umad_get_mad");
	get_status = (status_fn)dlsym(RTLD_DEFAULT, "umad_status");
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void init(void)
{
	const char *path = getenv("UMAD_COUNT_FILE");
	size_t bytes = (HDR + 2 * SLOTS) * sizeof(uint64_t);
	setup();
	if (!path || !*path)
		return;
	/* A shell that execs the SM (bash -c 'ulimit -n 1024 && exec sm') opens the file first; the
	 * exec'ed image truncates and maps it again, so only the final program's counts remain. */
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (ftruncate(fd, (off_t)bytes) != 0) {
		close(fd);
		return;
	}
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return;
	table = p;
	table[1] = SLOTS;
	__atomic_store_n(&table[0], MAGIC, __ATOMIC_RELEASE);
}

__attribute__((destructor)) static void fini(void)
{
	struct rusage ru;
	if (table && getrusage(RUSAGE_SELF, &ru) == 0) {
		table[5] = (uint64_t)ru.ru_maxrss;
		table[7] = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u + (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	}
}

static void count(uint32_t key)
{
	volatile uint64_t *slots = table + HDR;
	uint64_t k = (uint64_t)key + 1;
	uint32_t h = (key * 2654435761u) & (SLOTS - 1);
	for (int i = 0; i < SLOTS; i++, h = (h + 1) & (SLOTS - 1)) {
		uint64_t cur = __atomic_load_n(&slots[2 * h], __ATOMIC_ACQUIRE);
		if (cur == 0) {
			uint64_t zero = 0;
			if (__atomic_compare_exchange_n(&slots[2 * h], &zero, k, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				cur = k;
			else
				cur = zero;
		}
		if (cur == k) {
			__atomic_add_fetch(&slots[2 * h + 1], 1, __ATOMIC_RELAXED);
			return;
		}
	}
	/* Table full (more than SLOTS distinct keys): counted in the total only. */
}

int umad_send(int portid, int agentid, void *umad, int length, int timeout_ms, int retries)
{
	setup();
	if (table && get_mad) {
		const uint8_t *mad = get_mad(umad);
		/* MAD common header: [1] class, [3] method, [16..17] attribute ID (big endian). */
		uint32_t key = (uint32_t)mad[1] << 24 | (uint32_t)mad[3] << 16 | (uint32_t)mad[16] << 8 | mad[17];
		count(key);
		if (__atomic_add_fetch(&table[4], 1, __ATOMIC_RELAXED) == 1) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			table[6] = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
		}
	}
	int rc = real_send(portid, agentid, umad, length, timeout_ms, retries);
	if (rc < 0 && table)
		__atomic_add_fetch(&table[2], 1, __ATOMIC_RELAXED);
	return rc;
}

int umad_recv(int portid, void *umad, int *length, int timeout_ms)
{
	setup();
	int rc = real_recv(portid, umad, length, timeout_ms);
	if (rc >= 0 && table && get_status && get_status(umad) != 0)
		__atomic_add_fetch(&table[3], 1, __ATOMIC_RELAXED);
	return rc;
}
