import { PushSlotsBusyError, createPushSendSlots } from '../../../core/push/push-send-slots.js';

describe('push send slots: a share per user and per enterprise in a worker process', () => {
  test('when a user holds their share, then their next push waits, another user of the enterprise gets a slot, and a release frees one', () => {
    const slots = createPushSendSlots({ perUser: 2, perEnterprise: 10 });
    const mal = { enterpriseId: 'acme', userId: 'mal' };
    const releases = [slots.take(mal), slots.take(mal)];
    expect(() => slots.take(mal)).toThrow(expect.objectContaining({ name: 'PushSlotsBusyError', share: 'user' }));
    expect(() => slots.take({ enterpriseId: 'acme', userId: 'alice' })).not.toThrow();
    // The same userId of another enterprise is another user.
    expect(() => slots.take({ enterpriseId: 'bank', userId: 'mal' })).not.toThrow();
    releases[0]?.();
    releases[0]?.();
    expect(() => slots.take(mal)).not.toThrow();
    expect(() => slots.take(mal)).toThrow(PushSlotsBusyError);
  });

  test("when an enterprise's users together hold its share, then its next push waits and another enterprise's user gets a slot", () => {
    const slots = createPushSendSlots({ perUser: 1, perEnterprise: 2 });
    const first = slots.take({ enterpriseId: 'acme', userId: 'u1' });
    slots.take({ enterpriseId: 'acme', userId: 'u2' });
    expect(() => slots.take({ enterpriseId: 'acme', userId: 'u3' })).toThrow(
      expect.objectContaining({ name: 'PushSlotsBusyError', share: 'enterprise' }),
    );
    expect(() => slots.take({ enterpriseId: 'bank', userId: 'u1' })).not.toThrow();
    first();
    expect(() => slots.take({ enterpriseId: 'acme', userId: 'u3' })).not.toThrow();
  });
});
