import { Cluster } from 'ioredis';
import { createBudget, type BudgetDeclaration } from '../../core/platform/throttling/budget.js';
import { createFailureBudget } from '../../core/platform/throttling/failure-budget.js';
import type { BudgetState } from '../../core/platform/throttling/rate-limit-headers.js';
import { useRunRedis } from '../support/run-redis.js';

// The limiter factory on its own, against the run's Redis (the cluster too, in the cluster pass).
describe('a declared budget', () => {
  const run = useRunRedis('budget');

  let n = 0;
  const budget = (declaration: Partial<BudgetDeclaration> = {}) =>
    createBudget(run.redis, run.prefix, { name: `b${++n}`, points: 2, durationSeconds: 600, ...declaration });

  test('when points are taken, then each answer counts them and says where the budget stands, and the last one is refused with the wait', async () => {
    const b = budget({ policy: 'some-policy' });
    const first = await b.take('alice');
    const second = await b.take('alice');
    const third = await b.take('alice');
    expect(first).toMatchObject({
      admitted: true,
      consumed: 1,
      state: { policy: 'some-policy', quota: 2, windowSeconds: 600, remaining: 1 },
    });
    expect(second).toMatchObject({ admitted: true, consumed: 2, state: { remaining: 0 } });
    expect(third).toMatchObject({ admitted: false, state: { policy: 'some-policy', remaining: 0 } });
    expect(third.waitMs).toBeGreaterThan(590_000);
    expect(third.waitMs).toBeLessThanOrEqual(600_000);
    expect(third.state.resetSeconds).toBe(Math.ceil(third.waitMs / 1000));
    // Another subject has a budget of its own.
    expect(await b.take('bob')).toMatchObject({ admitted: true, consumed: 1 });
  });

  test('when a budget is declared, then its keys are <prefix>:rl:<name>:<subject> (the deployment prefix first, so one Cluster slot)', async () => {
    const b = budget({ name: 'feature:perThing' });
    await b.take('ent:alice|10.0.0.1');
    expect(await run.redis.exists(`${run.prefix}:rl:feature:perThing:ent:alice|10.0.0.1`)).toBe(1);
    expect(await run.redis.pttl(`${run.prefix}:rl:feature:perThing:ent:alice|10.0.0.1`)).toBeGreaterThan(590_000);
    if (run.redis instanceof Cluster) {
      const slotOf = async (key: string) => Number(await run.redis.call('CLUSTER', 'KEYSLOT', key));
      expect(await slotOf(`${run.prefix}:rl:feature:perThing:ent:alice|10.0.0.1`)).toBe(await slotOf(`${run.prefix}:dispatch:x`));
    }
  });

  test('when consume finds the budget spent, then it throws what the feature makes of the wait and the state; else it answers the state', async () => {
    const b = budget({ points: 1 });
    const refused = (waitMs: number, state: BudgetState) => Object.assign(new Error('spent'), { waitMs, state });
    expect(await b.consume('alice', refused)).toMatchObject({ policy: b.declaration.name, quota: 1, remaining: 0 });
    const error = (await b.consume('alice', refused).catch((err: unknown) => err)) as Error & { waitMs: number; state: BudgetState };
    expect(error.message).toBe('spent');
    expect(error.waitMs).toBeGreaterThan(590_000);
    expect(error.state).toMatchObject({ quota: 1, windowSeconds: 600, remaining: 0 });
  });

  test('when a point is refunded, peeked at or the subject reset, then the budget shows it', async () => {
    const b = budget();
    await b.take('alice');
    await b.take('alice');
    expect(await b.peek('alice')).toBe(2);
    await b.refund('alice');
    expect(await b.peek('alice')).toBe(1);
    expect((await b.take('alice')).admitted).toBe(true);
    await b.reset('alice');
    expect(await b.peek('alice')).toBe(0);
    expect(await b.peek('nobody')).toBe(0);
  });

  test('when a budget separates test traffic, then test and real subjects never use up each other; else the flag changes nothing', async () => {
    const separate = budget({ points: 1, separateTestTraffic: true });
    expect((await separate.take('alice', { test: true })).admitted).toBe(true);
    expect((await separate.take('alice', { test: true })).admitted).toBe(false);
    expect((await separate.take('alice')).admitted).toBe(true);
    expect(await run.redis.exists(`${run.prefix}:rl:${separate.declaration.name}:test:alice`)).toBe(1);
    // A refused take counts too (as before the factory): two on the test key, one on the real one.
    expect(await separate.peek('alice', { test: true })).toBe(2);
    await separate.refund('alice', { test: true });
    expect(await separate.peek('alice', { test: true })).toBe(1);
    expect(await separate.peek('alice')).toBe(1);

    const shared = budget({ points: 1 });
    expect((await shared.take('alice', { test: true })).admitted).toBe(true);
    expect((await shared.take('alice')).admitted).toBe(false);
  });

  test('when a take names its own window, then that take counts for that long (a gate closing for a growing delay)', async () => {
    const gate = budget({ points: 1, durationSeconds: 3600 });
    expect((await gate.take('alice', { durationSeconds: 5 })).admitted).toBe(true);
    const closed = await gate.take('alice', { durationSeconds: 5 });
    expect(closed.admitted).toBe(false);
    expect(closed.waitMs).toBeLessThanOrEqual(5000);
  });
});

// A budget of failures: counted in Redis, checked from the process's memory (no Redis call).
describe('a budget of failures', () => {
  const run = useRunRedis('failures');

  let n = 0;
  const failures = (points = 2, options: { maxRemembered?: number } = {}) => {
    const name = `f${++n}`;
    const declaration = { name, points, durationSeconds: 600 };
    // Two instances of one budget: two API processes sharing Redis.
    return [
      createFailureBudget(run.redis, run.prefix, declaration, options),
      createFailureBudget(run.redis, run.prefix, declaration, options),
    ];
  };

  test('when failures spend the budget, then the one that spends it starts the wait, and this process answers the wait without Redis', async () => {
    const [here] = failures();
    expect(here.isQuiet()).toBe(true);
    expect(await here.countFailure('10.0.0.1')).toEqual({ refused: false, waitMs: 0 });
    expect(here.waitMs('10.0.0.1')).toBe(0);
    const spent = await here.countFailure('10.0.0.1');
    expect(spent.refused).toBe(false);
    expect(spent.waitMs).toBeGreaterThan(590_000);
    expect(here.isQuiet()).toBe(false);
    expect(here.waitMs('10.0.0.1')).toBeGreaterThan(590_000);
    expect(here.waitMs('10.0.0.2')).toBe(0);
    // Answered from memory: the process knows even with the count gone from Redis.
    await run.redis.del(`${run.prefix}:rl:${here.declaration.name}:10.0.0.1`);
    expect(here.waitMs('10.0.0.1')).toBeGreaterThan(590_000);
  });

  test('when another process spent the budget, then this one refuses the first failure it sees and remembers the wait from then on', async () => {
    const [here, there] = failures();
    await there.countFailure('10.0.0.1');
    await there.countFailure('10.0.0.1');
    expect(here.waitMs('10.0.0.1')).toBe(0);
    const refused = await here.countFailure('10.0.0.1');
    expect(refused.refused).toBe(true);
    expect(refused.waitMs).toBeGreaterThan(590_000);
    expect(here.waitMs('10.0.0.1')).toBeGreaterThan(590_000);
  });

  test('when more subjects are spent than the process remembers, then it starts over and Redis still refuses each at its next failure', async () => {
    const [here] = failures(1, { maxRemembered: 2 });
    for (const subject of ['a', 'b', 'c']) expect((await here.countFailure(subject)).waitMs).toBeGreaterThan(0);
    expect(here.waitMs('a')).toBe(0);
    expect(here.waitMs('c')).toBeGreaterThan(0);
    expect(await here.countFailure('a')).toMatchObject({ refused: true });
    expect(here.waitMs('a')).toBeGreaterThan(0);
  });
});
