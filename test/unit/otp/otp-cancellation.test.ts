import { createLogger } from '../../../core/platform/logger/logger.js';
import { createOtpCancellationService } from '../../../core/otp/otp-cancellation.service.js';

const AT = new Date('2026-11-28T07:00:00.000Z');

/** The service on stores that hand out the user's pending OTPs and record how their rows are ended. */
function cancellationOf(pendingOtps: string[]) {
  const ended: { enterpriseId: string; otpUuids: readonly string[]; at?: Date }[] = [];
  const service = createOtpCancellationService({
    otps: {
      cancelActiveOfUser: async () => pendingOtps,
      cancel: async () => undefined,
      findForClient: async () => undefined,
    },
    deliveries: {
      cancelQueued: async (scope, otpUuids, at) => {
        ended.push({ enterpriseId: scope.enterpriseId, otpUuids, at });
        return otpUuids.length;
      },
    },
    status: async () => {
      throw new Error('not asked here');
    },
    logger: createLogger({ level: 'silent' }),
    now: () => AT,
  });
  return { service, ended };
}

describe('cancelling every pending OTP of a blocked or deleted user', () => {
  test('when the user has several pending OTPs, then their waiting rows are ended in one write, confined to the enterprise', async () => {
    const { service, ended } = cancellationOf(['otp-a', 'otp-b', 'otp-c']);
    await service.cancelAllOfUser({ enterpriseId: 'acme', userId: 'ana' });
    expect(ended).toEqual([{ enterpriseId: 'acme', otpUuids: ['otp-a', 'otp-b', 'otp-c'], at: AT }]);
  });

  test('when the user has no pending OTP, then no delivery row is written', async () => {
    const { service, ended } = cancellationOf([]);
    await service.cancelAllOfUser({ enterpriseId: 'acme', userId: 'ana' });
    expect(ended).toEqual([]);
  });
});
