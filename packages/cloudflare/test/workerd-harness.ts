/**
 * What the workerd tests share: bundle a user's Worker with esbuild the way a Workers bundler does,
 * start it in workerd through Miniflare with the bindings of a wrangler.toml, and call its API.
 */
import { dirname } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { expect } from 'vitest';
import type { WranglerConfig } from './wrangler-toml.js';

/** What the bundle is made of. */
export interface Bundle {
  outfile: string;
  /** The input files, as esbuild names them. */
  inputs: string[];
  /** Imports left in the output (none for a Worker that runs as it is). */
  imports: string[];
}

/** Bundles `entry` for workerd into `outfile`. */
export async function bundleWorker(
  entry: string,
  outfile: string,
  options: { alias?: Record<string, string>; minify?: boolean } = {},
): Promise<Bundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    outfile,
    metafile: true,
    logLevel: 'silent',
    minify: options.minify ?? false,
    ...(options.alias ? { alias: options.alias } : {}),
  });
  return {
    outfile,
    inputs: Object.keys(result.metafile.inputs),
    imports: Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path)),
  };
}

/** Starts the bundle in workerd with the config's Durable Object bindings and these variables. */
export async function startWorker(
  bundle: Bundle,
  config: WranglerConfig,
  bindings: Record<string, string> = {},
): Promise<Miniflare> {
  const mf = new Miniflare({
    modules: true,
    scriptPath: bundle.outfile,
    // Module names are paths from here; a bundle outside the working directory needs its own root.
    modulesRoot: dirname(bundle.outfile),
    compatibilityDate: config.compatibilityDate,
    durableObjects: config.durableObjects,
    bindings,
  });
  await mf.ready;
  return mf;
}

/** The snapshot fields the tests read. */
export interface Snapshot {
  id: string;
  version: number;
  status: string;
  output?: unknown;
  error?: { message: string; code?: string };
  wakeAt: number | null;
  updatedAt: number;
  steps: Record<string, { status: string; attempt: number; output?: unknown }>;
  timers: Array<{ kind: string; step: string; at: number }>;
}

/** An API over one running Worker. */
export function api(mf: Miniflare, prefix = '') {
  async function call<T = Snapshot>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const res = await mf.dispatchFetch(`http://stepfold.test${prefix}${path}`, {
      method,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    expect(res.headers.get('content-type')).toBe('application/json');
    return { status: res.status, body: (await res.json()) as T };
  }
  const get = (id: string) => call('GET', `/instances/${encodeURIComponent(id)}`);
  /** Polls the instance (and nothing else) until `done` holds or `ms` pass. */
  async function until(id: string, done: (s: Snapshot) => boolean, ms = 15_000): Promise<Snapshot> {
    const deadline = Date.now() + ms;
    let s = (await get(id)).body;
    while (!done(s) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      s = (await get(id)).body;
    }
    return s;
  }
  /** A request straight to the instance's Durable Object, past the Worker (the test routes). */
  async function object<T>(id: string, path: string): Promise<T> {
    const ns = await mf.getDurableObjectNamespace('WORKFLOWS');
    const res = await ns.get(ns.idFromName(id)).fetch(`http://object${path}`);
    return (await res.json()) as T;
  }
  return { call, get, until, object };
}
