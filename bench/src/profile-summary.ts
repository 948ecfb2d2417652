// Summarizes a V8 .cpuprofile (from `node --cpu-prof`): top functions by self time and by
// inclusive time. Usage: node bench/dist/profile-summary.js FILE.cpuprofile [N]

import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: profile-summary FILE.cpuprofile [N]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Time per sample from timeDeltas, attributed to the sampled node.
const self = new Map<number, number>();
p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

const label = (n: Node) => {
  const f = n.callFrame;
  const where = f.url
    ? `${f.url.replace(/^.*\/(node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?)?/, '')}:${f.lineNumber + 1}`
    : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
};

const selfBy = new Map<string, number>();
const inclBy = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id)!;
  selfBy.set(label(n), (selfBy.get(label(n)) ?? 0) + t);
  // Inclusive: every distinct function on the stack gets the sample once.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (seen.has(l)) continue;
    seen.add(l);
    inclBy.set(l, (inclBy.get(l) ?? 0) + t);
  }
}
const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [l, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${l}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`);
show('self time', selfBy);
show('inclusive time', inclBy);
