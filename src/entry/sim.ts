/** `ibsm/sim`: the in-process simulated fabric (`createSimFabric`, or `sm.sim` of an SM opened on
 * one) with its fault controls, probes sent through it, and the clocks. */
export { createSimFabric } from '../sim/create.js';
export { SimFabric, SimFabricError, SimEndpoint, type SimFabricOptions, type FaultConfig, type FabricStats } from '../sim/fabric.js';
export { sendProbe, type ProbeHeader, type ProbeResult, type ProbeHop } from '../sim/probe.js';
export { AsapClock } from '../util/asap-clock.js';
export { PacedClock } from '../util/paced-clock.js';
export { RealClock, type Clock } from '../util/clock.js';
