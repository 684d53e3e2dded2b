/** Link width/speed names as ibnetdiscover prints them ("4xSDR", "4xEDR"), from PortInfo fields. */

const WIDTH: Readonly<Record<number, string>> = { 1: '1x', 2: '4x', 4: '8x', 8: '12x', 16: '2x' };
const SPEED: Readonly<Record<number, string>> = { 1: 'SDR', 2: 'DDR', 4: 'QDR' };
const SPEED_EXT: Readonly<Record<number, string>> = { 1: 'FDR', 2: 'EDR', 4: 'HDR', 8: 'NDR' };

export function widthName(linkWidthActive: number): string {
  return WIDTH[linkWidthActive] ?? `?(${linkWidthActive})x`;
}

/** Extended speeds win when active (as ibnetdiscover reports them). */
export function speedName(linkSpeedActive: number, linkSpeedExtActive = 0): string {
  if (linkSpeedExtActive && SPEED_EXT[linkSpeedExtActive]) return SPEED_EXT[linkSpeedExtActive]!;
  return SPEED[linkSpeedActive] ?? `?(${linkSpeedActive})`;
}

export function widthCode(name: string): number | undefined {
  const e = Object.entries(WIDTH).find(([, n]) => n.toLowerCase() === name.toLowerCase());
  return e ? Number(e[0]) : undefined;
}

export function speedCodes(name: string): { speed: number; ext: number } | undefined {
  const s = Object.entries(SPEED).find(([, n]) => n === name.toUpperCase());
  if (s) return { speed: Number(s[0]), ext: 0 };
  const x = Object.entries(SPEED_EXT).find(([, n]) => n === name.toUpperCase());
  return x ? { speed: 0, ext: Number(x[0]) } : undefined;
}
