import { otpStillWanted } from '../../../core/otp/otp-replay-check.js';
import type { OtpRecord } from '../../../core/otp/otps.repository.js';
import type { User } from '../../../core/users/user.types.js';

// Whether a failed OTP message may be sent again, for each state an OTP can be in.
describe('otpStillWanted', () => {
  const now = new Date('2026-11-25T08:00:00Z');
  const delivery = { refId: 'otp-1', enterpriseId: 'acme' } as Parameters<ReturnType<typeof otpStillWanted>>[0];
  const check = (otp: Partial<OtpRecord> | null, user: Partial<User> | null = {}) =>
    otpStillWanted(
      {
        findInEnterprise: async (id: string, { enterpriseId }: { enterpriseId: string }) =>
          otp && id === 'otp-1' && enterpriseId === 'acme'
            ? ({
                status: 'ACTIVE',
                userId: 'ria',
                attempts: 3,
                attemptsUsed: 0,
                expiresAt: new Date(now.getTime() + 60_000),
                ...otp,
              } as OtpRecord)
            : undefined,
      },
      {
        findUser: async ({ enterpriseId, userId }) =>
          user && enterpriseId === 'acme' && userId === 'ria' ? ({ status: 'ACTIVE', ...user } as User) : undefined,
      },
    )(delivery, now);

  test.each([
    ['an active OTP', 'sent again', {}, undefined],
    ['a used OTP', 'skipped as ended', { status: 'USED' as const }, 'ended'],
    ['a cancelled OTP', 'skipped as ended', { status: 'CANCELLED' as const }, 'ended'],
    ['a locked OTP', 'skipped as ended', { status: 'LOCKED' as const }, 'ended'],
    ['an OTP without attempts left', 'skipped as ended', { attemptsUsed: 3 }, 'ended'],
    ['an expired OTP', 'skipped as expired', { expiresAt: now }, 'expired'],
    ['an unknown OTP', 'skipped as ended', null, 'ended'],
  ])('when the delivery is of %s, then it is %s', async (_, __, otp, code) => {
    expect((await check(otp))?.code).toBe(code);
  });

  test.each([
    ['blocked since', { blocked: { at: now } }, 'Its user is blocked.'],
    ['deleted since', { status: 'DELETED' as const }, 'Its user was deleted.'],
    ['no longer found in the enterprise', null, 'Its user was deleted.'],
  ])('when the user of an active OTP was %s, then its message is skipped as ended', async (_, user, reason) => {
    expect(await check({}, user as Partial<User> | null)).toEqual({ code: 'ended', reason });
  });
});
