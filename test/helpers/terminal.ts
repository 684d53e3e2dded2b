/** A terminal's screen for the bytes written to it (tests of the TTY progress line). */

/** What a terminal shows: \r to column 0, ESC[K erases to the end of the line, \n next line. */
export function render(s: string): string[] {
  const lines: string[] = [''];
  let col = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const row = lines.length - 1;
    if (ch === '\r') col = 0;
    else if (ch === '\n') {
      lines.push('');
      col = 0;
    } else if (ch === '\x1b' && s.startsWith('[K', i + 1)) {
      lines[row] = lines[row]!.slice(0, col);
      i += 2;
    } else {
      const l = lines[row]!;
      lines[row] = l.slice(0, col) + ch + l.slice(col + 1);
      col++;
    }
  }
  return lines;
}
