// `@stepfold/inspector`: a web inspector for stepfold instances, as a Hono app to mount.
export { ACTIONS, type ActionName } from './actions.js';
export type { AuthorizeResult, Credential, InspectorAuth } from './auth.js';
export type { InspectorColumn } from './columns.js';
export { createInspector, type InspectorOptions } from './inspector.js';
export type { LoginRateLimit } from './rate-limit.js';
