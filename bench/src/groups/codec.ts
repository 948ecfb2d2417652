import { backends, pgDatabaseUrl } from '../backends.js';
import { type Fleet, startFleet } from '../fleet/fleet.js';
import { median } from '../measure.js';
import { type Group, type Row, rateRow } from '../row.js';
import { E2E_PROCESSES, PER_PROCESS } from './e2e.js';

// codec-overhead: the e2e-postgres workload (10-step workflows, worker processes, 4 in flight)
// from runners with an AES-GCM codec against the same without one, in alternating rounds on the
// same server; each handler returns a small object (a value to encrypt per write; the e2e rows'
// handlers return null, which is never encrypted). Informational: what encryption costs, no goal.

const PER_ROUND = 600;
const ROUNDS = 3;

/** Warms a fresh fleet: the first few hundred workflows of a new process cost more than the ones after. */
async function warm(f: Fleet, tag: string): Promise<void> {
  for (let w = 0; w < 2; w++) await f.run(300, `${tag}-warm-${w}-${Date.now().toString(36)}`);
}

export const codecOverhead: Group = {
  name: 'codec-overhead',
  async run(): Promise<Row[]> {
    const b = backends.find((x) => x.name === 'postgres');
    const down = b ? await b.unavailable() : 'no postgres store adapter';
    if (!b || down)
      return [
        { ...rateRow('codec-overhead', null, null, 'workflows/s', null), note: `not measured: ${down}` },
      ];
    const common = {
      pgUrl: pgDatabaseUrl(b.url, 'stepfold_bench'),
      processes: E2E_PROCESSES,
      concurrency: PER_PROCESS,
      outputs: true,
    };
    const plain = await startFleet({ ...common, table: 'codec_plain' });
    const sealed = await startFleet({ ...common, table: 'codec_sealed', codec: true });
    try {
      await warm(plain, 'plain');
      await warm(sealed, 'sealed');
      const ours: number[] = [];
      const theirs: number[] = [];
      const cpu: { plain: number[]; sealed: number[] } = { plain: [], sealed: [] };
      for (let r = 0; r < ROUNDS; r++) {
        // Alternating order, so neither side always meets the server right after the other.
        const order = r % 2 === 0 ? (['sealed', 'plain'] as const) : (['plain', 'sealed'] as const);
        for (const side of order) {
          const run = await (side === 'sealed' ? sealed : plain).run(
            PER_ROUND,
            `${side}-${r}-${Date.now().toString(36)}`,
          );
          (side === 'sealed' ? ours : theirs).push(run.workflowsPerSec);
          cpu[side].push(run.cpuUsPerWrite);
        }
      }
      const note = `with aesGcmCodec vs without, handlers returning { ok, attempt }, ${E2E_PROCESSES} worker process(es), ${PER_ROUND} workflows a round, median of ${ROUNDS}; worker CPU per write ${median(cpu.sealed).toFixed(0)} vs ${median(cpu.plain).toFixed(0)} µs`;
      return [rateRow('codec-overhead', median(ours), median(theirs), 'workflows/s', null, { note })];
    } finally {
      await plain.stop();
      await sealed.stop();
    }
  },
};
