import { VerifiedTokenCache } from '../../../core/auth/verified-token.cache.js';

describe('verified token cache', () => {
  test('when a verified token is asked for again before it expires, then its claims come from the cache', () => {
    const cache = new VerifiedTokenCache();
    cache.set('t1', { client_id: 'c', exp: 2000 });
    expect(cache.get('t1', 1999)).toEqual({ client_id: 'c', exp: 2000 });
  });

  test('when the token has expired, or has no expiry, then the cache forgets it', () => {
    const cache = new VerifiedTokenCache();
    cache.set('t1', { exp: 2000 });
    cache.set('t2', {});
    expect(cache.get('t1', 2000)).toBeUndefined();
    expect(cache.get('t2', 1)).toBeUndefined();
    expect(cache.get('t1', 1)).toBeUndefined();
  });

  test('when the cache is full, then the oldest token goes first', () => {
    const cache = new VerifiedTokenCache(2);
    cache.set('a', { exp: 10 });
    cache.set('b', { exp: 10 });
    cache.set('c', { exp: 10 });
    expect([cache.get('a', 1), cache.get('b', 1), cache.get('c', 1)]).toEqual([undefined, { exp: 10 }, { exp: 10 }]);
  });

  test('when the cache is full and a token it holds is set again, then no other token is dropped', () => {
    const cache = new VerifiedTokenCache(2);
    cache.set('a', { exp: 10 });
    cache.set('b', { exp: 10 });
    cache.set('b', { exp: 10 });
    expect([cache.get('a', 1), cache.get('b', 1)]).toEqual([{ exp: 10 }, { exp: 10 }]);
  });
});

describe('verified token cache: keys removed since', () => {
  test('when the key that signed a cached token is no longer valid, then the cache forgets the token', () => {
    const cache = new VerifiedTokenCache();
    cache.set('t1', { exp: 2000 }, 'old-key');
    cache.set('t2', { exp: 2000 }, 'new-key');
    const valid = (kid: string | undefined) => kid === 'new-key';
    expect(cache.get('t1', 1, valid)).toBeUndefined();
    expect(cache.get('t2', 1, valid)).toEqual({ exp: 2000 });
    expect(cache.get('t1', 1)).toBeUndefined();
  });
});
