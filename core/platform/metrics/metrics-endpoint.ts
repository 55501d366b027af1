import { createServer, type Server } from 'node:http';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { Config } from '../config/config.js';
import type { Logger } from '../logger/logger.js';
import { businessRegistry } from './business-metrics.js';
import { METRICS_CHALLENGE, metricsTokenCheck } from '../secret-match.js';

type Start<R> = (config: Config, logger: Logger, stopping?: AbortSignal) => Promise<R & { shutdown: () => Promise<boolean> }>;

/**
 * A worker process's Prometheus endpoint (`GET /metrics` on METRICS_PORT): its process metrics and
 * the business counters it updates (deliveries, provider latency, expiries), behind METRICS_TOKEN
 * when one is set, as the API's. Workers have no HTTP server of their own; this one answers nothing
 * else but `GET /healthz`, the liveness probe, which needs no token and tells nothing but that the
 * event loop answers. It listens before the worker starts: a start waits for MongoDB and Redis (for
 * Redis as long as it takes), and a probe that found no port meanwhile would kill a worker that is
 * only waiting.
 */
export function withMetricsEndpoint<R>(start: Start<R>): Start<R> {
  return async (config, logger, stopping) => {
    if (config.metricsPort === 0) return start(config, logger, stopping);
    const own = new Registry();
    collectDefaultMetrics({ register: own });
    const registry = Registry.merge([own, businessRegistry]);
    const server = await listen(registry, config.metricsPort, metricsTokenCheck(config.metricsToken));
    logger.info({ port: config.metricsPort }, 'metrics served on /metrics');
    const running = await start(config, logger, stopping).catch((err: unknown) => {
      server.close();
      throw err;
    });
    return {
      ...running,
      // Closed after the worker has drained: a liveness probe on /metrics keeps answering while
      // jobs in flight finish, so the orchestrator does not kill a worker that is shutting down well.
      shutdown: async () => {
        const ok = await running.shutdown();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await closed;
        return ok;
      },
    };
  };
}

function listen(registry: Registry, port: number, presentsToken: (authorization: string | undefined) => boolean): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    if (!presentsToken(req.headers.authorization)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': METRICS_CHALLENGE }).end('Invalid or missing metrics token\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(err as Error).message}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve(server));
  });
}
