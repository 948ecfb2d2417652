import type { PayloadStore, SealingCodec, Store } from '@stepfold/engine';
import { createSchedules, type Schedules } from '@stepfold/engine/schedules';
import type { Context } from 'hono';
import type { InspectorAuth } from './auth.js';
import type { InspectorColumn } from './columns.js';
import { type Definitions, indexDefinitions } from './definitions.js';
import { type MermaidBundle, mermaidBundle } from './mermaid-asset.js';
import { checkOptions, type InspectorOptions } from './options.js';
import type { LoginRateLimit } from './rate-limit.js';

/** What the inspector's routes work with: made once from its options, when the inspector is created. */
export interface InspectorParts {
  /** The store the host's runners and workers use. */
  readonly store: Store;
  readonly auth: InspectorAuth;
  /** The definitions it was given, looked up by snapshot. */
  readonly defs: Definitions;
  /** Schedules are instances of the built-in schedule workflow: steering them needs no definition. */
  readonly schedules: Schedules<readonly []>;
  /** The host's codec, when it gave one: `store` decodes through it, payload bodies too. */
  readonly codec: SealingCodec | undefined;
  /** Where offloaded values are read from, when the host gave one. */
  readonly payloads: PayloadStore | undefined;
  /** The diagram's browser bundle, when the host has the `mermaid` package. */
  readonly mermaid: MermaidBundle;
  /** The URL prefix links and cookies use; undefined: the mount path. */
  readonly basePath: string | undefined;
  readonly pageSize: number;
  readonly columns: readonly InspectorColumn[];
  readonly loginRateLimit: LoginRateLimit | false | undefined;
  readonly clientAddress: ((c: Context) => string | undefined) | undefined;
}

/** The inspector's parts from its options, checked (a bad option is a TypeError here, not a broken page later). */
export function inspectorParts(options: InspectorOptions): InspectorParts {
  const { pageSize, columns } = checkOptions(options);
  const { codec } = options;
  const store = codec ? codec.wrap(options.store) : options.store;
  return {
    store,
    codec,
    auth: options.auth,
    defs: indexDefinitions(options.workflows),
    schedules: createSchedules({ store }),
    payloads: options.payloads,
    mermaid: mermaidBundle(),
    basePath: options.basePath,
    pageSize,
    columns,
    loginRateLimit: options.loginRateLimit,
    clientAddress: options.clientAddress,
  };
}
