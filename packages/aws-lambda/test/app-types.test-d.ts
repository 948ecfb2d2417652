// Type-level promises of createLambdaApp, checked by `node scripts/typecheck-tests.mjs`.
import { createLambdaApp, type LambdaApp } from '../src/index.js';
import { createHandlers, workflows } from './support.js';

const app: LambdaApp = createLambdaApp({ workflows, handlers: createHandlers([]), env: {} });
// The four handlers a CDK construct points its functions at, and the runner.
export const { api, queue, stream, sweep, runner } = app;

// A handler the workflows name is missing: refused by the compiler.
// @ts-expect-error reserveStock is missing
createLambdaApp({ workflows, handlers: { ...createHandlers([]), reserveStock: undefined }, env: {} });
