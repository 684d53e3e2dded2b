/** One SM per port (issue #28): `ibsm run --umad` claims its port before it marks it IsSM, so a
 * second SM process on the same port is refused with an error naming the first, and never opens
 * (so never closes) the port's issm device: its exit cannot clear the IsSM bit of the port the
 * first one still uses.
 *
 * Two guards, for the two kinds of device:
 * - On a real HCA the kernel holds one opener of a port's issm device at a time; ibsm opens it
 *   without waiting (native/issm.c, O_NONBLOCK), so OpenSM or another ibsm holding it makes the
 *   open fail at once (EAGAIN): SmPortBusyError. The kernel lets go when the holder exits, however.
 * - ibsim's umad2sim preload emulates the issm device without that exclusion (a second open and
 *   its close clear the first's IsSM), so the port is also claimed with a lock file named by the
 *   port GUID (and the ibsim instance), holding the owner's PID: a live owner refuses the claim,
 *   a dead one's (SIGKILL) file is taken over. /run/ibsm when it can be written, else the
 *   temporary directory (always, under ibsim: its fabrics come and go). */
import { IbsmError } from '../util/errors.js';
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatGuid, guidHex } from '../util/guid.js';

/** Another SM runs on the port. */
export class SmPortBusyError extends IbsmError {
  override readonly name = 'SmPortBusyError';
}


function lockDir(sim: boolean): string {
  for (const d of sim ? [os.tmpdir()] : ['/run/ibsm', os.tmpdir()]) {
    try {
      mkdirSync(d, { recursive: true, mode: 0o755 });
      const probe = path.join(d, `.ibsm-probe-${process.pid}`);
      closeSync(openSync(probe, 'w'));
      unlinkSync(probe);
      return d;
    } catch {
      /* the next */
    }
  }
  return os.tmpdir();
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Claim the port (GUID `portGuid`, named `where` in messages) for this process's SM; returns the
 * release. Throws SmPortBusyError when a live process holds it. `env`: IBSIM_SOCKNAME (umad2sim)
 * names the simulated fabric, whose port GUIDs other ibsim instances repeat. */
export function claimSmPort(portGuid: bigint, where: string, env: NodeJS.ProcessEnv = process.env): () => void {
  const sim = env.LD_PRELOAD?.includes('umad2sim') ? `-${(env.IBSIM_SOCKNAME ?? 'sim').replace(/[^\w.-]/g, '_')}` : '';
  const file = path.join(lockDir(sim !== ''), `ibsm-port-${guidHex(portGuid)}${sim}.lock`);
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o644);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return () => undefined; // no lock to take here: the kernel's guard stands
      let owner = NaN;
      try {
        owner = Number.parseInt(readFileSync(file, 'utf8'), 10);
      } catch {
        /* removed meanwhile */
      }
      if (owner !== process.pid && alive(owner)) {
        throw new SmPortBusyError(`another SM runs on ${where} (port GUID ${formatGuid(portGuid)}): process ${owner} holds ${file}; stop it first, or give this one another --ca/--port/--guid`);
      }
      try {
        unlinkSync(file); // its owner is gone (killed): taken over
      } catch {
        /* raced: the next attempt says */
      }
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      process.off('exit', release);
      try {
        if (Number.parseInt(readFileSync(file, 'utf8'), 10) === process.pid) unlinkSync(file);
      } catch {
        /* gone already */
      }
    };
    process.once('exit', release);
    return release;
  }
  throw new SmPortBusyError(`another SM is claiming ${where} (port GUID ${formatGuid(portGuid)}) at the same moment (${file})`);
}
