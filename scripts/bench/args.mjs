// The benches' command line: `opt('--name', default)` is the word after --name (the default when
// it is absent or last), `flag('--name')` whether it is there. One parser for every bench.
export const argv = process.argv.slice(2);

export function opt(name, def) {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : def;
}

export const flag = (name) => argv.includes(name);
