import { errorKind, HTTP_STATUS, isStepfoldError } from '@stepfold/engine';
import type { Context } from 'hono';
import { fail, pageOf, render, type Vars } from './app-context.js';
import { instancePath } from './views/format.js';
import { messagePage } from './views/layout.js';

/**
 * The answer to an error a route threw: a stepfold error as the status of its kind (as the CLI's
 * exit code is) with its issues; anything else a 500 whose detail goes to the server log only.
 */
export function errorPage(e: Error, c: Context<Vars>): Response | Promise<Response> {
  const back = c.req.param('id')
    ? instancePath(c.get('page')?.base ?? '', c.req.param('id') ?? '')
    : undefined;
  if (isStepfoldError(e)) {
    // A code this copy has no kind for is ours to fix.
    const kind = errorKind(e);
    const status = kind === undefined ? 500 : HTTP_STATUS[kind];
    // A validation error lists its issues one per line, under the summary its message opens with.
    const summary = e.issues.length ? (e.message.split(':\n')[0] ?? e.message) : e.message;
    return render(c, messagePage(pageOf(c), e.code, summary, back, e.issues), status);
  }
  console.error('@stepfold/inspector:', e);
  return fail(c, 500, 'Error', 'Internal error; see the server log.', back);
}
