import { CallbackHostBusyError, createCallbackHostSlots } from '../../../core/notifications/callback-host-slots.js';

describe('callback host slots: a share per enterprise and receiver host in a worker process', () => {
  test('when an enterprise holds its share of a host, then its next callback there waits, and another enterprise on the same host gets a slot', () => {
    const slots = createCallbackHostSlots({ perHost: 2, perEnterprise: 10 });
    const mallory = { enterpriseId: 'mallory', host: 'hooks.example:443' };
    const releases = [slots.take(mallory), slots.take(mallory)];
    expect(() => slots.take(mallory)).toThrow(CallbackHostBusyError);
    expect(() => slots.take({ enterpriseId: 'bank', host: 'hooks.example:443' })).not.toThrow();
    releases[0]?.();
    expect(() => slots.take(mallory)).not.toThrow();
  });

  test('when an enterprise holds its share across several hosts, then its next callback to yet another host waits, another enterprise gets a slot, and a release frees one', () => {
    const slots = createCallbackHostSlots({ perHost: 1, perEnterprise: 2 });
    const releases = [
      slots.take({ enterpriseId: 'mallory', host: 'a.mallory.example' }),
      slots.take({ enterpriseId: 'mallory', host: 'b.mallory.example' }),
    ];
    expect(() => slots.take({ enterpriseId: 'mallory', host: 'c.mallory.example' })).toThrow(
      expect.objectContaining({ name: 'CallbackHostBusyError', share: 'enterprise' }),
    );
    expect(() => slots.take({ enterpriseId: 'bank', host: 'hooks.bank.example' })).not.toThrow();
    // Refused takes hold nothing, and a release counts once however often it is called.
    releases[0]?.();
    releases[0]?.();
    const third = slots.take({ enterpriseId: 'mallory', host: 'c.mallory.example' });
    expect(() => slots.take({ enterpriseId: 'mallory', host: 'd.mallory.example' })).toThrow(CallbackHostBusyError);
    third();
    releases[1]?.();
    expect(() => slots.take({ enterpriseId: 'mallory', host: 'a.mallory.example' })).not.toThrow();
    expect(() => slots.take({ enterpriseId: 'mallory', host: 'b.mallory.example' })).not.toThrow();
  });
});
