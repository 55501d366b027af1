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

// Both scripts touch only the user's two keys, declared in KEYS as Redis asks of scripts (on a
// Cluster they share the deployment prefix's hash tag, so one slot). KEYS[1]: the user's holders by
// challenge (a hash), KEYS[2]: the user's challenges by time of issue in ms (a sorted set). A
// challenge is good while its time of issue is less than the TTL ago; the keys themselves expire a
// TTL after the last issue.

// ARGV: challenge, holder, TTL in seconds, now in ms, the bound. One script, so parallel calls
// cannot each see room and all add.
const ISSUE = `
local ttl = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - ttl * 1000)) do
  redis.call('HDEL', KEYS[1], gone)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ttl * 1000)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], now, ARGV[1])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[5])
if excess > 0 then
  local dropped = redis.call('ZPOPMIN', KEYS[2], excess)
  for i = 1, #dropped, 2 do redis.call('HDEL', KEYS[1], dropped[i]) end
end
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
return 1`;

// ARGV: challenge, TTL in seconds, now in ms. The holder if the challenge is the user's and still
// good; either way it is gone afterwards.
const TAKE = `
local issued = redis.call('ZSCORE', KEYS[2], ARGV[1])
local holder = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
if not issued or not holder or tonumber(issued) <= tonumber(ARGV[3]) - tonumber(ARGV[2]) * 1000 then return false end
return holder`;

type ChallengeRedis = RedisClient & {
  issuePasskeyRegistration(
    holdersKey: string,
    issuedKey: string,
    challenge: string,
    holder: string,
    ttlSeconds: number,
    now: number,
    max: number,
  ): Promise<number>;
  takePasskeyRegistration(
    holdersKey: string,
    issuedKey: string,
    challenge: string,
    ttlSeconds: number,
    now: number,
  ): Promise<string | null>;
};

/**
 * Challenges of passkey registrations, in Redis so every API instance sees them, kept per user.
 * Each is taken once: a registration response is checked against a challenge this service issued
 * to the same user through the same app, and never twice, whether it passed or failed. A user
 * holds at most MAX_OUTSTANDING_REGISTRATIONS of them; a new one drops the oldest.
 */
export function createRegistrationChallenges(redis: RedisClient, prefix: string) {
  if (!('issuePasskeyRegistration' in redis)) {
    redis.defineCommand('issuePasskeyRegistration', { numberOfKeys: 2, lua: ISSUE });
    redis.defineCommand('takePasskeyRegistration', { numberOfKeys: 2, lua: TAKE });
  }
  const keysOf = (user: string) => [`${prefix}:passkey:reg-holders:${user}`, `${prefix}:passkey:reg-by-user:${user}`] as const;
  return {
    async issue(challenge: string, holder: ChallengeHolder): Promise<void> {
      const [holders, issued] = keysOf(holder.user);
      await (redis as ChallengeRedis).issuePasskeyRegistration(
        holders,
        issued,
        challenge,
        JSON.stringify(holder),
        TTL_SECONDS,
        Date.now(),
        MAX_OUTSTANDING_REGISTRATIONS,
      );
    },

    /**
     * The holder of this challenge among those issued to `user` (`<enterpriseId>:<userId>`), which
     * is then used up; undefined when unknown to that user, expired or used. A challenge issued to
     * another user is not touched.
     */
    async take(challenge: string, user: string): Promise<ChallengeHolder | undefined> {
      const [holders, issued] = keysOf(user);
      const raw = await (redis as ChallengeRedis).takePasskeyRegistration(holders, issued, challenge, TTL_SECONDS, Date.now());
      return raw === null ? undefined : (JSON.parse(raw) as ChallengeHolder);
    },
  };
}

export type RegistrationChallenges = ReturnType<typeof createRegistrationChallenges>;
