/**
 * stepfold inside a Cloudflare Worker, wired with @stepfold/cloudflare: each workflow instance
 * lives in its own Durable Object (the class below), whose storage holds the snapshot and whose
 * alarm is the instance's `wakeAt`; the default export routes the HTTP API to it by instance id.
 * wrangler.toml binds the class as WORKFLOWS.
 */
import { createWorkflowHandler, createWorkflowObject } from '@stepfold/cloudflare';
import { handlers, workflows } from './workflows.js';

/** One workflow instance per Durable Object. */
export const WorkflowInstance = createWorkflowObject({ workflows, handlers });

export default createWorkflowHandler({ workflows, binding: 'WORKFLOWS' });
