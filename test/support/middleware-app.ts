import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import { errorHandler } from '../../api/errors/error-pipeline.js';
import type { ServiceContext } from '../../api/service-context.js';

/**
 * A small Express app around middleware under test, on the real ServiceContext: GET /probe runs
 * `chain` and then answers 200 with `res.locals.auth`.
 */
export async function startMiddlewareApp(
  ctx: ServiceContext,
  chain: RequestHandler[],
  options: { trustProxy?: boolean | number | string; host?: string } = {},
): Promise<{ url: string; close: () => Promise<void> }> {
  const app = express();
  app.set('trust proxy', options.trustProxy ?? ctx.config.trustProxy);
  app.get('/probe', ...chain, (_req, res) => {
    res.json({ auth: res.locals.auth as unknown });
  });
  app.use(errorHandler(ctx.logger));
  const host = options.host ?? '127.0.0.1';
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, host, () => resolve(s));
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
