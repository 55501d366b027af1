import { startRedisServer, type LocalService } from '../../scripts/local-services.js';
import { startTestService, type TestService } from './test-service.js';
import { eventually } from './waiting.js';

/** The Redis a test service has to itself, for tests of what the service does while Redis is gone or hangs. */
export interface OwnRedis {
  /** Stops Redis and waits until the service's connection has seen it go, so the next request meets the outage. */
  stop(): Promise<void>;
  /**
   * Starts Redis again on its port (the service reconnects to the same URL) and, unless told not to, waits until the
   * service's connection is ready again.
   */
  restart(options?: { waitForService?: boolean }): Promise<void>;
  /** Stops the Redis process without closing its connections (SIGSTOP): Redis hangs rather than goes away. */
  freeze(): void;
  /** Lets a frozen Redis run again (SIGCONT). */
  thaw(): void;
}

export interface ServiceOnOwnRedis extends TestService {
  ownRedis: OwnRedis;
}

/**
 * A test service on a Redis of its own: stopping the run's shared Redis would disturb the other test files. Its
 * `close` closes the service, then stops its Redis.
 */
export async function startServiceOnOwnRedis(label: string, overrides: Record<string, string> = {}): Promise<ServiceOnOwnRedis> {
  let server: LocalService = await startRedisServer();
  const service = await startTestService(label, { REDIS_URL: server.url, ...overrides });
  const connection = service.ctx.redis;
  const ownRedis: OwnRedis = {
    stop: async () => {
      await server.stop();
      await eventually(async () => (connection.status !== 'ready' ? true : undefined));
    },
    restart: async ({ waitForService = true } = {}) => {
      server = await startRedisServer({ port: server.port });
      if (waitForService) await eventually(async () => (connection.status === 'ready' ? true : undefined));
    },
    freeze: () => process.kill(server.pid, 'SIGSTOP'),
    thaw: () => process.kill(server.pid, 'SIGCONT'),
  };
  return {
    ...service,
    ownRedis,
    close: async () => {
      await service.close();
      await server.stop();
    },
  };
}
