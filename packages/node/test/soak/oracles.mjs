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
// - Trees: every designed child exists, once, under its parent's step (and item), on its first run,
//   ended as designed with its designed steps undone and nothing left dispatched; no other child
//   exists; a map's items are counted once each (every child's end applied once: the I records of
//   one item, and the U records of its undo, are never two); a completed map counted every item.
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

/**
 * Violations among the trees' children: `designs` the driver's instances (only trees have
 * `children`), `parents` and `children` their final snapshots, `leaves` every child workflow's id
 * in the store.
 * @param {Map<string, Design>} designs
 * @param {Map<string, Snapshot | null>} parents
 * @param {Map<string, Snapshot | null>} children
 * @param {string[]} leaves
 * @returns {string[]}
 */
export function checkChildren(designs, parents, children, leaves) {
  /** @type {string[]} */
  const out = [];
  const designed = new Set();
  for (const [parentId, want] of designs) {
    for (const c of want.children ?? []) {
      designed.add(c.id);
      const s = children.get(c.id);
      if (!s) {
        out.push(`${c.id}: designed child of ${parentId} does not exist`);
        continue;
      }
      const p = s.parent;
      if (!p || p.id !== parentId || p.step !== c.step || p.item !== c.item)
        out.push(`${c.id}: parent ${JSON.stringify(p)}, designed ${parentId} step ${c.step} item ${c.item}`);
      if (s.run !== 1) out.push(`${c.id}: run ${s.run}: started more than once`);
      const leaf = {
        workflow: 'soak-leaf',
        input: { fate: 'ok' },
        status: c.status,
        compensated: c.compensated,
      };
      out.push(...checkSnapshots(new Map([[c.id, /** @type {Design} */ (leaf)]]), children));
    }
    const fan = parents.get(parentId)?.steps['fan']?.map;
    const items = (want.children ?? []).filter((c) => c.step === 'fan').length;
    if (items && want.status === 'completed' && (fan?.ok !== items || fan.failed.length))
      out.push(`${parentId}: map counted ${fan?.ok} of ${items} items completed (failed [${fan?.failed}])`);
  }
  for (const id of leaves) if (!designed.has(id)) out.push(`${id}: a child no tree designed`);
  return out;
}

/**
 * Every id of `workflow` in the store, page by page.
 * @param {import('@stepfold/engine').Store} store @param {string} workflow
 * @returns {Promise<string[]>}
 */
export async function listIds(store, workflow) {
  /** @type {string[]} */
  const ids = [];
  /** @type {string | null} */
  let cursor = null;
  do {
    const page = await store.list({ workflow, limit: 500, cursor });
    ids.push(...page.items.map((x) => x.id));
    cursor = page.cursor;
  } while (cursor);
  return ids;
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
    if (type === 'S' || type === 'K' || type === 'I' || type === 'U') {
      // S id run step iteration version writer | K id run step version writer
      // I (item completed) / U (item undone) id run step item version writer
      const key =
        type === 'S'
          ? `${id} run ${rest[0]} step ${rest[1]} #${rest[2]}`
          : type === 'K'
            ? `${id} run ${rest[0]} undo ${rest[1]}`
            : `${id} run ${rest[0]} step ${rest[1]} item ${rest[2]}`;
      const where = type === 'K' ? `v${rest[2]} by ${rest[3]}` : `v${rest[3]} by ${rest[4]}`;
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
      const what = {
        S: 'step completed',
        K: 'compensation completed',
        I: 'map item completed',
        U: 'map item undone',
      }[key[0] ?? 'S'];
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
