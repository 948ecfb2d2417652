import { serve } from '@hono/node-server';
import { createInspector } from '@stepfold/inspector';
import type { Command } from 'commander';
import { loadDefinitions } from '../definitions.js';
import { UsageError } from '../exit-codes.js';
import {
  type ActingOptions,
  definitionsOption,
  positiveInt,
  requireDefinitions,
  storeOption,
} from '../options.js';
import { openStore, storeUrlOf } from '../store-url.js';

interface InspectOptions extends ActingOptions {
  port: number;
  host: string;
  token?: string | undefined;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * `stepfold inspect`: serves `@stepfold/inspector` over the store until SIGINT/SIGTERM. Actions go
 * through a hand-off runner (`execute: false`): tasks they dispatch are queued for your workers.
 */
export function register(program: Command): void {
  definitionsOption(
    storeOption(
      program
        .command('inspect')
        .description('serve the web inspector over a store: list, show and steer instances in a browser')
        .option(
          '--port <port>',
          'TCP port (0 picks a free one)',
          (v) => (v === '0' ? 0 : positiveInt(v)),
          3100,
        )
        .option('--host <host>', 'address to listen on', '127.0.0.1')
        .option('--token <token>', 'the token to log in with (default: $STEPFOLD_INSPECT_TOKEN); required'),
    ),
  ).action(async (options: InspectOptions) => {
    const token = options.token ?? process.env['STEPFOLD_INSPECT_TOKEN'];
    // No open mode: an inspector can cancel and abort instances.
    if (!token) throw new UsageError('inspect needs a token: pass --token <t> or set STEPFOLD_INSPECT_TOKEN');
    if (token.length < 8) throw new UsageError('the inspect token must be at least 8 characters');
    const defs = await loadDefinitions(requireDefinitions(options, 'inspect'));
    const opened = await openStore(storeUrlOf(options.store));
    // The payload store only reads when a page's "show value" link is followed.
    const payloads = await opened.payloads().catch(async (e: unknown) => {
      await opened.close().catch(() => {});
      throw e;
    });
    // With --key-file the inspector decodes through the codec itself (payload bodies too).
    const { codec, encoded } = opened;
    const inspector = createInspector({
      store: encoded ?? opened.store,
      workflows: defs,
      auth: { token },
      payloads,
      ...(codec ? { codec } : {}),
    });
    const server = serve({ fetch: inspector.fetch, port: options.port, hostname: options.host });
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.once('listening', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : options.port);
      });
    }).catch(async (e: NodeJS.ErrnoException) => {
      await opened.close().catch(() => {});
      throw new UsageError(`cannot listen on ${options.host}:${options.port}: ${e.message}`);
    });
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    process.stdout.write(
      `stepfold inspector on http://${host}:${port}/ (${opened.kind} store, ${defs.length} definitions)\n`,
    );
    if (!LOOPBACK.has(options.host)) {
      // The login cookie is only marked Secure over https; plain http beyond loopback exposes it.
      process.stderr.write('warning: listening beyond loopback over plain http; put it behind https\n');
    }
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        server.close(() => resolve());
        // Keep-alive browser connections would hold close() open.
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    await opened.close().catch(() => {});
  });
}
