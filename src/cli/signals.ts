/** Signals from the process's first instant (issue #28).
 *
 * SIGTERM, SIGINT, SIGHUP and SIGUSR1 are taken by one listener each, installed before anything
 * else runs: by the bin's first statement (scripts/build-bundle.mjs writes this function's source
 * there) and, when dist/cli/main.js is the entry, by main.ts. Until a command claims them
 * (`claimSignals`, by `ibsm run`) they are held: `run` replays them once it can act on them (a
 * SIGTERM before the first SMP stops the SM before it sends one, with the stopping line and exit
 * 0). Another command leaves SIGTERM, SIGINT and SIGHUP to their default (the listener removed,
 * the signal raised again: the process ends by it, as without a listener).
 *
 * SIGUSR1 never reaches Node's own handler, which opens the inspector on 127.0.0.1:9229: a
 * debugger anyone on the host could attach to in a root process. While a listener is installed
 * (from the first statement on, for the process's life) Node's handler is not called; before it,
 * during Node's own start-up, the bin's shebang sets the inspector's address to one that cannot
 * be bound (`--inspect-port=[fe80::1]:9229`: a link-local address without an interface is refused
 * by bind), so even then no port is opened.
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

/** Install the listeners (once per process); `hold`: the command will claim them (`run`). */
export function installEarlySignals(hold: boolean): EarlySignals {
  const g = globalThis as { __ibsmSignals?: EarlySignals };
  if (g.__ibsmSignals) return g.__ibsmSignals;
  const s: EarlySignals = { pending: [], hold };
  g.__ibsmSignals = s;
  const sigs = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGUSR1'] as const;
  for (const sig of sigs) {
    const on = (): void => {
      if (s.handler) return s.handler(sig);
      if (s.hold) {
        s.pending.push(sig);
        return;
      }
      if (sig === 'SIGUSR1') return; // never the inspector
      // Not claimed and not held: the signal's default, as without a listener.
      process.removeListener(sig, on);
      process.kill(process.pid, sig);
    };
    process.on(sig, on);
  }
  return s;
}

/** A command takes the signals: `handler` gets each one, those received so far first. Returns a
 * release (the signals held again, for a command that ends but whose process goes on). */
export function claimSignals(handler: (sig: IbsmSignal) => void): () => void {
  const s = installEarlySignals(true);
  s.hold = true;
  s.handler = handler;
  const early = s.pending.splice(0);
  for (const sig of early) handler(sig);
  return () => {
    if (s.handler === handler) s.handler = undefined;
  };
}
