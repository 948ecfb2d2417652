// @ts-check
// The soak's oracles, over the final snapshots and the oracle log of every process.
//
// - Every instance ends in its designed status, with exactly its designed steps compensated.
// - Nothing is left dispatched: a final snapshot has no task, no timer and no wake time.
// - No step execution completes twice: two S records (step completions the runners wrote) for one
//   instance, run, step and iteration are two accepted completions of one execution.
// - No compensation completes twice: likewise for K records per instance, run and step.
// - A compensation only undoes work that was done: every successful compensation call has a
//   successful forward call with the same idempotency key.
// A handler that RAN twice (a worker killed before its result was written) is at-least-once
// delivery, not a violation; those re-runs are counted and reported.

/**
 * @typedef {import('@stepfold/engine').Snapshot} Snapshot
 * @typedef {import('./workflows.mjs').Design} Design
 */

/**
 * Violations of the end state of every instance.
 * @param {Map<string, Design>} designs
 * @param {Map<string, Snapshot | null>} snapshots
 * @returns {string[]}
 */
export function checkSnapshots(designs, snapshots) {
  /** @type {string[]} */
  const out = [];
  for (const [id, want] of designs) {
    const s = snapshots.get(id);
    if (!s) {
      out.push(`${id}: no snapshot`);
      continue;
    }
    if (s.status !== want.status) out.push(`${id}: status ${s.status}, designed ${want.status}`);
    const tasks = Object.values(s.tasks);
    if (tasks.length) out.push(`${id}: left dispatched: ${tasks.map(describeTask).join(', ')}`);
    if (s.timers.length) out.push(`${id}: timers left: ${JSON.stringify(s.timers)}`);
    if (s.wakeAt !== null) out.push(`${id}: wakeAt ${s.wakeAt} on a final snapshot`);
    const compensated = Object.entries(s.steps)
      .filter(([, st]) => st.status === 'compensated')
      .map(([step]) => step)
      .sort();
    const designed = [...want.compensated].sort();
    if (compensated.join() !== designed.join()) {
      out.push(`${id}: compensated [${compensated}], designed [${designed}]`);
    }
  }
  return out;
}

/** @param {import('@stepfold/engine').TaskState} t */
export function describeTask(t) {
  const state = t.queued ? 'queued' : `deadline ${new Date(t.deadline).toISOString()}`;
  return `${t.phase}:${t.step}#${t.attempt} (${state}, key ${t.idempotencyKey})`;
}

/**
 * Violations in the oracle log, and how often handlers ran again (at-least-once, allowed).
 * @param {string[][]} records every record of every process's log, split into fields
 */
export function checkLog(records) {
  /** @type {string[]} */
  const violations = [];
  /** @type {Map<string, string[]>} */
  const completions = new Map();
  /** @type {Map<string, number>} */
  const forwardOk = new Map();
  /** @type {string[][]} */
  const compensationCalls = [];
  let calls = 0;
  for (const r of records) {
    const [type, id, ...rest] = r;
    if (type === 'S' || type === 'K') {
      // S id run step iteration version writer | K id run step version writer
      const key =
        type === 'S'
          ? `${id} run ${rest[0]} step ${rest[1]} #${rest[2]}`
          : `${id} run ${rest[0]} undo ${rest[1]}`;
      const where = type === 'S' ? `v${rest[3]} by ${rest[4]}` : `v${rest[2]} by ${rest[3]}`;
      completions.set(`${type} ${key}`, [...(completions.get(`${type} ${key}`) ?? []), where]);
    } else if (type === 'H') {
      // H id step phase attempt key outcome writer
      calls++;
      const [, phase, , key, outcome] = rest;
      if (outcome !== 'ok') continue;
      if (phase === 'run') forwardOk.set(key ?? '', (forwardOk.get(key ?? '') ?? 0) + 1);
      else compensationCalls.push(r);
    }
  }
  for (const [key, where] of completions) {
    if (where.length > 1) {
      const what = key.startsWith('S') ? 'step completed' : 'compensation completed';
      violations.push(`${what} ${where.length} times: ${key.slice(2)} (${where.join('; ')})`);
    }
  }
  for (const [, id, step, , attempt, key] of compensationCalls) {
    if (!forwardOk.has(key ?? '')) {
      violations.push(
        `${id}: compensation of ${step} (attempt ${attempt}) ran, but its forward step never succeeded (key ${key})`,
      );
    }
  }
  let reruns = 0;
  for (const n of forwardOk.values()) reruns += n - 1;
  return { violations, calls, reruns };
}
