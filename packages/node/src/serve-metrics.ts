import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MeterProvider, MeterProviderOptions } from '@opentelemetry/sdk-metrics';

/** Options of {@link serveMetrics}. */
export interface ServeMetricsOptions {
  /** Port to listen on (default 9464, Prometheus's registered exporter port; 0: any free port). */
  port?: number | undefined;
  /** Interface to listen on (default `127.0.0.1`: only this machine; `0.0.0.0` for a scraper elsewhere). */
  host?: string | undefined;
  /** Path the metrics are served at (default `/metrics`); every other path answers 404. */
  endpoint?: string | undefined;
  /** The resource the metrics describe (default the SDK's: service name and process attributes). */
  resource?: MeterProviderOptions['resource'];
  /** Views applied by the meter provider (renames, other histogram buckets, dropped attributes). */
  views?: MeterProviderOptions['views'];
}

/** A running {@link serveMetrics} endpoint. */
export interface MetricsServer {
  /** The provider to record with: `createOtelMetrics({ meterProvider })` of `@stepfold/otel`, or your own meters. */
  readonly meterProvider: MeterProvider;
  /** Where Prometheus scrapes, e.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  /** Stops listening (open scrapes are cut) and shuts the meter provider down; idempotent. */
  close(): Promise<void>;
}

/**
 * Serves the process's metrics in Prometheus's text format over HTTP: a meter provider whose only
 * reader is an OpenTelemetry Prometheus exporter, collected at each GET. Listens on 127.0.0.1
 * unless told otherwise; nothing global is registered. Under `runWorkers`, give each process its
 * own port (`9464 + fleetFromEnv().index`).
 *
 * @example
 * const served = await serveMetrics({ port: 9464 });
 * const metrics = createOtelMetrics({ meterProvider: served.meterProvider });
 * const runner = createRunner({ store, workflows, handlers, instrument: metrics.instrument });
 * // on shutdown: await served.close();
 */
export async function serveMetrics(options: ServeMetricsOptions = {}): Promise<MetricsServer> {
  const endpoint = options.endpoint ?? '/metrics';
  if (!endpoint.startsWith('/'))
    throw new TypeError(`serveMetrics: endpoint must start with '/', got ${JSON.stringify(endpoint)}`);
  const host = options.host ?? '127.0.0.1';
  // Loaded here, not with the package: a process that serves no metrics never loads the SDK.
  const [{ PrometheusExporter }, sdk] = await Promise.all([
    import('@opentelemetry/exporter-prometheus'),
    import('@opentelemetry/sdk-metrics'),
  ]);
  // The exporter's own server is not started: ours knows its port (0 included) and closes cleanly.
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new sdk.MeterProvider({
    readers: [exporter],
    ...(options.resource ? { resource: options.resource } : {}),
    ...(options.views ? { views: options.views } : {}),
  });
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === endpoint && (req.method === 'GET' || req.method === 'HEAD')) {
      exporter.getMetricsRequestHandler(req, res);
      return;
    }
    res.statusCode = path === endpoint ? 405 : 404;
    res.end();
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: options.port ?? 9464, host }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    await meterProvider.shutdown();
    throw e;
  }
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  let closed: Promise<void> | undefined;
  return {
    meterProvider,
    url: `http://${shown}:${port}${endpoint}`,
    close() {
      closed ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await stopped;
        await meterProvider.shutdown();
      })();
      return closed;
    },
  };
}
