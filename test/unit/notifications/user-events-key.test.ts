import { userEventsKey } from '../../../core/notifications/notification-user-events.js';

// Redis Cluster hashes only what is inside a key's first {…}: that part decides which master holds it.
const hashTagOf = (key: string): string | undefined => /\{([^}]*)\}/.exec(key)?.[1];

describe('userEventsKey', () => {
  test('when the prefix is a cluster prefix in braces, then the hash tag is the user, not the deployment', () => {
    const key = userEventsKey('{svc}', 'ent-1', 'alice');
    expect(key).toBe('svc:user-events:{ent-1:alice}');
    expect(hashTagOf(key)).toBe('ent-1:alice');
    expect(hashTagOf(userEventsKey('{svc}', 'ent-1', 'bob'))).not.toBe(hashTagOf(key));
  });

  test('when ids hold braces or colons, then they are encoded and cannot change the hash tag or reach another key', () => {
    const key = userEventsKey('svc', 'ent:1', '}{x}');
    expect(hashTagOf(key)).toBe('ent%3A1:%7D%7Bx%7D');
    expect(userEventsKey('svc', 'a:b', 'c')).not.toBe(userEventsKey('svc', 'a', 'b:c'));
  });
});
