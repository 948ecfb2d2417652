import type { StoreKit } from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { SCRIPTS } from './scripts.js';

/** Loads the store's scripts (keys appear on first write; loading saves the first EVAL of each). */
export async function loadScripts(client: Redis | Cluster, guard: StoreKit['guard']): Promise<void> {
  for (const s of SCRIPTS) await guard('setup', () => client.script('LOAD', s.lua));
}
