import type { Request, Response } from 'express';
import { UnavailableError } from '../../core/platform/errors/app-error.js';
import { createEnterpriseShares } from '../../core/notifications/enterprise-shares.js';
import { isStreamId, type UserNotificationEvent } from '../../core/notifications/user-event-reader.js';
import { isDraining } from '../draining-state.js';
import { authenticateUserToken, userAuthOf, type UserTokenStores } from '../middleware/user-token-auth.middleware.js';
import type { ServiceContext } from '../service-context.js';

/**
 * Open streams of one user on one API process (devices and tabs); past it that user's next one is
 * refused the same way. Without it one user's token could take all of the process's streams, and
 * each of that user's events would then cost a read per stream.
 */
export const MAX_STREAMS_PER_USER = 10;
/**
 * A comment line this often keeps proxies from closing an idle stream; each one also checks the
 * token again (revoked, expired, user blocked: the stream ends).
 */
export const HEARTBEAT_MS = 15_000;
/** How long the client waits before reconnecting after the stream ends (EventSource `retry`). */
const RECONNECT_MS = 3000;

/** A refused stream's Retry-After: the client's reconnect delay (the error edge writes the header). */
const RETRY = { retryAfterSeconds: RECONNECT_MS / 1000 };
const PROCESS_FULL = 'Too many open notification streams, try again later';

const frame = (id: string, event: UserNotificationEvent) => `id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/**
 * `GET /v1/me/notifications/stream`: server-sent events of the signed-in user's notifications:
 * `created` for each new one and `ended` for each final state given by an answer, a dismissal, a
 * cancel or a discard (expiry sends nothing: `created` carries `expires_at`). `Last-Event-ID`
 * resumes after the last event the client saw.
 */
export function notificationStreamHandler(ctx: ServiceContext, userTokens: UserTokenStores) {
  // This process's streams, shared between enterprises (one per handler: one per API process).
  const { streamsPerProcess, streamsEnterpriseSharePercent } = ctx.config.notifications;
  const shares = createEnterpriseShares({ capacity: streamsPerProcess, sharePercent: streamsEnterpriseSharePercent });
  const enterpriseFull = `Too many open notification streams for this enterprise (at most ${streamsEnterpriseSharePercent}% of this server), try again later`;
  return async (req: Request, res: Response): Promise<void> => {
    const { user } = userAuthOf(res);
    if (isDraining(req.app)) throw new UnavailableError(PROCESS_FULL, RETRY);
    // Checked before a place is taken: a refused user must not end another enterprise's stream.
    if (ctx.userEvents.streamsOf(user.enterpriseId, user.userId) >= MAX_STREAMS_PER_USER) {
      throw new UnavailableError(
        `Too many open notification streams for this user (at most ${MAX_STREAMS_PER_USER}), try again later`,
        RETRY,
      );
    }
    // Past the process's streams (NOTIFICATION_STREAMS_PER_PROCESS), or past the enterprise's
    // share of a full process (NOTIFICATION_STREAMS_ENTERPRISE_SHARE_PERCENT): 503 and Retry-After.
    const place = shares.take(user.enterpriseId);
    if (place === 'process-full') throw new UnavailableError(PROCESS_FULL, RETRY);
    if (place === 'enterprise-share') throw new UnavailableError(enterpriseFull, RETRY);
    const lastEventId = req.get('last-event-id');
    let ended = false;
    let ticks = 0;
    const timer: { heartbeat?: NodeJS.Timeout } = {};
    let stop: () => void = () => undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(timer.heartbeat);
      stop();
      place.release();
      res.end();
    };
    // Events that arrive before the answer's head is out wait for it.
    let pending: string[] | undefined = [];
    try {
      stop = await ctx.userEvents.open(user.enterpriseId, user.userId, {
        // An id that is not a stream id (another server's, or garbage) resumes nothing.
        ...(lastEventId !== undefined && isStreamId(lastEventId) ? { lastEventId } : {}),
        send: (id, event) => {
          if (pending) pending.push(frame(id, event));
          else if (!ended) res.write(frame(id, event));
        },
      });
    } catch {
      place.release();
      // Reported by the user events, once per period however many clients retry meanwhile.
      throw new UnavailableError('Notification events are not available, try again later', RETRY);
    }
    // The head goes out only now: a client that has it knows this process is already listening.
    res.status(200).set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // Proxies such as nginx would hold events back in their buffers.
      'X-Accel-Buffering': 'no',
    });
    res.write(`retry: ${RECONNECT_MS}\n\n${pending.join('')}`);
    pending = undefined;
    res.on('close', end);
    // Open now: another enterprise below its share may end it when the process is full (the app reconnects).
    place.lendable(end);
    // Every second: a draining server lets its streams go at once (clients reconnect elsewhere).
    timer.heartbeat = setInterval(() => {
      if (isDraining(req.app)) return end();
      if (++ticks % (HEARTBEAT_MS / 1000) !== 0) return;
      res.write(': keep-alive\n\n');
      authenticateUserToken(userTokens, req.get('authorization'), 'notifications').then(
        (again) => {
          if (again.user.userId !== user.userId || again.user.enterpriseId !== user.enterpriseId) end();
        },
        () => end(),
      );
    }, 1000);
    if (res.destroyed) end();
  };
}
