import { createShutdown } from '../../../core/lifecycle/shutdown.js';
import { memoryLogger } from '../../support/test-service.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createShutdown', () => {
  test('when an early step overruns the deadline, then later steps still get their own minimum time and finish', async () => {
    const { logger, lines } = memoryLogger();
    const done: string[] = [];
    let aborted = false;
    const shutdown = createShutdown(
      [
        { name: 'drain', run: () => sleep(10000), minMs: 50, abort: () => (aborted = true) },
        { name: 'stores', run: () => sleep(100).then(() => done.push('stores')), minMs: 1000 },
      ],
      logger,
      20,
    );
    expect(await shutdown()).toBe(false);
    expect(aborted).toBe(true);
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
