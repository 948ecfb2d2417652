// `@stepfold/inspector`: a web inspector for stepfold instances, as a Hono app to mount.
export { ACTIONS, type ActionName } from './actions.js';
export type { Credential, InspectorAuth } from './auth.js';
export { createInspector, type InspectorOptions } from './inspector.js';
