// Every switch's LFT read back with the real tools, 4 `ibroute -n <lid>` at a time (ibsim serves
// at most 10 clients). ibroute reads blocks up to top/64 exclusive, so with the top LID a multiple
// of 64 the last block (that one LID) is never read: that block is read with
// `smpdump -L <lid> 0x19 <block>` (the raw LinearForwardingTable). As sm-vs-opensm.mjs does.
import { runClient } from './ibsim.mjs';

/** The 64 port bytes of one LinearForwardingTable block in smpdump's dump (lines of 16-bit hex words). */
export function lftBytesOfSmpdump(text) {
  const bytes = [];
  for (const m of text.matchAll(/^\s*((?:[0-9a-f]{4}\s+)*[0-9a-f]{4})\s*$/gim)) for (const h of m[1].split(/\s+/)) bytes.push(parseInt(h.slice(0, 2), 16), parseInt(h.slice(2), 16));
  return bytes.length >= 64 ? bytes.slice(0, 64) : undefined;
}

/** `switches`: [{ i: node index, lid }]. Resolves with { lfts: Map(node index → LFT, 255 = no
 *  entry), errors: [text], patched: switches whose last block smpdump read }. */
export async function readLfts(fabric, switches, env, dir) {
  const lfts = new Map();
  const errors = [];
  let patched = 0;
  const maxLid = fabric.nodes.reduce((a, n) => n.ports.reduce((b, p) => Math.max(b, p?.lid ?? 0), a), 0);
  const queue = switches.slice();
  const worker = async () => {
    for (let s = queue.shift(); s; s = queue.shift()) {
      if (!s.lid) {
        errors.push(`switch ${fabric.nodes[s.i].desc} has no LID`);
        continue;
      }
      const r = await runClient('ibroute', ['-n', String(s.lid)], env, dir, 600_000);
      if (r.code !== 0) {
        errors.push(`ibroute ${s.lid}: ${r.err.trim().split('\n').pop()}`);
        continue;
      }
      const entries = [...r.out.matchAll(/^0x([0-9a-f]+) (\d+)/gim)].map((m) => [parseInt(m[1], 16), Number(m[2])]);
      if (maxLid % 64 === 0 && !entries.some(([l]) => l >= maxLid)) {
        const block = maxLid / 64;
        const d = await runClient('smpdump', ['-L', String(s.lid), '0x19', String(block)], env, dir);
        const bytes = lftBytesOfSmpdump(d.out);
        if (d.code !== 0 || !bytes) errors.push(`smpdump LFT block ${block} of ${s.lid}: ${(d.err || d.out).trim().split('\n').pop()}`);
        else {
          patched++;
          bytes.forEach((p, i) => p !== 255 && block * 64 + i <= maxLid && entries.push([block * 64 + i, p]));
        }
      }
      const t = new Uint8Array(entries.reduce((a, [l]) => Math.max(a, l), 0) + 1).fill(255);
      for (const [l, p] of entries) t[l] = p;
      lfts.set(s.i, t);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return { lfts, errors, patched };
}
