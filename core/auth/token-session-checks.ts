import type { OidcRecordsRepository } from './oidc-records.repository.js';
import { RecheckedCache } from '../platform/rechecked-cache.js';

/** The fields of a stored user access token that bind it to the browser session it was issued in. */
export interface SessionBoundToken {
  expiresWithSession?: unknown;
  sessionUid?: unknown;
  accountId?: unknown;
  clientId?: unknown;
  grantId?: unknown;
}

/** What of a browser session decides whether the tokens bound to it still work. */
interface SessionSeen {
  accountId: unknown;
  /** The grant the session holds for each app (client id to grant id). */
  grantIdOf: Map<string, unknown>;
  /** When the session ends by its lifetime (epoch ms); it never ends sooner without being written again. */
  endsAtMs: number;
}

function seenOf(payload: Record<string, unknown> | undefined): SessionSeen | undefined {
  if (!payload) return undefined;
  const grantIdOf = new Map<string, unknown>();
  const authorizations = payload.authorizations;
  if (authorizations && typeof authorizations === 'object') {
    for (const [clientId, authorization] of Object.entries(authorizations as Record<string, unknown>)) {
      grantIdOf.set(clientId, (authorization as { grantId?: unknown } | null)?.grantId);
    }
  }
  const exp = payload.exp;
  return { accountId: payload.accountId, grantIdOf, endsAtMs: typeof exp === 'number' ? exp * 1000 : Number.POSITIVE_INFINITY };
}

/**
 * Whether the browser session a user token is bound to still holds it, as the authorization
 * server decides for its own introspection and userinfo: a token issued without offline_access
 * (`expiresWithSession`) works only while the session it was issued in exists, is the same
 * account's, and holds the token's grant for its app. Tokens not bound to a session (offline_access,
 * and those refreshed from it) are not looked up at all.
 *
 * One session serves every app a user signed in to, so answers are kept per session, read from
 * the store at most once per session per `recheckMs`. A session seen alive is never trusted past
 * the end of its lifetime it was seen with (its stored `exp`): that end only moves later (a new
 * sign-in), so a session ending by time ends its tokens at that very second in every process; a
 * sign-in of another account in the same browser takes effect within `recheckMs`. Bounded: the
 * oldest entries go first.
 */
export class TokenSessionChecks {
  /** Per session uid; undefined: no such session (signed out, or ended and dropped by the store). */
  private readonly sessions: RecheckedCache<string, SessionSeen | undefined>;

  constructor(store: Pick<OidcRecordsRepository, 'findOidcRecord'>, recheckMs: number, maxEntries = 10000) {
    this.sessions = new RecheckedCache({
      load: (uid: string) => store.findOidcRecord('Session', { uid }).then(seenOf),
      recheckMs,
      maxEntries,
    });
  }

  holdsToken(token: SessionBoundToken, now = Date.now()): boolean | Promise<boolean> {
    if (token.expiresWithSession !== true) return true;
    if (typeof token.sessionUid !== 'string' || typeof token.clientId !== 'string') return false;
    const seen = this.sessions.get(token.sessionUid, now);
    // The session's end is checked against `now` on every call, remembered answer or not.
    const holds = (session: SessionSeen | undefined) =>
      session !== undefined &&
      now < session.endsAtMs &&
      session.accountId === token.accountId &&
      session.grantIdOf.get(token.clientId as string) === token.grantId;
    return seen instanceof Promise ? seen.then(holds) : holds(seen);
  }
}

/**
 * The process's session checks, built once by its composition root and shared by every user
 * token check, so one read of a session serves every app signed in through it.
 */
export function createTokenSessionChecks(store: Pick<OidcRecordsRepository, 'findOidcRecord'>, recheckMs: number): TokenSessionChecks {
  return new TokenSessionChecks(store, recheckMs);
}
