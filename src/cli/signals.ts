/** Signals from the process's first instant (issue #28).
 *
 * SIGTERM, SIGINT, SIGHUP and SIGUSR1 are taken by one listener each, installed before anything
 * else runs: by the bin's first statement (scripts/build-bundle.mjs writes this function's source
 * there) and, when dist/cli/main.js is the entry, by main.ts. Until `ibsm run` claims them
 * (`claimSignals`) they are held: `run` replays them once it can act on them (a SIGTERM before
 * the first SMP stops the SM before it sends one, with the stopping line and exit 0). Another
 * command leaves SIGTERM, SIGINT and SIGHUP to Node's default (no listener: the process ends by
 * the signal at once).
 *
 * SIGUSR1 never reaches Node's own handler, which opens the inspector on 127.0.0.1:9229: a
 * debugger anyone on the host could attach to in a root process. While a listener is installed
 * (from the first statement on, for the process's life) Node's handler is not called; before it,
 * during Node's own start-up, the bin's shebang sets the inspector's address to one that cannot
 * be bound (`--inspect-port=[fe80::1]:9229`: a link-local address without an interface is refused
 * by bind), so even then no port is opened.
 *
 * That covers signals from the bin's first statement on. Before it (Node's start-up, 20-50 ms)
 * the launcher covers them: native/ibsm-launch.c, the process operators and systemd signal, runs
 * the bin (or the single executable) as its child and holds the signals it receives until the
 * child says, through IBSM_READY_FD, that its listeners are installed.
 *
 * Self-contained (no import, nothing from its module): the bundle's bin runs its source text. */
export type IbsmSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP' | 'SIGUSR1';

export interface EarlySignals {
  /** Signals received before a command claimed them, oldest first. */
  pending: IbsmSignal[];
  /** The claiming command's handler. */
  handler?: (sig: IbsmSignal) => void;
  /** Held for a command to come (`run`), else the default for all but SIGUSR1. */
  hold: boolean;
}

/** Install the listeners (once per process); `hold`: the command will claim them (`run`).
 * Without `hold` only SIGUSR1's (ignored: never the inspector): SIGTERM, SIGINT and SIGHUP keep
 * Node's default, which ends the process at once even while a long computation (`ibsm route` of
 * a large fabric) holds the event loop. */
export function installEarlySignals(hold: boolean): EarlySignals {
  const g = globalThis as { __ibsmSignals?: EarlySignals & { listen?: (sig: IbsmSignal) => void } };
  let s = g.__ibsmSignals;
  if (!s) {
    const state: EarlySignals & { listen?: (sig: IbsmSignal) => void } = { pending: [], hold };
    const listening = new Set<string>();
    state.listen = (sig) => {
      if (listening.has(sig)) return;
      listening.add(sig);
      process.on(sig, () => {
        if (state.handler) return state.handler(sig);
        if (state.hold) state.pending.push(sig);
      });
    };
    g.__ibsmSignals = s = state;
    state.listen('SIGUSR1');
  }
  if (hold) {
    s.hold = true;
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) s.listen!(sig);
  }
  // Started by the launcher (native/ibsm-launch.c, the PID signals are sent to): it holds them
  // until this byte, the listeners being installed, then sends them on. (The bin and the single
  // executable run this source as CommonJS, where `require` is; the tsc build's ESM does not, and
  // the launcher never runs it.)
  const ready = process.env.IBSM_READY_FD;
  if (ready !== undefined && typeof require === 'function') {
    delete process.env.IBSM_READY_FD;
    const fs = require('node:fs') as typeof import('node:fs');
    try {
      fs.writeSync(Number(ready), '.');
      fs.closeSync(Number(ready));
    } catch {
      // not a pipe of the launcher's: nothing to tell
    }
  }
  return s;
}

/** A command takes the signals: `handler` gets each one, those received so far first. Returns a
 * release (the signals held again, for a command that ends but whose process goes on). */
export function claimSignals(handler: (sig: IbsmSignal) => void): () => void {
  const s = installEarlySignals(true);
  s.handler = handler;
  const early = s.pending.splice(0);
  for (const sig of early) handler(sig);
  return () => {
    if (s.handler === handler) s.handler = undefined;
  };
}
