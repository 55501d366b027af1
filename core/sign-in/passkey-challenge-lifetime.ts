import type { LoginState } from './login-states.repository.js';

/** Passkey sign-ins do not wait for the user forever: what the login page's script asks browsers for (its `timeout: 300000`). */
export const SIGN_IN_TIMEOUT_MS = 5 * 60 * 1000;
/** How long the page's challenge answers: the browser's timeout plus a minute for the way back. */
export const SIGN_IN_CHALLENGE_LIFETIME_MS = SIGN_IN_TIMEOUT_MS + 60 * 1000;

/**
 * The challenge stored for the sign-in's page while it still answers (no answer took it, and it
 * was issued less than SIGN_IN_CHALLENGE_LIFETIME_MS ago): what a page shown again without a
 * write of its own may offer. Undefined otherwise; the page then offers no passkey.
 */
export function challengeStillAnswering(
  state: Pick<LoginState, 'passkeyChallenge' | 'passkeyChallengeIssuedAt'>,
  now: Date,
): string | undefined {
  const issuedAt = state.passkeyChallengeIssuedAt;
  if (state.passkeyChallenge === undefined || issuedAt === undefined) return undefined;
  return issuedAt.getTime() > now.getTime() - SIGN_IN_CHALLENGE_LIFETIME_MS ? state.passkeyChallenge : undefined;
}
