/** Dispatch of unsolicited MADs (requests, traps, reports) to the handlers registered per class. */
import { MadHeaderView } from '../wire/mad.js';
import type { ReceivedMad } from '../transport/types.js';

export interface UnsolicitedFilter {
  method?: number;
  attrId?: number;
}
export type UnsolicitedHandler = (mad: ReceivedMad) => void;

interface HandlerEntry {
  method: number | undefined;
  attrId: number | undefined;
  fn: UnsolicitedHandler;
  rank: number;
  order: number;
}

export class UnsolicitedDispatch {
  private readonly handlers = new Map<number, HandlerEntry[]>();
  private order = 0;

  /**
   * Register a handler for a class. Exactly one handler gets each MAD: the most specific match
   * (method+attribute, then method, then attribute, then class only), earliest registered first.
   * Returns an unsubscribe function.
   */
  on(mgmtClass: number, handler: UnsolicitedHandler, filter: UnsolicitedFilter = {}): () => void {
    const e: HandlerEntry = {
      method: filter.method,
      attrId: filter.attrId,
      fn: handler,
      rank: (filter.method !== undefined ? 2 : 0) + (filter.attrId !== undefined ? 1 : 0),
      order: this.order++,
    };
    const list = this.handlers.get(mgmtClass) ?? [];
    list.push(e);
    list.sort((a, b) => b.rank - a.rank || a.order - b.order);
    this.handlers.set(mgmtClass, list);
    return () => {
      const l = this.handlers.get(mgmtClass);
      if (!l) return;
      const i = l.indexOf(e);
      if (i >= 0) l.splice(i, 1);
    };
  }

  /** Hand `m` (a MAD with a full common header) to its handler; false when none wants it. */
  dispatch(m: ReceivedMad): boolean {
    const h = MadHeaderView.over(m.data);
    const list = this.handlers.get(h.mgmtClass);
    if (!list) return false;
    const method = h.method;
    const attrId = h.attrId;
    for (const e of list) {
      if ((e.method === undefined || e.method === method) && (e.attrId === undefined || e.attrId === attrId)) {
        e.fn(m);
        return true;
      }
    }
    return false;
  }
}
