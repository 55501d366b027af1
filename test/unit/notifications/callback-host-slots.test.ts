import { CallbackHostBusyError, createCallbackHostSlots } from '../../../core/notifications/callback-host-slots.js';

describe('callback host slots: a share per enterprise and receiver host in a worker process', () => {
  test('when an enterprise holds its share of a host, then its next callback there waits, and another enterprise on the same host gets a slot', () => {
    const slots = createCallbackHostSlots(2);
    const mallory = { enterpriseId: 'mallory', host: 'hooks.example:443' };
    const releases = [slots.take(mallory), slots.take(mallory)];
    expect(() => slots.take(mallory)).toThrow(CallbackHostBusyError);
    expect(() => slots.take({ enterpriseId: 'bank', host: 'hooks.example:443' })).not.toThrow();
    releases[0]?.();
    expect(() => slots.take(mallory)).not.toThrow();
  });
});
