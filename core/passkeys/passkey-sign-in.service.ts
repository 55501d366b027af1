import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { PasskeyConfig } from '../platform/config/config.js';
import type { Logger } from '../platform/logger/logger.js';
import type { LoginLimits } from '../sign-in/login-rate-limits.js';
import { canSignIn } from '../users/user-reachability.js';
import { findUserForSignIn, signInUserKey, type SignInClient } from '../sign-in/sign-in-users.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { PasskeysRepository } from './passkeys.repository.js';
import type { PasskeyOutcome } from '../sign-in/passkey-answer.js';
import { loadWebAuthn } from './webauthn-library.js';

export interface PasskeySignInDeps {
  passkeys: Pick<PasskeysRepository, 'findByCredential' | 'recordUse'>;
  users: Pick<UsersRepository, 'findUser'>;
  limits: Pick<LoginLimits, 'consumeStep' | 'rememberAddress'>;
  config: Pick<PasskeyConfig, 'rpId'>;
  /**
   * The origin of the sign-in page (that of PUBLIC_URL), the one page that asks for sign-in
   * answers. Not PASSKEY_ORIGINS: apps' pages listed there to register passkeys could otherwise
   * answer the challenge of a login page someone else opened, and sign that person in as the user.
   */
  signInOrigin: string;
  logger: Logger;
  now?: () => Date;
}

/**
 * Sign-in with a passkey on the login page: the browser's answer to the page's one challenge,
 * checked by @simplewebauthn/server against the passkey of the app's enterprise (never another
 * enterprise's), the relying party id and the sign-in page's own origin, with user verification required.
 * The user must still be allowed to sign in (active, not blocked). Attempts count against the
 * same per-user budgets as the code steps.
 */
export function createPasskeySignIn(deps: PasskeySignInDeps) {
  const now = deps.now ?? (() => new Date());

  return {
    async verify(client: SignInClient, answer: AuthenticationResponseJSON, challenge: string, address: string): Promise<PasskeyOutcome> {
      const passkey = await deps.passkeys.findByCredential(client, answer.id);
      if (!passkey) return { kind: 'unknown-passkey' };
      const key = signInUserKey(client, passkey.userId);
      await deps.limits.consumeStep(key, address, false);
      // A discoverable credential names its user: it must be the one the passkey was registered for.
      if (answer.response.userHandle !== undefined && answer.response.userHandle !== passkey.userHandle) return { kind: 'not-verified' };
      const { server, isoBase64URL } = await loadWebAuthn();
      const check = (counter: number) =>
        server.verifyAuthenticationResponse({
          response: answer,
          expectedChallenge: challenge,
          expectedOrigin: deps.signInOrigin,
          expectedRPID: deps.config.rpId,
          credential: { id: passkey.credentialId, publicKey: isoBase64URL.toBuffer(passkey.publicKey), counter },
          requireUserVerification: true,
        });
      let newCounter: number;
      try {
        const verified = await check(passkey.counter);
        if (!verified.verified) return { kind: 'not-verified' };
        newCounter = verified.authenticationInfo.newCounter;
      } catch (err) {
        const message = (err as Error).message;
        // A counter that did not move forward: the passkey may have been copied (WebAuthn §6.1.1),
        // but only when the passkey signed the answer. The library compares counters before the
        // signature, so anyone who knows a credential id could otherwise raise this alarm at will.
        if (/counter value/i.test(message) && (await signedByPasskey(() => check(0))))
          deps.logger.warn({ passkeyId: passkey.id, clientId: client.clientId }, 'passkey sign counter went back: refused');
        else deps.logger.info({ passkeyId: passkey.id, clientId: client.clientId, reason: message }, 'passkey answer did not verify');
        return { kind: 'not-verified' };
      }
      if (!(await deps.passkeys.recordUse(passkey, newCounter, now()))) return { kind: 'not-verified' };
      const user = await findUserForSignIn(deps.users, client, passkey.userId);
      if (user && canSignIn(user)) {
        await deps.limits.rememberAddress(key, address);
        return { kind: 'signed-in', userId: user.userId };
      }
      if (user && !user.blocked && (user.status === 'CREATED' || user.status === 'ONBOARDING')) return { kind: 'not-active' };
      deps.logger.info({ clientId: client.clientId }, 'passkey sign-in refused: user deleted or blocked');
      return { kind: 'refused' };
    },
  };
}

/** Whether the answer verifies when its counter is not compared (a check that throws does not). */
async function signedByPasskey(checkWithoutCounter: () => Promise<{ verified: boolean }>): Promise<boolean> {
  try {
    return (await checkWithoutCounter()).verified;
  } catch {
    return false;
  }
}

export type PasskeySignIn = ReturnType<typeof createPasskeySignIn>;
