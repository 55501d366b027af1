import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { buildApp } from '../../api/app.js';
import { composeApi, type ApiServices } from '../../api/composition-root.js';
import type { ServiceContext } from '../../api/service-context.js';
import { createServiceContext } from '../../api/service-context.factory.js';
import { loadConfig, type Config } from '../../core/platform/config/config.js';
import { memoryLogger } from './memory-logger.js';
import { testMongoUri } from './test-mongo-uri.js';

export interface TestService {
  ctx: ServiceContext;
  /** The app's own repositories and services (its caches included), as composeApi built them. */
  services: ApiServices;
  config: Config;
  /** The environment the config was read from (for worker processes and variants). */
  env: Record<string, string>;
  url: string;
  server: Server;
  logLines: () => Record<string, unknown>[];
  close: () => Promise<void>;
}

/** A unique database name and queue prefix for one test file. */
export function uniqueName(label: string): string {
  return `${label.replace(/[^A-Za-z0-9]/g, '').slice(0, 20)}_${randomBytes(4).toString('hex')}`;
}

/** Configuration for a test file: the run's shared servers, its own database and queue prefix. */
export function testConfig(label: string, overrides: Record<string, string> = {}): Config {
  return loadConfig(testEnv(label, overrides));
}

/** The environment of a test file's service; a worker process started with it shares its stores. */
export function testEnv(label: string, overrides: Record<string, string> = {}): Record<string, string> {
  const name = uniqueName(label);
  const redisUrl = process.env.TEST_REDIS_URL;
  const clusterNodes = process.env.TEST_REDIS_CLUSTER_NODES;
  if (!(redisUrl || clusterNodes)) throw new Error('TEST_MONGODB_URI/TEST_REDIS_URL missing: run through `npm test`');
  // The cluster pass (TEST_REDIS_CLUSTER_NODES) puts every file on the cluster, except a file
  // that brings a Redis of its own.
  const redis: Record<string, string> =
    clusterNodes && !('REDIS_URL' in overrides) ? { REDIS_CLUSTER_NODES: clusterNodes } : { REDIS_URL: redisUrl as string };
  return {
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    MONGODB_URI: testMongoUri(name),
    ...redis,
    QUEUE_PREFIX: name,
    PUBLIC_URL: 'http://127.0.0.1:0',
    ADMIN_TOKEN: 'test-admin-token-0123456789abcdef',
    OTP_HMAC_KEY: randomBytes(32).toString('base64url'),
    OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    ...overrides,
  };
}

export { memoryLogger } from './memory-logger.js';

/** The warnings and errors among captured log lines, one short text each: what a failing test prints to say why. */
export function warningsIn(lines: Record<string, unknown>[]): string[] {
  return lines.filter((line) => Number(line.level) >= 40).map((line) => JSON.stringify(line).slice(0, 400));
}

/** A port that was free a moment ago (for services whose PUBLIC_URL must name their own port). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * Starts the whole API in-process on a free port with real Redis and MongoDB. With
 * `ownPublicUrl`, PUBLIC_URL is the address the service listens on, so the issuer in discovery
 * is the URL a standard OAuth client reaches (issuer checks of RFC 8414).
 */
export async function startTestService(
  label: string,
  overrides: Record<string, string> = {},
  options: { ownPublicUrl?: boolean; publicHost?: 'localhost' } = {},
): Promise<TestService> {
  const port = options.ownPublicUrl ? await freePort() : 0;
  // `localhost` where browsers need a host name (passkeys: an IP address is no relying party id).
  const host = options.publicHost ?? '127.0.0.1';
  const env = testEnv(label, { ...(options.ownPublicUrl ? { PUBLIC_URL: `http://${host}:${port}` } : {}), ...overrides });
  const config = loadConfig(env);
  const { logger, lines } = memoryLogger();
  const ctx = await createServiceContext(config, logger);
  const services = composeApi(ctx);
  const app = buildApp(ctx, services);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(port, '127.0.0.1', () => resolve(s));
  });
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    ctx,
    services,
    config,
    env,
    url,
    server,
    logLines: lines,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await services.afterAnswers.settled();
      await ctx.close();
    },
  };
}
