import type { RedisClient } from '../platform/queues/redis-connection.js';

/** How long registration options stay good: the WebAuthn timeout we ask browsers for, plus a minute. */
export const REGISTRATION_TIMEOUT_MS = 5 * 60 * 1000;
const TTL_SECONDS = REGISTRATION_TIMEOUT_MS / 1000 + 60;

/**
 * Registration options one user may hold at a time; asking for more drops the oldest. As many as
 * the passkeys a user may have, so even a user adding all of them at once is never cut short;
 * without a bound a scripted token could fill Redis, which runs with `noeviction`.
 */
export const MAX_OUTSTANDING_REGISTRATIONS = 20;

/** Whom a registration challenge was issued to, and the user handle its options carried. */
export interface ChallengeHolder {
  /** `<enterpriseId>:<userId>` of the signed-in user. */
  user: string;
  /** The client whose user token asked for the options. */
  clientId: string;
  userHandle: string;
}

// KEYS[1] the new challenge, KEYS[2] the user's challenges (a sorted set by time of issue).
// ARGV: holder, TTL in seconds, now in ms, the bound, the prefix of challenge keys.
// One script, so parallel calls cannot each see room and all add. The dropped challenges' keys are
// built from the prefix (as BullMQ's scripts build job keys): on a Redis Cluster the deployment
// prefix is a hash tag, so they are in the slot of the declared keys.
const ISSUE = `
local ttl = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ttl * 1000)
redis.call('ZADD', KEYS[2], now, string.sub(KEYS[1], string.len(ARGV[5]) + 1))
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if excess > 0 then
  for _, challenge in ipairs(redis.call('ZPOPMIN', KEYS[2], excess)) do
    if _ % 2 == 1 then redis.call('DEL', ARGV[5] .. challenge) end
  end
end
redis.call('EXPIRE', KEYS[2], ttl)
return 1`;

type ChallengeRedis = RedisClient & {
  issuePasskeyRegistration(
    challengeKey: string,
    userKey: string,
    holder: string,
    ttlSeconds: number,
    now: number,
    max: number,
    challengePrefix: string,
  ): Promise<number>;
};

/**
 * Challenges of passkey registrations, in Redis so every API instance sees them. Each is taken
 * once (GETDEL): a registration response is checked against a challenge this service issued to
 * the same user through the same app, and never twice, whether it passed or failed. A user holds
 * at most MAX_OUTSTANDING_REGISTRATIONS of them; a new one drops the oldest.
 */
export function createRegistrationChallenges(redis: RedisClient, prefix: string) {
  if (!('issuePasskeyRegistration' in redis)) redis.defineCommand('issuePasskeyRegistration', { numberOfKeys: 2, lua: ISSUE });
  const challengePrefix = `${prefix}:passkey:reg:`;
  const key = (challenge: string) => `${challengePrefix}${challenge}`;
  const userKey = (user: string) => `${prefix}:passkey:reg-by-user:${user}`;
  return {
    async issue(challenge: string, holder: ChallengeHolder): Promise<void> {
      await (redis as ChallengeRedis).issuePasskeyRegistration(
        key(challenge),
        userKey(holder.user),
        JSON.stringify(holder),
        TTL_SECONDS,
        Date.now(),
        MAX_OUTSTANDING_REGISTRATIONS,
        challengePrefix,
      );
    },

    /** The holder of this challenge, which is then used up; undefined when unknown, expired or used. */
    async take(challenge: string): Promise<ChallengeHolder | undefined> {
      const raw = await redis.getdel(key(challenge));
      if (raw === null) return undefined;
      const holder = JSON.parse(raw) as ChallengeHolder;
      // Frees its place in the holder's bound. Left behind (a crash in between), the entry only
      // takes a place until it is dropped as the oldest or expires.
      await redis.zrem(userKey(holder.user), challenge);
      return holder;
    },
  };
}

export type RegistrationChallenges = ReturnType<typeof createRegistrationChallenges>;
