/** Colour as colour-blind eyes see it, for tests of the pictures' colours. */

/** Machado, Oliveira and Fernandes (2009), severity 1, on linear RGB: what a dichromat sees. */
export const CVD: Record<string, number[][]> = {
  deuteranopia: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]],
  protanopia: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
  tritanopia: [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.3039]],
};
/** CIE76 ΔE between two sRGB colours (#rrggbb) as seen through `m` (none: normal vision). */
export function deltaE(x: string, y: string, m?: number[][]): number {
  const lab = (h: string): number[] => {
    const l = [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    const [r, g, b] = m ? m.map((row) => Math.min(1, Math.max(0, row[0]! * l[0]! + row[1]! * l[1]! + row[2]! * l[2]!))) : l;
    const f = (t: number): number => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116);
    const fx = f((0.4124564 * r! + 0.3575761 * g! + 0.1804375 * b!) / 0.95047);
    const fy = f(0.2126729 * r! + 0.7151522 * g! + 0.072175 * b!);
    const fz = f((0.0193339 * r! + 0.119192 * g! + 0.9503041 * b!) / 1.08883);
    return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
  };
  const [p, q] = [lab(x), lab(y)];
  return Math.hypot(p[0]! - q[0]!, p[1]! - q[1]!, p[2]! - q[2]!);
}

/** A CSS colour as getComputedStyle gives it ("rgb(r, g, b)") as #rrggbb. */
export function hexOfCss(c: string): string {
  const m = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(c);
  if (!m) throw new Error(`not an rgb() colour: ${c}`);
  return `#${m.slice(1, 4).map((x) => Number(x).toString(16).padStart(2, '0')).join('')}`;
}
