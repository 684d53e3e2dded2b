import type { PortInfo } from '../wire/sma.js';

/** PathRecord/MCMemberRecord rate enumeration → Gb/s (IB_PATH_RECORD_RATE_*). 23 (800) and 24
 * (1200) as rdma-core's libibmad iba_types.h; 25 (1600, XDR 8x) as the kernel's IB_RATE_1600_GBPS
 * and NVIDIA's OpenSM fork (IBA 1.8); 26 (2400, XDR 12x) only NVIDIA's fork defines, and nothing
 * else gives 26 another meaning, so it is kept. */
export const RATE_GBPS: Readonly<Record<number, number>> = {
  2: 2.5, 5: 5, 3: 10, 11: 14, 6: 20, 15: 25, 19: 28, 4: 30, 7: 40, 20: 50, 12: 56, 8: 60, 9: 80, 16: 100, 13: 112, 10: 120, 14: 168, 17: 200, 18: 300, 21: 400, 22: 600,
  23: 800, 24: 1200, 25: 1600, 26: 2400,
};
/** Rate enumerations in increasing bandwidth. */
export const RATES_ASCENDING: readonly number[] = Object.keys(RATE_GBPS)
  .map(Number)
  .sort((a, b) => RATE_GBPS[a]! - RATE_GBPS[b]!);

/** Lanes of each LinkWidthActive code; Gb/s per lane of each LinkSpeedActive / LinkSpeedExtActive code. */
const LANES: Readonly<Record<number, number>> = { 1: 1, 2: 4, 4: 8, 8: 12, 16: 2 };
const LANE_GBPS: Readonly<Record<number, number>> = { 1: 2.5, 2: 5, 4: 10 };
const LANE_GBPS_EXT: Readonly<Record<number, number>> = { 1: 14, 2: 25, 4: 50, 8: 100 };
/** LinkSpeedExtActive2 (PortInfo byte 56): 1 = XDR, 212.5 Gb/s signalling, 200 Gb/s of data a lane. */
const LANE_GBPS_EXT2: Readonly<Record<number, number>> = { 1: 200 };

type LinkFields = Pick<PortInfo, 'linkWidthActive' | 'linkSpeedActive' | 'linkSpeedExtActive'> & Partial<Pick<PortInfo, 'linkSpeedExtActive2'>>;

/** Gb/s of data a lane of the active speed carries: LinkSpeedExtActive2 first, then
 * LinkSpeedExtActive, then LinkSpeedActive (each wins over the older field when set). */
function laneGbps(pi: LinkFields): number | undefined {
  return (pi.linkSpeedExtActive2 && LANE_GBPS_EXT2[pi.linkSpeedExtActive2]) || (pi.linkSpeedExtActive && LANE_GBPS_EXT[pi.linkSpeedExtActive]) || LANE_GBPS[pi.linkSpeedActive];
}

/** The rate code whose Gb/s is the largest not above `gbps` (0 below 2.5). */
export function rateCodeFor(gbps: number): number {
  let best = 0;
  for (const r of RATES_ASCENDING) if (RATE_GBPS[r]! <= gbps) best = r;
  return best;
}

/** The rate of a port's active width and speed; an unknown width counts as 1x, an unknown speed as SDR. */
export function portRate(pi: LinkFields): number {
  const lanes = LANES[pi.linkWidthActive] ?? 1;
  const lane = laneGbps(pi) ?? 2.5;
  return rateCodeFor(lanes * lane);
}

/** The rate of a port's active link, or 0 when the port or its width or speed is unknown. */
export function knownPortRate(pi: LinkFields | undefined): number {
  if (!pi) return 0;
  const lanes = LANES[pi.linkWidthActive];
  const lane = laneGbps(pi);
  return lanes && lane ? rateCodeFor(lanes * lane) : 0;
}

/** Gb/s of a rate code (0 for an unknown one). */
export function rateGbps(code: number): number {
  return RATE_GBPS[code] ?? 0;
}

/** Gb/s of data a link carries whose ends can do the widths and speeds ibnetdiscover names ("4x",
 * "EDR"): it trains to the widest width and fastest speed both ends have. Undefined when an end's
 * width or speed is missing or unknown (routing/traffic.ts's link capacities). */
export function namedLinkGbps(a: { width?: string; speed?: string }, b: { width?: string; speed?: string } = a): number | undefined {
  let lanes = Infinity;
  let lane = Infinity;
  for (const end of [a, b]) {
    const w = end.width === undefined ? undefined : widthCode(end.width);
    const s = end.speed === undefined ? undefined : speedCodes(end.speed);
    const g = s && laneGbps({ linkWidthActive: w ?? 0, linkSpeedActive: s.speed, linkSpeedExtActive: s.ext, linkSpeedExtActive2: s.ext2 });
    if (w === undefined || !g) return undefined;
    lanes = Math.min(lanes, LANES[w]!);
    lane = Math.min(lane, g);
  }
  return lanes * lane;
}

/** Compare two rate codes by bandwidth. */
export function rateCompare(a: number, b: number): number {
  return (RATE_GBPS[a] ?? 0) - (RATE_GBPS[b] ?? 0);
}

/** Link width/speed names as ibnetdiscover prints them ("4xSDR", "4xEDR"), from PortInfo fields. */

const WIDTH: Readonly<Record<number, string>> = { 1: '1x', 2: '4x', 4: '8x', 8: '12x', 16: '2x' };
const SPEED: Readonly<Record<number, string>> = { 1: 'SDR', 2: 'DDR', 4: 'QDR' };
const SPEED_EXT: Readonly<Record<number, string>> = { 1: 'FDR', 2: 'EDR', 4: 'HDR', 8: 'NDR' };
const SPEED_EXT2: Readonly<Record<number, string>> = { 1: 'XDR' };

export function widthName(linkWidthActive: number): string {
  return WIDTH[linkWidthActive] ?? `?(${linkWidthActive})x`;
}

/** Extended speeds win when active (as ibnetdiscover reports them: its combined extended speed is
 * LinkSpeedExtActive | LinkSpeedExtActive2 << 5, XDR = 32). */
export function speedName(linkSpeedActive: number, linkSpeedExtActive = 0, linkSpeedExtActive2 = 0): string {
  if (linkSpeedExtActive2 && SPEED_EXT2[linkSpeedExtActive2]) return SPEED_EXT2[linkSpeedExtActive2]!;
  if (linkSpeedExtActive && SPEED_EXT[linkSpeedExtActive]) return SPEED_EXT[linkSpeedExtActive]!;
  return SPEED[linkSpeedActive] ?? `?(${linkSpeedActive})`;
}

export function widthCode(name: string): number | undefined {
  const e = Object.entries(WIDTH).find(([, n]) => n.toLowerCase() === name.toLowerCase());
  return e ? Number(e[0]) : undefined;
}

export function speedCodes(name: string): { speed: number; ext: number; ext2: number } | undefined {
  const s = Object.entries(SPEED).find(([, n]) => n === name.toUpperCase());
  if (s) return { speed: Number(s[0]), ext: 0, ext2: 0 };
  const x = Object.entries(SPEED_EXT).find(([, n]) => n === name.toUpperCase());
  if (x) return { speed: 0, ext: Number(x[0]), ext2: 0 };
  const x2 = Object.entries(SPEED_EXT2).find(([, n]) => n === name.toUpperCase());
  return x2 ? { speed: 0, ext: 0, ext2: Number(x2[0]) } : undefined;
}

/** The speed names, slowest first (what topology files and generator specs accept). */
export const SPEED_NAMES: readonly string[] = [...Object.values(SPEED), ...Object.values(SPEED_EXT), ...Object.values(SPEED_EXT2)];
/** The width names ("1x" .. "12x"). */
export const WIDTH_NAMES: readonly string[] = ['1x', '2x', '4x', '8x', '12x'];
