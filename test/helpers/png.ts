/** A PNG as pixels, for tests that look at a screenshot: 8-bit RGB or RGBA, not interlaced (what
 * Chromium writes), decoded with node:zlib and the five PNG row filters. */
import { inflateSync } from 'node:zlib';

export interface Pixels {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel, row after row. */
  data: Uint8Array;
}

export function decodePng(png: Uint8Array): Pixels {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (buf.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error('not a PNG');
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let off = 8; off < buf.length; ) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const body = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colour, , , interlace] = [body[8], body[9], body[10], body[11], body[12]];
      if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6)) throw new Error(`PNG kind not decoded here: depth ${depth}, colour type ${colour}, interlace ${interlace}`);
      channels = colour === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const data = new Uint8Array(width * height * 4);
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const row = new Uint8Array(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? row[i - channels]! : 0;
      const b = prev[i]!;
      const c = i >= channels ? prev[i - channels]! : 0;
      let add = 0;
      if (filter === 1) add = a;
      else if (filter === 2) add = b;
      else if (filter === 3) add = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      row[i] = (row[i]! + add) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 3; k++) data[(y * width + x) * 4 + k] = row[x * channels + k]!;
      data[(y * width + x) * 4 + 3] = channels === 4 ? row[x * channels + 3]! : 255;
    }
    prev = row;
  }
  return { width, height, data };
}

/** Pixels of a rectangle (CSS px × scale) that differ from `background` by more than `tolerance` in any channel. */
export function countNotBackground(p: Pixels, rect: { x: number; y: number; width: number; height: number }, background: [number, number, number], tolerance = 8): number {
  let n = 0;
  for (let y = Math.max(0, Math.floor(rect.y)); y < Math.min(p.height, rect.y + rect.height); y++)
    for (let x = Math.max(0, Math.floor(rect.x)); x < Math.min(p.width, rect.x + rect.width); x++) {
      const i = (y * p.width + x) * 4;
      if (Math.abs(p.data[i]! - background[0]) > tolerance || Math.abs(p.data[i + 1]! - background[1]) > tolerance || Math.abs(p.data[i + 2]! - background[2]) > tolerance) n++;
    }
  return n;
}
