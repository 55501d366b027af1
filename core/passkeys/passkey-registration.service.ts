import { randomBytes, randomUUID } from 'node:crypto';
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { PasskeyConfig } from '../platform/config/config.js';
import { userKey } from '../platform/tenancy/enterprise-id.js';
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors/app-error.js';
import { owedActivityEntry } from '../users/owed-activity.js';
import { oweAhead, settleMadeAhead, withdrawAhead, type OwedAheadStores } from '../users/owed-activity-ahead.js';
import type { User } from '../users/user.types.js';
import { passkeyAdded } from './passkey-activity.js';
import { challengeOf } from './client-data.js';
import type { PasskeyChangeNotice } from './passkey-change-notice.js';
import { passkeyName } from './passkey-name.js';
import { DuplicatePasskeyError, type Passkey, type PasskeysRepository } from './passkeys.repository.js';
import { REGISTRATION_TIMEOUT_MS, type RegistrationChallenges } from './registration-challenges.js';
import { loadWebAuthn } from './webauthn-library.js';

/** Passkeys one user may hold: enough for every device they own, bounded against abuse. */
export const MAX_PASSKEYS_PER_USER = 20;

export interface PasskeyRegistrationDeps extends OwedAheadStores {
  passkeys: PasskeysRepository;
  challenges: RegistrationChallenges;
  /** Tells the user a passkey was added (after it is stored). */
  changeNotice: Pick<PasskeyChangeNotice, 'send'>;
  config: PasskeyConfig;
  now?: () => Date;
}

export interface PasskeyRegistration {
  name?: string;
  credential: RegistrationResponseJSON;
}

/**
 * Registering a passkey for a signed-in user: options (a fresh challenge, held for this user and
 * app), then the authenticator's answer, checked by @simplewebauthn/server against that challenge,
 * the relying party id and the allowed origins, with user verification required. Only
 * discoverable credentials are asked for, so the sign-in page can offer them without a user id.
 * The `user.passkey-added` entry is owed on the user before the passkey is stored
 * (passkey-activity.ts): the answer is 201 once it is, also when the record cannot be written then.
 */
export function createPasskeyRegistration(deps: PasskeyRegistrationDeps) {
  const now = deps.now ?? (() => new Date());

  return {
    async options(user: User, clientId: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const { server, isoBase64URL } = await loadWebAuthn();
      const existing = await deps.passkeys.list(user);
      // One handle per user, so re-registering on the same authenticator replaces its passkey
      // there; random, so it says nothing about the user.
      const userHandle = existing[0]?.userHandle ?? isoBase64URL.fromBuffer(randomBytes(32));
      const displayName = `${user.firstName} ${user.lastName}`.trim() || user.userId;
      const options = await server.generateRegistrationOptions({
        rpName: deps.config.rpId,
        rpID: deps.config.rpId,
        userName: user.userId,
        userID: isoBase64URL.toBuffer(userHandle),
        userDisplayName: displayName,
        timeout: REGISTRATION_TIMEOUT_MS,
        attestationType: 'none',
        excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
      await deps.challenges.issue(options.challenge, { user: userKey(user), clientId, userHandle });
      return options;
    },

    async register(user: User, clientId: string, request: PasskeyRegistration): Promise<Passkey> {
      const { server, isoBase64URL } = await loadWebAuthn();
      // Checked before the options are taken, so a refused name does not use them up.
      const name = passkeyName(request.name);
      const challenge = await challengeOf(request.credential.response.clientDataJSON);
      const holder = challenge === undefined ? undefined : await deps.challenges.take(challenge, userKey(user));
      if (!holder || holder.user !== userKey(user) || holder.clientId !== clientId)
        throw new ValidationError('Unknown, expired or used registration options: ask for new ones');
      let verified;
      try {
        verified = await server.verifyRegistrationResponse({
          response: request.credential,
          expectedChallenge: challenge as string,
          expectedOrigin: [...deps.config.origins],
          expectedRPID: deps.config.rpId,
          requireUserVerification: true,
        });
      } catch (err) {
        throw new ValidationError(`Passkey not accepted: ${(err as Error).message}`);
      }
      if (!verified.verified) throw new ValidationError('Passkey not accepted');
      const info = verified.registrationInfo;
      const tooMany = () => new ValidationError(`A user may have at most ${MAX_PASSKEYS_PER_USER} passkeys: remove one first`);
      if ((await deps.passkeys.count(user)) >= MAX_PASSKEYS_PER_USER) throw tooMany();
      const ref = { enterpriseId: user.enterpriseId, userId: user.userId };
      const at = now();
      const id = randomUUID();
      const owed = owedActivityEntry('user.passkey-added', { type: 'user' }, at, `passkey ${id} (${name})`, {
        clientId,
        ahead: passkeyAdded(id),
      });
      if (!(await oweAhead(deps, ref, owed))) throw new NotFoundError('User not found');
      let passkey: Passkey;
      try {
        passkey = await deps.passkeys.add(
          {
            enterpriseId: user.enterpriseId,
            userId: user.userId,
            credentialId: info.credential.id,
            publicKey: isoBase64URL.fromBuffer(info.credential.publicKey),
            counter: info.credential.counter,
            userHandle: holder.userHandle,
            transports: info.credential.transports ?? request.credential.response.transports ?? [],
            name,
            aaguid: info.aaguid,
            deviceType: info.credentialDeviceType,
            backedUp: info.credentialBackedUp,
          },
          at,
          id,
        );
      } catch (err) {
        if (err instanceof DuplicatePasskeyError) {
          await withdrawAhead(deps, ref, owed);
          throw new ConflictError('This passkey is already registered');
        }
        throw err; // stored or not, the sweep's check tells
      }
      // Counted again after the write (no transactions): registrations running at once all passed
      // the count above; each past the cap removes its own passkey, so the cap holds even when
      // they all lose. Nothing is recorded or told for a passkey removed here.
      if ((await deps.passkeys.count(user)) > MAX_PASSKEYS_PER_USER) {
        await deps.passkeys.remove(user, passkey.id);
        await withdrawAhead(deps, ref, owed);
        throw tooMany();
      }
      await settleMadeAhead(deps, ref, owed);
      await deps.changeNotice.send('added', user, passkey, passkey.createdAt);
      return passkey;
    },
  };
}

export type PasskeyRegistrationService = ReturnType<typeof createPasskeyRegistration>;
