import { loadOnFirstUse } from '../../../core/platform/load-on-first-use.js';

const evaluations = () => (globalThis as { firstUseModuleEvaluations?: number }).firstUseModuleEvaluations ?? 0;

describe('load on first use', () => {
  test('when a module loader is wrapped, then nothing loads until the first call, and every caller gets the same promise of the module', async () => {
    const loadModule = loadOnFirstUse(() => import('./first-use-module.fixture.js'));
    expect(evaluations()).toBe(0);

    const first = loadModule();
    const second = loadModule();
    expect(second).toBe(first);
    expect((await first).greeting).toBe('loaded');
    expect(loadModule()).toBe(first);
    expect(evaluations()).toBe(1);
  });

  test('when a load fails, then its callers see the error and the next call loads again; a success is kept', async () => {
    let calls = 0;
    const load = loadOnFirstUse(async () => {
      calls += 1;
      if (calls === 1) throw new Error('not yet');
      return calls;
    });

    const failing = load();
    // A caller arriving while the failing load is under way shares it.
    expect(load()).toBe(failing);
    await expect(failing).rejects.toThrow('not yet');

    const retried = load();
    expect(retried).not.toBe(failing);
    expect(await retried).toBe(2);
    expect(load()).toBe(retried);
    expect(await load()).toBe(2);
    expect(calls).toBe(2);
  });
});
