/**
 * The Worker's side of the HTTP API: it checks the path, then sends the request to the Durable
 * Object named after the instance id, where the workflow runs. It reads no storage itself.
 */
import type { AnyDefinition } from '@stepfold/engine';
import { errorResponse, parseRoute } from './http-api.js';
import type { DurableNamespace } from './platform.js';

/** Options of {@link createWorkflowHandler}. */
export interface WorkflowHandlerOptions {
  /** The workflows this Worker starts (definitions or names); a start of another is `NO_ROUTE` (404). */
  workflows: readonly (AnyDefinition | string)[];
  /** The name of the Durable Object namespace binding in `env` (default `'WORKFLOWS'`). */
  binding?: string | undefined;
  /** A path the API lives under, e.g. `'/api'` (default: the root). */
  prefix?: string | undefined;
}

/** A Worker's `fetch` handler (the `default` export, or one you call from your own). */
export interface WorkflowHandler {
  fetch(request: Request, env: unknown): Promise<Response>;
}

/**
 * Makes the Worker's `fetch`: the stepfold HTTP API, routed by instance id to the Durable Object
 * bound as `binding`. It has no authentication: call it from your own `fetch` after yours.
 *
 * @example
 * export default createWorkflowHandler({ workflows: [order], binding: 'WORKFLOWS' });
 */
export function createWorkflowHandler(options: WorkflowHandlerOptions): WorkflowHandler {
  const binding = options.binding ?? 'WORKFLOWS';
  const prefix = (options.prefix ?? '').replace(/\/+$/, '');
  const served = new Set(options.workflows.map((w) => (typeof w === 'string' ? w : w.name)));
  return {
    async fetch(request, env) {
      try {
        const url = new URL(request.url);
        let path = url.pathname;
        if (prefix) {
          const inside = path.startsWith(`${prefix}/`);
          path = inside ? path.slice(prefix.length) : '';
        }
        const { id } = parseRoute(request.method, path, url.searchParams, (w) => served.has(w));
        const namespace = (env as Record<string, unknown> | undefined)?.[binding] as
          | DurableNamespace
          | undefined;
        if (typeof namespace?.idFromName !== 'function') {
          throw new Error(`env.${binding} is not a Durable Object namespace: bind it in wrangler.toml`);
        }
        // The object parses the path again: it gets the path without the prefix.
        const forwarded = prefix ? new Request(new URL(`${path}${url.search}`, url), request) : request;
        return await namespace.get(namespace.idFromName(id)).fetch(forwarded);
      } catch (e) {
        return errorResponse(e);
      }
    },
  };
}
