import { RevocationChecks } from '../../../core/auth/revocation-checks.js';

/** A store whose answers the test sets, counting the reads. */
function storeWith(revoked: Set<string>) {
  const store = {
    reads: 0,
    isRevoked: async (jti: string) => {
      store.reads += 1;
      return revoked.has(jti);
    },
  };
  return store;
}

describe('revocation checks', () => {
  test('when a token is checked again within the window, then the store is read once', async () => {
    const store = storeWith(new Set());
    const checks = new RevocationChecks(store, 5000);
    expect(await checks.isRevoked('a', 1000)).toBe(false);
    expect(await checks.isRevoked('a', 5999)).toBe(false);
    expect(store.reads).toBe(1);
  });

  test('when concurrent requests check a new token, then they share one read', async () => {
    const store = storeWith(new Set());
    const checks = new RevocationChecks(store, 5000);
    await Promise.all([checks.isRevoked('a', 1000), checks.isRevoked('a', 1000), checks.isRevoked('a', 1001)]);
    expect(store.reads).toBe(1);
  });

  test('when the window has passed, then a revocation made elsewhere is seen, and remembered for good', async () => {
    const revoked = new Set<string>();
    const store = storeWith(revoked);
    const checks = new RevocationChecks(store, 5000);
    expect(await checks.isRevoked('a', 1000)).toBe(false);
    revoked.add('a');
    expect(await checks.isRevoked('a', 2000)).toBe(false);
    expect(await checks.isRevoked('a', 6000)).toBe(true);
    expect(await checks.isRevoked('a', 60000)).toBe(true);
    expect(store.reads).toBe(2);
  });

  test('when this process revoked the token, then it is refused at once without a read', async () => {
    const store = storeWith(new Set());
    const checks = new RevocationChecks(store, 5000);
    expect(await checks.isRevoked('a', 1000)).toBe(false);
    checks.markRevoked('a', 1001);
    expect(await checks.isRevoked('a', 1002)).toBe(true);
    expect(store.reads).toBe(1);
  });

  test('when this process revokes the token while a read of it is under way, then the read does not undo the revocation', async () => {
    let answer: (revoked: boolean) => void = () => {};
    const checks = new RevocationChecks({ isRevoked: () => new Promise<boolean>((resolve) => (answer = resolve)) }, 5000);
    const underWay = checks.isRevoked('a', 1000);
    checks.markRevoked('a', 1001);
    // The read was made before the revocation was stored.
    answer(false);
    expect(await underWay).toBe(false);
    expect(await checks.isRevoked('a', 1002)).toBe(true);
  });

  test('when the store fails, then the failure is not remembered', async () => {
    let fail = true;
    const checks = new RevocationChecks(
      {
        isRevoked: async () => {
          if (fail) throw new Error('down');
          return false;
        },
      },
      5000,
    );
    await expect(checks.isRevoked('a', 1000)).rejects.toThrow('down');
    fail = false;
    expect(await checks.isRevoked('a', 1001)).toBe(false);
  });

  test('when more tokens are checked than it holds, then the oldest are forgotten', async () => {
    const store = storeWith(new Set());
    const checks = new RevocationChecks(store, 5000, 2);
    await checks.isRevoked('a', 1000);
    await checks.isRevoked('b', 1000);
    await checks.isRevoked('c', 1000);
    await checks.isRevoked('a', 1000);
    expect(store.reads).toBe(4);
  });
});
