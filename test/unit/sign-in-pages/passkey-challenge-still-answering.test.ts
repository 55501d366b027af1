import { challengeStillAnswering, SIGN_IN_CHALLENGE_LIFETIME_MS } from '../../../core/sign-in/passkey-challenge-lifetime.js';

/**
 * The challenge a page shown again without a write of its own (a post the address's budget
 * refused) offers: the stored one while it still answers, as takePasskeyChallenge would accept it.
 */
describe('challengeStillAnswering', () => {
  const now = new Date('2026-11-30T00:10:00Z');
  const issuedAgo = (ms: number) => new Date(now.getTime() - ms);

  test('when the stored challenge was issued within its lifetime, then the page offers it', () => {
    expect(challengeStillAnswering({ passkeyChallenge: 'abc', passkeyChallengeIssuedAt: issuedAgo(1000) }, now)).toBe('abc');
    expect(
      challengeStillAnswering({ passkeyChallenge: 'abc', passkeyChallengeIssuedAt: issuedAgo(SIGN_IN_CHALLENGE_LIFETIME_MS - 1) }, now),
    ).toBe('abc');
  });

  test('when it is as old as its lifetime or older, or an answer took it, then the page offers none', () => {
    expect(
      challengeStillAnswering({ passkeyChallenge: 'abc', passkeyChallengeIssuedAt: issuedAgo(SIGN_IN_CHALLENGE_LIFETIME_MS) }, now),
    ).toBeUndefined();
    expect(challengeStillAnswering({ passkeyChallenge: 'abc', passkeyChallengeIssuedAt: issuedAgo(60 * 60 * 1000) }, now)).toBeUndefined();
    expect(challengeStillAnswering({}, now)).toBeUndefined();
    expect(challengeStillAnswering({ passkeyChallenge: 'abc' }, now)).toBeUndefined();
  });
});
