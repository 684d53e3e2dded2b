// ibsim's default limits (2048 nodes, 256 switches, 13312 ports), raised to fit a fabric: the
// -N/-S/-P values both ibsim benches start it with.
const SWITCH = 2; // NodeInfo NodeType

/** @param {{ nodes: { type: number, numPorts: number }[] }} fabric */
export function ibsimLimits(fabric) {
  const switches = fabric.nodes.filter((n) => n.type === SWITCH).length;
  const ports = fabric.nodes.reduce((a, n) => a + n.numPorts + 1, 0);
  return { nodes: Math.max(2048, fabric.nodes.length + 16), switches: Math.max(256, switches + 16), ports: Math.max(13312, ports * 2 + 64) };
}

/** The same limits as ibsim's command-line options. */
export function ibsimLimitArgs(fabric) {
  const l = ibsimLimits(fabric);
  return ['-N', String(l.nodes), '-S', String(l.switches), '-P', String(l.ports)];
}
