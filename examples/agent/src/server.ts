import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AgentRunner, agentChatRoute } from '@stepfold/ai';
import type { Store } from '@stepfold/engine';
import { createInspector } from '@stepfold/inspector';
import { Hono } from 'hono';
import { chatPage } from './page.js';
import { AGENT, workflows } from './support-agent.js';

// The HTTP side: the chat page, the chat routes of @stepfold/ai (messages, the stream by offset,
// approvals), and the inspector, where a person can also approve a tool call. Nothing here runs a
// handler: the runner hands the work to the workers.

/** The two browser modules the page loads, served from @stepfold/ai's build as they are. */
const ASSETS = ['chat-transport.js', 'ui-chunks.js'];
const AI_DIST = dirname(fileURLToPath(import.meta.resolve('@stepfold/ai')));

/** Options of {@link chatServer}. */
export interface ChatServerOptions {
  /** A runner over the store that registers the agent (`execute: false`: workers run the steps). */
  runner: AgentRunner;
  store: Store;
  /** The inspector's bearer token (at least 8 characters). */
  inspectorToken: string;
}

/** The example's Hono app. */
export function chatServer(options: ChatServerOptions): Hono {
  const app = new Hono();
  const route = agentChatRoute({ runner: options.runner, store: options.store, agent: AGENT });
  app.get('/', (c) => c.html(chatPage()));
  app.get('/assets/:file', (c) => {
    const file = c.req.param('file');
    if (!ASSETS.includes(file)) return c.notFound();
    return c.body(readFileSync(join(AI_DIST, file), 'utf8'), 200, {
      'content-type': 'text/javascript; charset=utf-8',
    });
  });
  app.all('/agents/*', async (c) => (await route(c.req.raw)) ?? c.notFound());
  app.route(
    '/inspector',
    createInspector({ store: options.store, workflows, auth: { token: options.inspectorToken } }),
  );
  return app;
}
