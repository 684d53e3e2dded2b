/** The hardware keys every generator takes (model/generators.ts): port speeds and widths per tier,
 * and the NVIDIA switch and HCA models by generation. */
import { NodeType } from '../../wire/mad.js';
import type { Fabric, FabricNode } from '../fabric.js';
import { SPEED_NAMES, WIDTH_NAMES } from '../rates.js';
import type { GeneratorArgs, GeneratorParam } from './builder.js';

/** A named switch or HCA: a generation's bundle of the hardware keys (its ports' speed and width)
 * and the VendorID/DeviceID its NodeInfo reports. */
export interface HardwareModel {
  name: string;
  kind: 'switch' | 'hca';
  /** The speed name of the generation (what `speed=` would say). */
  speed: string;
  width: string;
  vendorId: number;
  deviceId: number;
}

/** NVIDIA (Mellanox, VendorID 0x02c9) switches and HCAs by generation: what `model=` names. The
 * NDR and XDR generations (Quantum-2 / ConnectX-7, Quantum-X800 / ConnectX-8) hide their extended
 * speeds from a PortInfo without AttributeModifier bit 31 (OpenSM issue #38); XDR ports have PortInfo
 * byte 56 and CapabilityMask2 IsExtendedSpeeds2Supported/IsLinkSpeedXDRSupported; HDR and later
 * ports of 4x also do 2x (sim/node.ts). */
export const HARDWARE_GENERATIONS: readonly { generation: string; switch: HardwareModel; hca: HardwareModel }[] = (
  [
    ['QDR', 'InfiniScale-IV', 0xbd36, 'ConnectX-2', 0x673c],
    ['FDR', 'SwitchX-2', 0xc738, 'ConnectX-3', 0x1003],
    ['EDR', 'Switch-IB-2', 0xcf08, 'ConnectX-5', 0x1017],
    ['HDR', 'Quantum', 0xd2f0, 'ConnectX-6', 0x101b],
    ['NDR', 'Quantum-2', 0xd2f2, 'ConnectX-7', 0x1021],
    ['XDR', 'Quantum-X800', 0xd2f4, 'ConnectX-8', 0x1023],
  ] as const
).map(([generation, sw, swId, hca, hcaId]) => ({
  generation,
  switch: { name: sw, kind: 'switch', speed: generation, width: '4x', vendorId: 0x02c9, deviceId: swId },
  hca: { name: hca, kind: 'hca', speed: generation, width: '4x', vendorId: 0x02c9, deviceId: hcaId },
}));

const MODEL_NAMES = HARDWARE_GENERATIONS.flatMap((g) => [g.generation, g.switch.name, g.hca.name]);

/** The README's table of the models (`npm run docs`). */
export function hardwareModelsMarkdown(): string {
  const id = (m: HardwareModel): string => `${m.name} (DeviceID 0x${m.deviceId.toString(16)})`;
  return ['| `model=` | switch | HCA | ports |', '|---|---|---|---|', ...HARDWARE_GENERATIONS.map((g) => `| \`${g.generation.toLowerCase()}\` | ${id(g.switch)} | ${id(g.hca)} | ${g.switch.width} ${g.generation} |`)].join('\n');
}

/**
 * The hardware keys every generator takes: what the ports of each kind of node can do, as
 * ibnetdiscover names widths and speeds. `speed`/`width`: every switch port (default 4x SDR, as
 * ibsim); `leafspeed`/`leafwidth`: the ports of switches with hosts on them; `hostspeed`/
 * `hostwidth`: the hosts' ports. A link trains to the best width and speed both of its ends know,
 * so `speed=NDR,leafspeed=HDR` is HDR leaves under NDR spines. `model`/`leafmodel`/`hostmodel` name
 * the hardware instead (HARDWARE_GENERATIONS): a generation's speed and width, and the NodeInfo IDs
 * of its switch or HCA; a speed or width key given with it wins.
 */
export const HARDWARE_PARAMS: readonly GeneratorParam[] = [
  { name: 'speed', description: `what switch ports can do: ${SPEED_NAMES.join(', ')} (default SDR)` },
  { name: 'width', description: `switch port width: ${WIDTH_NAMES.join(', ')} (default 4x)` },
  { name: 'leafspeed', description: 'speed of the ports of switches with hosts (default: speed)' },
  { name: 'leafwidth', description: 'width of the ports of switches with hosts (default: width)' },
  { name: 'hostspeed', description: 'speed of the hosts\' ports (default: leafspeed)' },
  { name: 'hostwidth', description: 'width of the hosts\' ports (default: leafwidth)' },
  {
    name: 'model',
    description: `the switches' hardware, and the hosts' generation: ${HARDWARE_GENERATIONS.map((g) => `${g.generation} (${g.switch.name} / ${g.hca.name})`).join(', ')}; a generation or a switch name`,
  },
  { name: 'leafmodel', description: 'the hardware of switches with hosts (default: model)' },
  { name: 'hostmodel', description: "the hosts' hardware: a generation or an HCA name (default: leafmodel's generation)" },
];

/** The generation a `model=` value names, or a failure that lists what is valid. */
function modelOf(a: GeneratorArgs, key: string, kind: 'switch' | 'hca'): (typeof HARDWARE_GENERATIONS)[number] | undefined {
  const v = a.values.get(key);
  if (v === undefined) return undefined;
  const lc = v.toLowerCase();
  const g = HARDWARE_GENERATIONS.find((x) => [x.generation, x.switch.name, x.hca.name].some((n) => n.toLowerCase() === lc));
  if (!g) return a.fail(`parameter ${key}=${v}: expected one of ${MODEL_NAMES.join(', ')}`);
  const other = kind === 'switch' ? g.hca : g.switch;
  if (other.name.toLowerCase() === lc) a.fail(`parameter ${key}=${v}: ${other.name} is ${kind === 'switch' ? 'an HCA (hostmodel= names the hosts\')' : 'a switch (model= and leafmodel= name the switches\')'}; ${key}= takes a generation or ${kind === 'switch' ? 'a switch' : 'an HCA'}`);
  return g;
}

export function applyHardware(f: Fabric, a: GeneratorArgs): Fabric {
  if (!HARDWARE_PARAMS.some((p) => a.has(p.name))) return f;
  const pick = (name: string, valid: readonly string[], fallback: string): string => {
    const v = a.values.get(name);
    if (v === undefined) return fallback;
    const hit = valid.find((x) => x.toLowerCase() === v.toLowerCase());
    if (!hit) a.fail(`parameter ${name}=${v}: expected one of ${valid.join(', ')}`);
    return hit;
  };
  // each tier: its model (else the one above's), its speed and width (else its model's, else the
  // tier above's)
  const spineModel = modelOf(a, 'model', 'switch');
  const leafModel = modelOf(a, 'leafmodel', 'switch') ?? spineModel;
  const hostModel = modelOf(a, 'hostmodel', 'hca') ?? leafModel;
  const speed = pick('speed', SPEED_NAMES, spineModel?.switch.speed ?? 'SDR');
  const width = pick('width', WIDTH_NAMES, spineModel?.switch.width ?? '4x');
  const leafSpeed = pick('leafspeed', SPEED_NAMES, a.has('leafmodel') ? leafModel!.switch.speed : speed);
  const leafWidth = pick('leafwidth', WIDTH_NAMES, a.has('leafmodel') ? leafModel!.switch.width : width);
  const hostSpeed = pick('hostspeed', SPEED_NAMES, a.has('hostmodel') ? hostModel!.hca.speed : leafSpeed);
  const hostWidth = pick('hostwidth', WIDTH_NAMES, a.has('hostmodel') ? hostModel!.hca.width : leafWidth);
  const isSw = (n: FabricNode): boolean => n.type === NodeType.Switch;
  const leaf = f.nodes.map((n) => isSw(n) && n.ports.some((p, pn) => pn > 0 && p?.peer && !isSw(f.nodes[p.peer.node]!)));
  f.nodes.forEach((n, i) => {
    const model = n.type === NodeType.CA ? hostModel?.hca : !isSw(n) ? undefined : leaf[i] ? leafModel?.switch : spineModel?.switch;
    if (model) {
      n.vendorId = model.vendorId;
      n.deviceId = model.deviceId;
    }
    n.ports.forEach((p, pn) => {
      if (!p || (isSw(n) && pn === 0)) return;
      p.speed = !isSw(n) ? hostSpeed : leaf[i] ? leafSpeed : speed;
      p.width = !isSw(n) ? hostWidth : leaf[i] ? leafWidth : width;
    });
  });
  return f;
}
