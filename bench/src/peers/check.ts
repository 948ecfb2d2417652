import { serviceUrls } from '../services.js';
import { graphileWakeLatency } from './graphile-latency.js';
import { PEERS } from './index.js';

// Smoke run of the peer baselines: each peer launched on the bench's PostgreSQL, a warm-up of 20
// workflows, then ROUNDS rounds of PER_ROUND at concurrency 4 (workflows/s of each round and
// their median), then graphile-worker's wake latency. A peer that cannot run prints why and the
// others go on. `pnpm exec tsc -b bench && node bench/dist/peers/check.js [peer...]`

const CONCURRENCY = 4;
const ROUNDS = 3;
const PER_ROUND = 100;
const LATENCY_SAMPLES = 200;

const only = process.argv.slice(2);
const pgUrl = serviceUrls().pg;
console.log(`PostgreSQL: ${new URL(pgUrl).host}`);

let first = 1;
for (const peer of PEERS) {
  if (only.length > 0 && !only.includes(peer.name)) continue;
  try {
    await peer.launch(pgUrl);
  } catch (e) {
    console.log(`${peer.name.padEnd(16)} could not run: ${e instanceof Error ? e.message : String(e)}`);
    continue;
  }
  try {
    await peer.run(20, CONCURRENCY, first);
    first += 20;
    const rates: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      rates.push(await peer.run(PER_ROUND, CONCURRENCY, first));
      first += PER_ROUND;
    }
    const sorted = [...rates].sort((a, b) => a - b);
    console.log(
      `${peer.name.padEnd(16)} ${sorted[sorted.length >> 1]!.toFixed(1).padStart(7)} workflows/s (rounds: ${rates
        .map((x) => x.toFixed(1))
        .join(', ')})  ${peer.version}`,
    );
  } catch (e) {
    console.log(`${peer.name.padEnd(16)} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  } finally {
    await peer.shutdown().catch((e: unknown) => console.log(`${peer.name} shutdown: ${String(e)}`));
  }
}

if (only.length === 0 || only.includes('graphile-latency')) {
  const l = await graphileWakeLatency(pgUrl, LATENCY_SAMPLES);
  console.log(
    `graphile-worker wake latency over ${l.samples.length} jobs added from another process: p50 ${l.p50.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms`,
  );
}
