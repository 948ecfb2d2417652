/**
 * A long-lived document entity (after Temporal's entity pattern): edits to a
 * document arrive in bursts, some of them redelivered; they are deduplicated by delivery id,
 * processed in batches of up to 8 (or after 10 s of quiet), and every 2 batches the instance
 * continues as new, so its snapshot never grows. Runs on the in-memory store with a fake clock.
 */
import {
  createMemoryStore,
  createRunner,
  type Handler,
  type Snapshot,
  snapshotBytes,
  type,
  workflow,
} from '@stepfold/engine';

export const BATCHES_PER_RUN = 2;

export const documentEntity = workflow('document', 1, { limits: { inbox: 500 } })
  .input(type<{ doc: string; revision?: number }>())
  .signal('edit', type<Edit>())
  .collect('gather', { signal: 'edit', maxItems: 8, idleMs: 10_000 })
  .task('process', { handler: 'applyEdits', input: { doc: 'input.doc', edits: 'outputs.gather' } })
  .choice('more', {
    branches: [{ when: { '<': [{ var: 'outputs.process.batch' }, BATCHES_PER_RUN] }, next: 'gather' }],
    otherwise: 'restart',
  })
  .continueAsNew('restart', { carry: { doc: 'input.doc', revision: 'outputs.process.revision' } })
  .build();

interface Edit {
  rev: number;
  text: string;
}

/** What {@link main} returns. */
export interface EntityReport {
  sent: number;
  redeliveries: number;
  applied: number[];
  batches: Array<{ run: number; batch: number; revs: number[] }>;
  final: Snapshot;
  bytes: number;
}

/** Sends three bursts of edits (with redeliveries) and prints each batch; returns what happened. */
export async function main(print: (line: string) => void = console.log): Promise<EntityReport> {
  const t0 = Date.UTC(2026, 10, 22, 9, 0, 0);
  let now = t0;
  const stamp = () => `+${((now - t0) / 1000).toFixed(1)}s`.padStart(7);
  const applied: number[] = [];
  const batches: EntityReport['batches'] = [];
  let revision = 0;

  // The document store the entity keeps up to date: applying an edit is idempotent by revision.
  const applyEdits: Handler<{ doc: string; edits: Edit[] }> = ({ input, iteration, idempotencyKey }) => {
    const run = Number(idempotencyKey.split('/')[1]);
    const revs = input.edits.map((e) => e.rev);
    for (const r of revs) if (!applied.includes(r)) applied.push(r);
    revision = Math.max(revision, ...revs);
    batches.push({ run, batch: iteration, revs });
    print(`${stamp()}  run ${run} batch ${iteration}: ${revs.length} edit(s) [${revs.join(', ')}]`);
    return { batch: iteration, revision };
  };

  const store = createMemoryStore();
  const runner = createRunner({
    store,
    workflows: [documentEntity],
    handlers: { applyEdits },
    clock: () => now,
  });

  let sent = 0;
  let redeliveries = 0;
  const edit = async (rev: number) => {
    now += 150;
    const before = await runner.get('doc-42');
    // signalWithStart: the first edit creates the entity.
    const after = await runner.signal('doc-42', 'edit', { rev, text: `edit ${rev}` } satisfies Edit, {
      signalId: `doc-42/rev-${rev}`,
      startIfMissing: { workflow: 'document', input: { doc: 'doc-42' } },
    });
    sent++;
    if (before && after.version === before.version) {
      redeliveries++;
      print(`${stamp()}  edit ${rev} redelivered: ignored`);
    }
  };
  const quiet = async (ms: number) => {
    now += ms;
    await runner.processDue(now);
  };

  // Burst 1: 11 edits, two of them delivered twice → one full batch of 8, then 3 wait for quiet.
  for (const rev of [1, 2, 3, 3, 4, 5, 6, 7, 7, 8, 9, 10, 11]) await edit(rev);
  await quiet(10_000);
  // Burst 2: a short one, closed by 10 s of quiet.
  for (const rev of [12, 13, 12, 14]) await edit(rev);
  await quiet(4_000); // not quiet long enough yet
  await edit(15);
  await quiet(10_000);
  // Burst 3: 9 edits; the last one waits for quiet.
  for (let rev = 16; rev <= 24; rev++) await edit(rev);
  await quiet(10_000);

  const final = (await runner.get('doc-42'))!;
  const bytes = snapshotBytes(JSON.stringify(final));
  print(
    `${stamp()}  ${sent} deliveries (${redeliveries} redelivered), ${applied.length} edits applied in ` +
      `${batches.length} batches; now run ${final.run}, ${final.status}, snapshot ${bytes} bytes`,
  );
  return { sent, redeliveries, applied, batches, final, bytes };
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
