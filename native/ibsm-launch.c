/* ibsm's launcher (issue #28): signals handled from the process's very first instant.
 *
 * Node takes 20-50 ms from exec to the first statement of a script, and a signal in that window
 * gets Node's default: SIGTERM, SIGINT and SIGHUP end the process with nothing said, SIGUSR1 starts
 * the inspector. This program is the process operators and systemd see (the PID they signal); it
 * runs the ibsm command (node with the bundle's bin, or the single executable) as its child:
 *
 *   - at entry it blocks SIGTERM, SIGINT, SIGHUP and SIGUSR1 (and SIGCHLD) and takes them from a
 *     signalfd: a signal to it is never lost and never acted on by a default;
 *   - the child is exec'd with the signal mask the launcher was started with and with
 *     IBSM_READY_FD, the write end of a pipe; src/cli/signals.ts writes one byte there once its
 *     listeners are installed (a SIGTERM to ibsm run from then on is the stopping line and exit 0,
 *     a SIGUSR1 never Node's inspector);
 *   - until that byte (or the pipe's end) the signals received are kept, in order; then they are
 *     sent to the child, and every later one as it comes;
 *   - the child has PR_SET_PDEATHSIG SIGTERM: the launcher killed, the SM stops;
 *   - the launcher ends as its child did: its exit status, or the same signal (SIGTERM, SIGINT,
 *     SIGHUP: what systemd and shells take as the child's end), or 128 + n for a signal that would
 *     dump a core (no core of this process).
 *
 * Only the launcher is to be signalled (systemd: KillMode=mixed, the units under packaging/): a
 * signal sent to the child during Node's start-up gets Node's default.
 *
 * What it runs is compiled in (scripts/build-native.mjs, buildLauncher, writes ibsm-launch.h from
 * scripts/launcher.mjs): IBSM_LAUNCH_TARGET, relative to the launcher's own directory (symlinks
 * resolved) unless absolute; with IBSM_LAUNCH_NODE (the node it was built with) the target is a
 * script run by node with ibsm_launch_flags, node being $IBSM_NODE if set, else IBSM_LAUNCH_NODE if
 * it is there, else `node` on PATH; without it the target is the single executable, run as is.
 * ibsm_launch_unset and ibsm_launch_set: the environment changed for the child. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ibsm-launch.h"

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

static void fail(const char *what, const char *detail) {
  dprintf(2, "ibsm: %s%s%s: %s\n", what, detail ? " " : "", detail ? detail : "", strerror(errno));
  _exit(127);
}

/* The launcher ends as the child did (see above). */
static void end_as(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  switch (sig) {
    case SIGTERM: case SIGINT: case SIGHUP: case SIGUSR1: case SIGUSR2: case SIGPIPE: case SIGALRM: case SIGKILL: {
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      signal(sig, SIG_DFL);
      raise(sig);
      sigprocmask(SIG_UNBLOCK, &one, NULL);
      break;
    }
  }
  _exit(128 + sig);
}

int main(int argc, char **argv) {
  sigset_t taken, orig;
  sigemptyset(&taken);
  for (size_t i = 0; i < NFORWARDED; i++) sigaddset(&taken, forwarded[i]);
  sigaddset(&taken, SIGCHLD);
  sigprocmask(SIG_BLOCK, &taken, &orig);
  /* SIGCHLD ignored (inherited so) would reap the child unseen: its status is wanted. */
  signal(SIGCHLD, SIG_DFL);
  /* A signal the launcher was started with ignored (nohup: SIGHUP) stays ignored: not forwarded. */
  for (size_t i = 0; i < NFORWARDED; i++) {
    struct sigaction sa;
    if (sigaction(forwarded[i], NULL, &sa) == 0 && sa.sa_handler == SIG_IGN) sigdelset(&taken, forwarded[i]);
  }
  int sfd = signalfd(-1, &taken, SFD_CLOEXEC);
  if (sfd < 0) fail("signalfd", NULL);

  /* The target: relative to this executable's directory unless absolute. */
  static char target[PATH_MAX];
  if (IBSM_LAUNCH_TARGET[0] == '/') {
    snprintf(target, sizeof target, "%s", IBSM_LAUNCH_TARGET);
  } else {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0) fail("readlink", "/proc/self/exe");
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    if ((size_t)snprintf(target, sizeof target, "%s/%s", self, IBSM_LAUNCH_TARGET) >= sizeof target) {
      errno = ENAMETOOLONG;
      fail("path of", IBSM_LAUNCH_TARGET);
    }
  }

  int ready[2];
  if (pipe2(ready, O_CLOEXEC) < 0) fail("pipe2", NULL);
  pid_t launcher = getpid();
  pid_t child = fork();
  if (child < 0) fail("fork", NULL);
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != launcher) _exit(128 + SIGTERM);
    close(ready[0]);
    close(sfd);
    int fd = dup(ready[1]); /* without O_CLOEXEC: the child's to write and close */
    if (fd < 0) fail("dup", NULL);
    char num[16];
    snprintf(num, sizeof num, "%d", fd);
    setenv("IBSM_READY_FD", num, 1);
    for (const char *const *u = ibsm_launch_unset; *u; u++) unsetenv(*u);
    for (const char *const *s = ibsm_launch_set; *s; s++) putenv((char *)*s);
    sigprocmask(SIG_SETMASK, &orig, NULL);
    const char *node = IBSM_LAUNCH_NODE;
    size_t nflags = 0;
    while (ibsm_launch_flags[nflags]) nflags++;
    char **args = calloc((size_t)argc + nflags + 2, sizeof *args);
    if (!args) fail("calloc", NULL);
    size_t k = 0;
    if (!node[0]) {
      args[k++] = target;
      for (int i = 1; i < argc; i++) args[k++] = argv[i];
      execv(target, args);
      fail("cannot run", target);
    }
    args[k++] = "node";
    for (size_t i = 0; i < nflags; i++) args[k++] = (char *)ibsm_launch_flags[i];
    args[k++] = target;
    for (int i = 1; i < argc; i++) args[k++] = argv[i];
    const char *override = getenv("IBSM_NODE");
    if (override && override[0]) {
      execv(override, args);
      fail("cannot run node from IBSM_NODE", override);
    }
    if (access(node, X_OK) == 0) execv(node, args);
    execvp("node", args);
    dprintf(2, "ibsm: node not found (neither %s nor on PATH): install Node.js 20 or later, or set IBSM_NODE to its path\n", node);
    _exit(127);
  }
  close(ready[1]);

  int queue[64], queued = 0, is_ready = 0;
  for (;;) {
    struct pollfd p[2] = {{.fd = sfd, .events = POLLIN}, {.fd = is_ready ? -1 : ready[0], .events = POLLIN}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      fail("poll", NULL);
    }
    if (p[1].revents) {
      /* The byte, or the pipe's end (the child closed it or is gone): signals go to it from now. */
      char b;
      ssize_t n = read(ready[0], &b, 1);
      if (n >= 0 || errno != EINTR) {
        is_ready = 1;
        close(ready[0]);
        for (int i = 0; i < queued; i++) kill(child, queue[i]);
        queued = 0;
      }
    }
    if (p[0].revents) {
      struct signalfd_siginfo si[16];
      ssize_t n = read(sfd, si, sizeof si);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        fail("read signalfd", NULL);
      }
      for (size_t i = 0; i < (size_t)n / sizeof si[0]; i++) {
        int sig = (int)si[i].ssi_signo;
        if (sig == SIGCHLD) {
          int status;
          pid_t w;
          while ((w = waitpid(child, &status, WNOHANG)) < 0 && errno == EINTR) {
          }
          if (w == child) end_as(status);
          if (w < 0) fail("waitpid", NULL);
        } else if (is_ready) {
          kill(child, sig);
        } else if (queued < (int)(sizeof queue / sizeof queue[0])) {
          queue[queued++] = sig;
        }
      }
    }
  }
}
