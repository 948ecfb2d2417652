// @ts-check
// The network faults of a soak run: phases played on the fault proxy in front of the store's server
// while the run lasts (besides the worker kills and the server restart), and what they injected.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * One phase: added latency (`ms` ± `jitter` per chunk) for `forMs`; a reset burst (every live
 * connection reset, then `fraction` of new ones for `forMs`); a blackhole of `forMs` ending with
 * `then`; or a quiet pause.
 * @typedef {{ latency: number, jitter: number, forMs: number }
 *   | { reset: number, forMs: number }
 *   | { blackhole: 'release' | 'reset', forMs: number }
 *   | { quiet: true, forMs: number }} FaultPhase
 *
 * @typedef {object} FaultCounts
 * @property {number} latencyPhases
 * @property {number} resetBursts
 * @property {number} resets connections the proxy reset (bursts, blackholes ending with reset)
 * @property {number} blackholes
 * @property {number} blackholeMs their total length
 */

/**
 * `pnpm soak`'s schedule, repeated until the run ends: latency phases (a LAN-ish 20 ± 10 ms and a
 * WAN-ish 100 ± 50 ms per chunk), reset bursts, and blackholes of a few seconds, each followed by
 * quiet time to recover in. The run's `maxBlackholes` keeps it to one or two.
 * @type {FaultPhase[]}
 */
export const SOAK_FAULTS = [
  { quiet: true, forMs: 5_000 },
  { latency: 20, jitter: 10, forMs: 15_000 },
  { quiet: true, forMs: 8_000 },
  { reset: 0.3, forMs: 3_000 },
  { quiet: true, forMs: 8_000 },
  { latency: 100, jitter: 50, forMs: 10_000 },
  { quiet: true, forMs: 8_000 },
  { blackhole: 'release', forMs: 3_000 },
  { quiet: true, forMs: 12_000 },
  { reset: 0.3, forMs: 3_000 },
  { quiet: true, forMs: 8_000 },
  { blackhole: 'reset', forMs: 4_000 },
  { quiet: true, forMs: 12_000 },
];

/**
 * The short soak's (`pnpm test`) schedule, played once in about eight seconds: latency, a reset
 * burst, and a blackhole of 1.5 s whose connections are then reset.
 * @type {FaultPhase[]}
 */
export const SHORT_FAULTS = [
  { quiet: true, forMs: 1_000 },
  { latency: 30, jitter: 15, forMs: 3_000 },
  { reset: 0.3, forMs: 1_000 },
  { quiet: true, forMs: 1_000 },
  { blackhole: 'reset', forMs: 1_500 },
];

/**
 * Plays `phases` on `proxy` (in a loop with `repeat`) while `running()`, skipping blackholes after
 * the first `maxBlackholes`; leaves the proxy fault-free when it returns.
 * @param {import('./fault-proxy.mjs').FaultProxy} proxy
 * @param {FaultPhase[]} phases
 * @param {{ running(): boolean, repeat?: boolean, maxBlackholes?: number, say?: (line: string) => void }} o
 * @returns {Promise<FaultCounts>}
 */
export async function playFaults(proxy, phases, o) {
  const counts = { latencyPhases: 0, resetBursts: 0, resets: 0, blackholes: 0, blackholeMs: 0 };
  const resetsBefore = proxy.stats.resets;
  const maxBlackholes = o.maxBlackholes ?? Number.POSITIVE_INFINITY;
  // Sleeps in short steps so the end of the run is not kept waiting by a long phase.
  const wait = async (/** @type {number} */ ms) => {
    const end = Date.now() + ms;
    while (o.running() && Date.now() < end) await sleep(Math.min(250, end - Date.now()));
  };
  try {
    do {
      for (const p of phases) {
        if (!o.running()) break;
        if ('latency' in p) {
          counts.latencyPhases++;
          o.say?.(`latency ${p.latency} ± ${p.jitter} ms for ${p.forMs / 1000} s`);
          proxy.setLatency(p.latency, p.jitter);
          await wait(p.forMs);
          proxy.setLatency(0);
        } else if ('reset' in p) {
          counts.resetBursts++;
          const n = proxy.resetAll();
          o.say?.(
            `reset burst: ${n} live connections reset, then ${p.reset * 100}% of new ones for ${p.forMs / 1000} s`,
          );
          proxy.resetNew(p.reset);
          await wait(p.forMs);
          proxy.resetNew(0);
        } else if ('blackhole' in p) {
          if (counts.blackholes >= maxBlackholes) continue;
          counts.blackholes++;
          counts.blackholeMs += p.forMs;
          o.say?.(`blackhole for ${p.forMs / 1000} s, then ${p.blackhole}`);
          // Played to its end even if the run ends meanwhile: held connections are let go as planned.
          await proxy.blackhole(p.forMs, p.blackhole);
        } else await wait(p.forMs);
      }
    } while (o.repeat && o.running());
  } finally {
    proxy.setLatency(0);
    proxy.resetNew(0);
    counts.resets = proxy.stats.resets - resetsBefore;
  }
  return counts;
}
