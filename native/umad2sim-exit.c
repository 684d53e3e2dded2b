/* Process exit under umad2sim (ibsim's LD_PRELOAD that stands in for the kernel's umad devices).
 *
 * umad2sim's atexit clean-up holds its global mutex while it cancels and joins its receiver thread;
 * that thread takes the same mutex after each datagram it reads from ibsim, and pthread_mutex_lock
 * is no cancellation point. A MAD that arrives as the process exits therefore leaves the receiver
 * waiting for the mutex and the clean-up waiting for the receiver: the process never ends (seen in
 * test/signals.test.ts once in 15 runs once our sends moved to a sender thread, which sends up to
 * the moment of close, so answers arrive later). umad2sim is not ours to change; this takes the
 * arrivals away first:
 *   1. SIM_CTL_DISCONNECT on umad2sim's control socket to ibsim (the abstract name
 *      "<sockname>:ctl<pid>"), with the client id that names the data socket's peer
 *      ("<sockname>:out<id>"). ibsim is single-threaded and answers after it marked the client gone;
 *      it delivers nothing to a client that is gone (find_client skips it), so once the answer is
 *      here only what is already in the data socket can still arrive;
 *   2. wait until the data socket ("<sockname>:in<pid>") is empty, and a little longer, so the
 *      receiver has handed over the last datagram and is back in poll() (a cancellation point).
 * umad2sim's clean-up then asks ibsim to disconnect again, which ibsim accepts (the client is not
 * connected: it answers without an error), cancels the receiver in poll() and joins it.
 * The message layout is ibsim's struct sim_ctl (ibsim.h: magic, clientid, type, len, 64 bytes). */
#define _GNU_SOURCE
#include "umad2sim-exit.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SIM_MAGIC 0xdeadbeefu
#define SIM_CTL_DISCONNECT 2u
#define UMAD2SIM_FIRST_FD 1024
#define SETTLE_MS 5

struct sim_ctl_msg {
  uint32_t magic;
  uint32_t clientid;
  uint32_t type;
  uint32_t len;
  char data[64];
};

/* The abstract unix-socket name of `fd` via getsockname (peer 0) or getpeername (peer 1), or "". */
static void socket_name(int fd, int peer, char *out, size_t size) {
  struct sockaddr_un a;
  socklen_t len = sizeof a;
  out[0] = '\0';
  int r = peer ? getpeername(fd, (struct sockaddr *)&a, &len) : getsockname(fd, (struct sockaddr *)&a, &len);
  if (r != 0 || a.sun_family != AF_UNIX) return;
  size_t base = offsetof(struct sockaddr_un, sun_path);
  if (len <= base + 1 || a.sun_path[0] != '\0') return;
  size_t n = len - base - 1;
  if (n >= size) n = size - 1;
  memcpy(out, a.sun_path + 1, n);
  out[n] = '\0';
  while (n > 0 && out[n - 1] == '\0') out[--n] = '\0';
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a > b && strcmp(s + a - b, suffix) == 0;
}

/* poll() is umad2sim's (it takes its mutex); ppoll is the kernel's. */
static int wait_readable(int fd, int ms) {
  struct pollfd p = {fd, POLLIN, 0};
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  return ppoll(&p, 1, &t, NULL) == 1 && (p.revents & POLLIN);
}

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

int ibsm_umad2sim_quiesce(int timeout_ms) {
  char ctl_suffix[32], in_suffix[32], name[128];
  snprintf(ctl_suffix, sizeof ctl_suffix, ":ctl%d", (int)getpid());
  snprintf(in_suffix, sizeof in_suffix, ":in%d", (int)getpid());
  int ctl = -1, data = -1;
  long clientid = -1;
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -errno;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char *end;
    long fd = strtol(e->d_name, &end, 10);
    if (*end != '\0' || fd < 0 || fd >= UMAD2SIM_FIRST_FD || fd == dirfd(d)) continue;
    socket_name((int)fd, 0, name, sizeof name);
    if (ends_with(name, ctl_suffix)) ctl = (int)fd;
    if (ends_with(name, in_suffix)) {
      data = (int)fd;
      socket_name((int)fd, 1, name, sizeof name);
      const char *out = strstr(name, ":out");
      if (out) clientid = strtol(out + 4, NULL, 10);
    }
  }
  closedir(d);
  if (ctl < 0 || data < 0 || clientid < 0) return 0;  // not under umad2sim, or not attached

  struct sim_ctl_msg m;
  memset(&m, 0, sizeof m);
  m.magic = SIM_MAGIC;
  m.clientid = (uint32_t)clientid;
  m.type = SIM_CTL_DISCONNECT;
  if (send(ctl, &m, sizeof m, MSG_NOSIGNAL) != (ssize_t)sizeof m) return errno == ECONNREFUSED ? 0 : -errno;
  if (!wait_readable(ctl, timeout_ms)) return -ETIMEDOUT;
  if (recv(ctl, &m, sizeof m, 0) != (ssize_t)sizeof m) return -EIO;

  // Drain: what ibsim wrote before it took the disconnect is in the data socket; the receiver
  // thread reads it. Empty for SETTLE_MS: it is back in poll().
  int waited = 0;
  while (waited < timeout_ms) {
    if (!wait_readable(data, 0)) {
      sleep_ms(SETTLE_MS);
      waited += SETTLE_MS;
      if (!wait_readable(data, 0)) break;
    } else {
      sleep_ms(1);
      waited += 1;
    }
  }
  return 1;
}
