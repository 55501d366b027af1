import { jest } from '@jest/globals';
import type { Config } from '../../../core/platform/config/config.js';
import type { RunningWorker } from '../../../core/platform/lifecycle/worker-lifecycle.js';
import { StartCancelledError, unlessStopped } from '../../../core/platform/lifecycle/start-cancel.js';
import { startAllWorkers } from '../../../workers/all.js';
import { memoryLogger } from '../../support/test-service.js';

// The starters never read the configuration: they stand in for the three workers.
const config = {} as Config;

describe('startAllWorkers (npm start: every worker in one process)', () => {
  test('when a later worker fails to start, then the workers already started are shut down before the start fails', async () => {
    const shutDown: string[] = [];
    const started = (name: string) => async (): Promise<RunningWorker> => ({
      shutdown: async () => {
        shutDown.push(name);
        return true;
      },
    });
    const failing = async (): Promise<RunningWorker> => {
      throw new Error('notification worker: MongoDB refused');
    };
    const { logger, lines } = memoryLogger();

    await expect(startAllWorkers(config, logger, [started('dispatch'), started('enrollment'), failing])).rejects.toThrow(
      'notification worker: MongoDB refused',
    );

    expect(shutDown.sort()).toEqual(['dispatch', 'enrollment']);
    expect(lines().filter((l) => l.msg === 'a worker failed to start; stopping the workers already started')).toHaveLength(1);
  });

  test('when every worker starts, then one shutdown stops them all and tells whether every one succeeded', async () => {
    const shutDown: string[] = [];
    const started = (name: string, ok: boolean) => async (): Promise<RunningWorker> => ({
      shutdown: async () => {
        shutDown.push(name);
        return ok;
      },
    });
    const all = await startAllWorkers(config, memoryLogger().logger, [started('dispatch', true), started('enrollment', false)]);

    expect(await all.shutdown()).toBe(false);
    expect(shutDown.sort()).toEqual(['dispatch', 'enrollment']);
  });

  test('when the start is stopped while a worker waits for Redis, then the start gives up at once and the workers already started are shut down', async () => {
    const shutDown: string[] = [];
    const started = async (): Promise<RunningWorker> => ({
      shutdown: async () => {
        shutDown.push('dispatch');
        return true;
      },
    });
    // Waits for a Redis that never comes, unless told to stop.
    let reached: () => void = () => undefined;
    const waitingReached = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const waiting = (_config: Config, _logger: unknown, stopping?: AbortSignal) => {
      reached();
      return unlessStopped(new Promise<RunningWorker>(() => undefined), stopping, 'Redis');
    };
    const never = jest.fn(started);
    const stopping = new AbortController();
    const { logger, lines } = memoryLogger();

    const start = startAllWorkers(config, logger, [started, waiting, never], stopping.signal);
    await waitingReached;
    stopping.abort();

    await expect(start).rejects.toThrow(new StartCancelledError('Redis'));
    expect(shutDown).toEqual(['dispatch']);
    expect(never).not.toHaveBeenCalled();
    expect(lines().map((l) => l.msg)).toContain(
      'start given up: the process was told to stop while it waited for Redis; stopping the workers already started',
    );
  });
});
