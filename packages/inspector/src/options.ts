import type { AnyDefinition, PayloadStore, SealingCodec, Store } from '@stepfold/engine';
import type { Context } from 'hono';
import type { InspectorAuth } from './auth.js';
import { checkColumns, type InspectorColumn } from './columns.js';
import type { LoginRateLimit } from './rate-limit.js';

/** Options of {@link createInspector}. */
export interface InspectorOptions {
  /** The store your runners and workers use. */
  store: Store;
  /** The definitions of the instances to inspect and steer (every version still running). */
  workflows: readonly AnyDefinition[];
  /** Required: a bearer token, or your own `authorize(c)` check (which may name the user). There is no open mode. */
  auth: InspectorAuth;
  /**
   * The URL prefix links and cookies use. Default: the path the app is mounted at
   * (`app.route('/ops', inspector)` gives `/ops`); set it when a proxy strips a prefix.
   */
  basePath?: string | undefined;
  /**
   * The payload store your runners offload to: an instance page then shows each offloaded value's
   * reference with a link that fetches the value on demand (read only). Without it the page says
   * payloads are not configured.
   */
  payloads?: PayloadStore | undefined;
  /**
   * The codec your runners encrypt with (`aesGcmCodec({ keys })`): pages show the decrypted data
   * and actions work. Without it, encrypted values show as `[encrypted <key id>]` and actions on an
   * instance holding them are refused (nothing written).
   */
  codec?: SealingCodec | undefined;
  /** Instances per list page (default 50, at most 500). */
  pageSize?: number | undefined;
  /** Extra list columns read from each instance's input or output: `[{ label: 'Amount', path: 'input.amount' }]`. */
  columns?: readonly InspectorColumn[] | undefined;
  /**
   * Failed logins (the token form, and wrong bearer tokens) allowed per client address and per
   * user name before a 429 with `Retry-After` (default `{ max: 5, windowMs: 60_000 }`; counted in
   * this process's memory). `false` turns it off (when a proxy in front limits already).
   */
  loginRateLimit?: LoginRateLimit | false | undefined;
  /**
   * The client address the rate limit counts by. Default: the connection's address (Node's socket).
   * Behind a proxy, read its header here, e.g. `(c) => c.req.header('x-real-ip')`.
   */
  clientAddress?: ((c: Context) => string | undefined) | undefined;
}

/** The options checked once at creation: a bad one is a TypeError then, not a broken page later. */
export function checkOptions(options: InspectorOptions): {
  pageSize: number;
  columns: readonly InspectorColumn[];
} {
  const { auth } = options;
  if (!auth || !(('token' in auth && typeof auth.token === 'string') || 'authorize' in auth)) {
    throw new TypeError('createInspector: auth is required: { token } or { authorize(c) }');
  }
  if ('token' in auth && auth.token.length < 8) {
    throw new TypeError('createInspector: auth.token must be at least 8 characters');
  }
  return {
    pageSize: Math.min(Math.max(Math.floor(options.pageSize ?? 50), 1), 500),
    columns: checkColumns(options.columns),
  };
}
