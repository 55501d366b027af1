import type { RedisClient } from '../platform/queues/redis-connection.js';

/** How long registration options stay good: the WebAuthn timeout we ask browsers for, plus a minute. */
export const REGISTRATION_TIMEOUT_MS = 5 * 60 * 1000;
const TTL_SECONDS = REGISTRATION_TIMEOUT_MS / 1000 + 60;

/** Whom a registration challenge was issued to, and the user handle its options carried. */
export interface ChallengeHolder {
  /** `<enterpriseId>:<userId>` of the signed-in user. */
  user: string;
  /** The client whose user token asked for the options. */
  clientId: string;
  userHandle: string;
}

/**
 * Challenges of passkey registrations, in Redis so every API instance sees them. Each is taken
 * once (GETDEL): a registration response is checked against a challenge this service issued to
 * the same user through the same app, and never twice, whether it passed or failed.
 */
export function createRegistrationChallenges(redis: RedisClient, prefix: string) {
  const key = (challenge: string) => `${prefix}:passkey:reg:${challenge}`;
  return {
    async issue(challenge: string, holder: ChallengeHolder): Promise<void> {
      await redis.set(key(challenge), JSON.stringify(holder), 'EX', TTL_SECONDS);
    },

    /** The holder of this challenge, which is then used up; undefined when unknown, expired or used. */
    async take(challenge: string): Promise<ChallengeHolder | undefined> {
      const raw = await redis.getdel(key(challenge));
      return raw === null ? undefined : (JSON.parse(raw) as ChallengeHolder);
    },
  };
}

export type RegistrationChallenges = ReturnType<typeof createRegistrationChallenges>;
