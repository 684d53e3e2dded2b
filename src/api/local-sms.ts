/** The SMs this process runs on a device (umad), by port: an SA client opened in the same process
 * on the same port shares the SM's MadRpc (api/sa.ts), since a second agent of the SA class on a
 * port the SM serves would never see its answers (the SM's server agent takes the class). */
import type { MadRpc } from '../rpc/madrpc.js';
import type { LocalPortInfo } from '../transport/types.js';

export interface LocalSm {
  readonly rpc: MadRpc;
  readonly port: LocalPortInfo;
  /** The SA's LID (the SM's own), once the subnet is up. */
  saLid(): number | undefined;
}

const running = new Set<LocalSm>();

/** Record an SM of this process on a device; returns its removal. */
export function addLocalSm(sm: LocalSm): () => void {
  running.add(sm);
  return () => void running.delete(sm);
}

/** The SM of this process on the port a client would open (by GUID, or CA and port number; none
 * given: the one SM there is). */
export function localSmOn(o: { ca?: string; port?: number; guid?: bigint }): LocalSm | undefined {
  const fits = [...running].filter((s) => (o.guid === undefined || s.port.portGuid === o.guid) && (o.ca === undefined || s.port.caName === o.ca) && (o.port === undefined || s.port.portNum === o.port));
  return fits.length === 1 ? fits[0] : undefined;
}
