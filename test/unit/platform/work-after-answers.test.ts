import { createWorkAfterAnswers } from '../../../core/platform/lifecycle/work-after-answers.js';

/** A task that ends when the test says so. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('work after answers', () => {
  test('when nothing was started, then settled resolves at once', async () => {
    await expect(createWorkAfterAnswers().settled()).resolves.toBeUndefined();
  });

  test('when tasks run, then settled waits for the last, including one started while it waited', async () => {
    const work = createWorkAfterAnswers();
    const ended: string[] = [];
    const first = gate();
    const second = gate();
    work.start(async () => {
      await first.opened;
      ended.push('first');
      work.start(async () => {
        await second.opened;
        ended.push('second');
      });
    });
    let settled = false;
    const waiting = work.settled().then(() => (settled = true));
    first.open();
    // Every pending callback has run: the first task ended, the second is still waiting on its gate.
    await new Promise((resolve) => setImmediate(resolve));
    expect({ ended, settled }).toEqual({ ended: ['first'], settled: false });
    second.open();
    await waiting;
    expect(ended).toEqual(['first', 'second']);
  });

  test('when a task fails, then settled still resolves (the task reports its own failure)', async () => {
    const work = createWorkAfterAnswers();
    work.start(() => Promise.reject(new Error('store down')));
    await expect(work.settled()).resolves.toBeUndefined();
  });
});
