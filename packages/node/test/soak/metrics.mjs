// @ts-check
// What a soak run measures besides its oracles: how long each instance took from its start to its
// final state, how often tasks were given back, and the fleet's conflict counters.

/**
 * @typedef {import('@stepfold/engine').Snapshot} Snapshot
 * @typedef {{ n: number, p50: number, p99: number, max: number, notFinal: number }} Latency
 * @typedef {{ total: number, maxPerAttempt: number }} GiveBacks
 * @typedef {{ conflicts: number, lostTakes: number, released: number, incarnations: number, writes: number, lostRaces: Record<string, number> }} FleetStats
 * @typedef {{ ms: number, tailMs: number, notFinal: number }} Drain
 */

const FINAL = ['completed', 'failed', 'cancelled', 'aborted'];

/**
 * Nearest-rank percentile of ascending `sorted` (`q` in 0..1); NaN when empty.
 * @param {number[]} sorted @param {number} q
 */
export function percentile(sorted, q) {
  if (!sorted.length) return Number.NaN;
  return /** @type {number} */ (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
  );
}

/**
 * Instance latency in ms: from the start event (`createdAt`, stamped by the driver's `runner.start`)
 * to the event that made the instance final (`updatedAt`: a final snapshot takes no further event,
 * so it is the time of the last one). An instance still not final counts with `endedAt - createdAt`,
 * a lower bound, and is counted in `notFinal`; one with no snapshot at all is left out.
 * @param {Iterable<Snapshot | null | undefined>} snapshots @param {number} endedAt
 * @returns {Latency}
 */
export function latency(snapshots, endedAt) {
  /** @type {number[]} */
  const ms = [];
  let notFinal = 0;
  for (const s of snapshots) {
    if (!s) continue;
    if (FINAL.includes(s.status)) ms.push(s.updatedAt - s.createdAt);
    else {
      notFinal++;
      ms.push(endedAt - s.createdAt);
    }
  }
  ms.sort((a, b) => a - b);
  return {
    n: ms.length,
    p50: percentile(ms, 0.5),
    p99: percentile(ms, 0.99),
    max: ms.at(-1) ?? Number.NaN,
    notFinal,
  };
}

/**
 * The drain of a run, in ms: from the first start (the least `createdAt`) to the last final state
 * (the greatest final `updatedAt`), the time the fleet took to get the whole workload through. With
 * the starts paced, a run that keeps up drains in about the pace's time plus its last instances'
 * latency; a stall (a client hung behind a blackhole, a backlog that no longer clears) stretches it.
 * `tailMs` is the part after the last start. With instances still not final both run to `endedAt`
 * (lower bounds, `notFinal` > 0).
 * @param {Iterable<Snapshot | null | undefined>} snapshots @param {number} endedAt
 * @returns {Drain}
 */
export function drain(snapshots, endedAt) {
  let firstStart = Number.POSITIVE_INFINITY;
  let lastStart = Number.NEGATIVE_INFINITY;
  let lastFinal = Number.NEGATIVE_INFINITY;
  let notFinal = 0;
  for (const s of snapshots) {
    if (!s) continue;
    firstStart = Math.min(firstStart, s.createdAt);
    lastStart = Math.max(lastStart, s.createdAt);
    if (FINAL.includes(s.status)) lastFinal = Math.max(lastFinal, s.updatedAt);
    else notFinal++;
  }
  if (firstStart === Number.POSITIVE_INFINITY) return { ms: Number.NaN, tailMs: Number.NaN, notFinal };
  const end = notFinal ? endedAt : lastFinal;
  return { ms: end - firstStart, tailMs: Math.max(0, end - lastStart), notFinal };
}

/**
 * Give-backs (`task.released` transitions, R records): how many, and the most for one task attempt.
 * @param {string[][]} records
 * @returns {GiveBacks}
 */
export function giveBacks(records) {
  /** @type {Map<string, number>} */
  const perAttempt = new Map();
  for (const r of records) {
    if (r[0] !== 'R') continue;
    // R id key phase attempt writer
    const k = `${r[2]} ${r[3]} #${r[4]}`;
    perAttempt.set(k, (perAttempt.get(k) ?? 0) + 1);
  }
  let total = 0;
  let maxPerAttempt = 0;
  for (const n of perAttempt.values()) {
    total += n;
    maxPerAttempt = Math.max(maxPerAttempt, n);
  }
  return { total, maxPerAttempt };
}

/**
 * The fleet's counters: each process incarnation (one log file, so one writer name) writes its
 * running totals every second and once stopped; its last W record stands for it. A SIGKILLed
 * process loses at most its last second.
 * @param {string[][]} records
 * @returns {FleetStats}
 */
export function fleetStats(records) {
  /** @type {Map<string, string[]>} */
  const last = new Map();
  for (const r of records) if (r[0] === 'W' && r[1]) last.set(r[1], r);
  /** @type {FleetStats} */
  const out = { conflicts: 0, lostTakes: 0, released: 0, incarnations: last.size, writes: 0, lostRaces: {} };
  for (const [, , conflicts, lostTakes, released, , , writes, races] of last.values()) {
    out.conflicts += Number(conflicts);
    out.writes += Number(writes ?? 0);
    for (const [kind, n] of Object.entries(JSON.parse(races || '{}')))
      out.lostRaces[kind] = (out.lostRaces[kind] ?? 0) + Number(n);
    out.lostTakes += Number(lostTakes);
    out.released += Number(released);
  }
  return out;
}

/** Milliseconds as seconds with one decimal (`-` for none). @param {number} ms */
export const secs = (ms) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : '-');

/** `part` as a percentage of `whole`, two decimals (`-` for no writes). @param {number} part @param {number} whole */
export const rate = (part, whole) => (whole > 0 ? `${((100 * part) / whole).toFixed(2)}%` : '-');

/** Lost races by kind, most first: `kind:n,kind:n` (`-` for none). @param {Record<string, number>} by */
export const races = (by) =>
  Object.entries(by)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k}:${n}`)
    .join(',') || '-';
