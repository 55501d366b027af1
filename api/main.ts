import { once } from 'node:events';
import type { Server } from 'node:http';
import type { Config } from '../core/config/config.js';
import { runProcess } from '../core/lifecycle/run-process.js';
import { createShutdown } from '../core/lifecycle/shutdown.js';
import type { Logger } from '../core/logger/logger.js';
import { buildApp } from './app.js';
import { createServiceContext } from './service-context.factory.js';

export interface RunningApi {
  server: Server;
  url: string;
  shutdown: () => Promise<boolean>;
}

/** Starts the API: connect, build, listen. Used by this entry and by the all-in-one runner. */
export async function startApi(config: Config, logger: Logger): Promise<RunningApi> {
  const ctx = await createServiceContext(config, logger);
  const app = buildApp(ctx);
  const server = app.listen(config.port, config.host);
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const shutdown = createShutdown(
    [
      // Stop accepting connections and let in-flight requests finish.
      { name: 'http server', run: () => new Promise<void>((done, fail) => server.close((err) => (err ? fail(err) : done()))) },
      { name: 'connections', run: () => ctx.close() },
    ],
    logger,
    config.shutdownDeadlineMs,
  );
  return { server, url: `http://127.0.0.1:${port}`, shutdown };
}

function isEntry(): boolean {
  return process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
}

if (isEntry()) {
  runProcess('api', async (config, logger) => {
    const api = await startApi(config, logger);
    logger.info({ url: api.url }, 'API listening');
    return api;
  });
}
