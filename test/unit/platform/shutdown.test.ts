import { jest } from '@jest/globals';
import { createShutdown } from '../../../core/platform/lifecycle/shutdown.js';
import { memoryLogger } from '../../support/test-service.js';

describe('createShutdown', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  test('when an early step overruns the deadline, then later steps still get their own minimum time and finish', async () => {
    // The shutdown's clock is jest's: time passes when the test says so.
    jest.useFakeTimers();
    const { logger, lines } = memoryLogger();
    const done: string[] = [];
    let aborted = false;
    let finishStores = () => {};
    const shutdown = createShutdown(
      [
        { name: 'drain', run: () => new Promise(() => {}), minMs: 50, abort: () => (aborted = true) },
        {
          name: 'stores',
          run: () => new Promise<void>((resolve) => (finishStores = resolve)).then(() => done.push('stores')),
          minMs: 1000,
        },
      ],
      logger,
      20,
    );
    const result = shutdown();
    // The drain is cut at its own 50 ms (past the 20 ms deadline).
    await jest.advanceTimersByTimeAsync(50);
    expect(aborted).toBe(true);
    // The stores step still has its 1 s: 900 ms on, it is not cut, and it finishes.
    await jest.advanceTimersByTimeAsync(900);
    finishStores();
    expect(await result).toBe(false);
    expect(done).toEqual(['stores']);
    expect(
      lines()
        .filter((l) => l.msg === 'shutdown step failed')
        .map((l) => l.step),
    ).toEqual(['drain']);
  });

  test('when every step finishes in time, then it resolves true, and a second call returns the same run', async () => {
    let runs = 0;
    const shutdown = createShutdown([{ name: 'only', run: async () => void (runs += 1) }], memoryLogger().logger, 1000);
    const first = shutdown();
    expect(shutdown()).toBe(first);
    expect(await first).toBe(true);
    expect(runs).toBe(1);
  });
});
