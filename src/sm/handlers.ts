/** The SM's unsolicited-MAD handlers: traps (repress, then re-sweep on link/port changes) and
 * SMInfo Get from other SMs. A malformed MAD is answered where it can be and logged, never thrown. */
import { MgmtClass, Method, SmpAttr, SMP_DATA_OFFSET, SMP_DATA_SIZE } from '../wire/mad.js';
import { smpResponse, trapRepress } from '../wire/builders.js';
import { SMInfo } from '../wire/sma.js';
import { decodeNotice, type NoticeSmp } from '../wire/notice.js';
import type { MadRpc } from '../rpc/madrpc.js';
import type { ReceivedMad } from '../transport/types.js';
import type { Logger } from '../util/log.js';
import type { SubnetManager } from './sm.js';

/** Traps that mean the topology or a port's state changed. */
const RESWEEP_TRAPS = new Set([128, 129, 130, 131, 144, 145]);

export function installSmHandlers(rpc: MadRpc, sm: SubnetManager, o: { portGuid: bigint; log: Logger; /** Every well-formed trap, e.g. for the SA to forward to subscribers. */ onNotice?: (n: NoticeSmp) => void }): () => void {
  const offTrap = rpc.onUnsolicited(
    MgmtClass.SubnLid,
    (m: ReceivedMad) => {
      rpc.respond(m, trapRepress(m.data));
      let trap: number;
      let notice: NoticeSmp;
      try {
        notice = decodeNotice(m.data, SMP_DATA_OFFSET, 'smp').notice;
        trap = notice.isGeneric ? notice.trapNumber : -1;
      } catch (e) {
        o.log.warn('malformed trap ignored', { from: m.addr.lid, error: (e as Error).message });
        return;
      }
      o.log.info('trap received', { trap, from: m.addr.lid });
      o.onNotice?.(notice);
      if (RESWEEP_TRAPS.has(trap)) sm.requestHeavySweep(`trap ${trap} from LID ${m.addr.lid}`);
    },
    { method: Method.Trap },
  );
  const answerSmInfo = (m: ReceivedMad): void => {
    if (m.data.length < SMP_DATA_OFFSET + SMP_DATA_SIZE) return;
    const resp = smpResponse(m.data, 0); // GetResp; a DR response also gets the D bit and keeps its path
    SMInfo.encode(sm.smInfo(o.portGuid), resp, SMP_DATA_OFFSET);
    rpc.respond(m, resp);
  };
  const offLid = rpc.onUnsolicited(MgmtClass.SubnLid, answerSmInfo, { method: Method.Get, attrId: SmpAttr.SMInfo });
  const offDr = rpc.onUnsolicited(MgmtClass.SubnDirected, answerSmInfo, { method: Method.Get, attrId: SmpAttr.SMInfo });
  return () => {
    offTrap();
    offLid();
    offDr();
  };
}
