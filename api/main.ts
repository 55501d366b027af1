import { once } from 'node:events';
import type { Server } from 'node:http';
import type { Config } from '../core/platform/config/config.js';
import { runProcess } from '../core/platform/lifecycle/run-process.js';
import { createShutdown } from '../core/platform/lifecycle/shutdown.js';
import type { Logger } from '../core/platform/logger/logger.js';
import { buildApp } from './app.js';
import { composeApi } from './composition-root.js';
import { setDrainingCheck } from './draining-state.js';
import { readSigningKeysAtStart } from './signing-keys-at-start.js';
import { trackHttpDrain } from './http-server-drain.js';
import { createServiceContext } from './service-context.factory.js';

export interface RunningApi {
  server: Server;
  url: string;
  shutdown: () => Promise<boolean>;
}

/** Starts the API: connect, build, listen. Used by this entry and by the all-in-one runner. */
export async function startApi(config: Config, logger: Logger): Promise<RunningApi> {
  const ctx = await createServiceContext(config, logger);
  const services = composeApi(ctx);
  await readSigningKeysAtStart(services.authServer.signingKeys, logger).catch(async (err: unknown) => {
    await ctx.close();
    throw err;
  });
  const app = buildApp(ctx, services);
  const server = app.listen(config.port, config.host);
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const http = trackHttpDrain(server, { windowMs: config.shutdownDrainWindowMs });
  setDrainingCheck(app, http.isDraining);
  services.scheduledRotation?.start();
  const shutdown = createShutdown(
    [
      // Readiness 503 and Connection: close on every answer for the drain window, then stop
      // listening and wait for the last answer; then close the stores, which keep a few seconds
      // of their own even when the drain overran.
      { name: 'http requests in flight', run: () => http.drain(), abort: () => http.abort(), minMs: config.shutdownDrainWindowMs + 2000 },
      // What the last answers left running (a login code being generated and queued) needs the stores.
      { name: 'work after answers', run: () => services.afterAnswers.settled() },
      // Marks of events already appended; left standing, those events would come again.
      { name: 'user event marks', run: () => services.repositories.userEventOutbox.flush() },
      // A scheduled rotation under way finishes (its writes need the stores); no new one starts.
      { name: 'scheduled key rotation', run: async () => services.scheduledRotation?.stop() },
      { name: 'connections', run: () => ctx.close(), minMs: 5000 },
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
