import type { Logger } from '../platform/logger/logger.js';
import { userEventsSwept } from '../platform/metrics/business-metrics.js';
import type { Notification } from './notification.types.js';
import type { NotificationsRepository, UserEventDue } from './notifications.repository.js';
import type { UserNotificationEvent } from './user-event-reader.js';
import { USER_EVENTS_TTL_SECONDS } from './notification-user-events.js';

/** How long a mark may stand before the sweep appends its event: the API normally clears it within milliseconds. */
export const USER_EVENT_GRACE_MS = 10_000;
/**
 * How long the API gathers the marks of appended events before clearing them in one write: the
 * clear then never competes with the streams reading the event just appended, and a busy process
 * clears many marks per write.
 */
const CLEAR_AFTER_MS = 50;
/** Marks taken at a time; a full batch is followed by another, up to a run's limit. */
const SWEEP_BATCH = 500;
/**
 * How long a sweep holds the marks it took: no other worker's sweep takes them meanwhile, and a
 * mark whose append failed (or whose worker died) is due again once it ends, plus the grace period.
 */
export const USER_EVENT_LEASE_MS = 20_000;
/** After an outage the backlog drains at up to this many batches per run instead of one. */
const BATCHES_PER_SWEEP = 20;

export const createdEvent = (n: Notification): UserNotificationEvent => ({
  type: 'created',
  notification_uuid: n.notificationUuid,
  status: n.status,
  expires_at: n.expiresAt.toISOString(),
});

export const endedEvent = (n: Notification): UserNotificationEvent => ({
  type: 'ended',
  notification_uuid: n.notificationUuid,
  status: n.status,
});

/**
 * The event a marked record still owes its user's streams, judged now: `created` while it is
 * pending and in time, `ended` for a final state given by someone (expiry sends nothing, as it
 * never does), nothing once a `created` event would announce what has already expired, nor an
 * `ended` event older than a stream is kept (an app away that long reloads its list instead).
 */
export function owedEvent(n: Notification, now: Date): UserNotificationEvent | undefined {
  if (n.status === 'ACTIVE') return n.expiresAt.getTime() > now.getTime() ? createdEvent(n) : undefined;
  if (n.status === 'EXPIRED') return undefined;
  const endedAt = n.answeredAt?.getTime() ?? now.getTime();
  return now.getTime() - endedAt > USER_EVENTS_TTL_SECONDS * 1000 ? undefined : endedEvent(n);
}

/**
 * The events of notification changes, sent at least once. Each change is written to MongoDB with
 * its event marked due in the same write (`userEventDueAt`: the record's `createdAt`, or the
 * `answeredAt` of its final state); the API appends the event right after and clears the mark.
 * A process that dies in between, or a Redis that refuses the append, leaves the mark, and the
 * notification worker's sweep appends the event once the mark is older than the grace period. So
 * an event can come twice (appended, then the clear lost), never not at all; apps recognise a
 * repeat by its notification_uuid and type.
 */
export function createUserEventOutbox(deps: {
  repository: Pick<NotificationsRepository, 'clearUserEventsDue' | 'claimUserEventsDue'>;
  /** Appends the event to its user's stream; resolves false or throws when it was not appended. */
  append: (enterpriseId: string, userId: string, event: UserNotificationEvent) => Promise<boolean>;
  logger: Logger;
  graceMs?: number;
}) {
  const graceMs = deps.graceMs ?? USER_EVENT_GRACE_MS;

  let toClear: { notificationUuid: string; dueAt: Date }[] = [];
  let clearing: NodeJS.Timeout | undefined;
  const clearGathered = async (): Promise<void> => {
    clearTimeout(clearing);
    clearing = undefined;
    const marks = toClear;
    toClear = [];
    // Left standing, a mark only makes the worker append its event again (a repeat, never a loss).
    await deps.repository
      .clearUserEventsDue(marks)
      .catch((err: unknown) => deps.logger.warn({ err: (err as Error).message, marks: marks.length }, 'user event marks not cleared'));
  };

  return {
    /** The API's path, right after the change was written; whatever fails is left to the sweep. */
    async send(n: Notification, event: UserNotificationEvent): Promise<void> {
      const dueAt = event.type === 'created' ? n.createdAt : n.answeredAt;
      if (!dueAt) return;
      try {
        if (!(await deps.append(n.enterpriseId, n.userId, event))) return;
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message, type: event.type }, 'user event left for the sweep');
        return;
      }
      toClear.push({ notificationUuid: n.notificationUuid, dueAt });
      clearing ??= setTimeout(() => void clearGathered(), CLEAR_AFTER_MS).unref();
    },

    /** Clears the gathered marks now: a stopping process, after its last request. */
    flush: clearGathered,

    /**
     * The worker's path: the events of marks older than the grace period, each appended by one
     * sweep even when several workers run (see `claimUserEventsDue`); how many were appended and
     * how many failed (those are tried again once their lease ends, behind the marks still waiting).
     */
    async sweep(now = new Date()): Promise<{ appended: number; failed: number }> {
      let appended = 0;
      let failed = 0;
      const cutoff = new Date(now.getTime() - graceMs);
      const appendOwed = async (n: UserEventDue): Promise<'appended' | 'dropped' | 'failed'> => {
        const event = owedEvent(n, now);
        if (!event) return 'dropped';
        try {
          return (await deps.append(n.enterpriseId, n.userId, event)) ? 'appended' : 'failed';
        } catch {
          return 'failed';
        }
      };
      for (let batch = 0; batch < BATCHES_PER_SWEEP; batch += 1) {
        // From the sweep's own clock, so a lease always ends after its cutoff: a run never takes a mark twice.
        const leaseUntil = new Date(now.getTime() + USER_EVENT_LEASE_MS);
        const due: UserEventDue[] = await deps.repository.claimUserEventsDue(cutoff, leaseUntil, SWEEP_BATCH);
        const done: { notificationUuid: string; dueAt: Date }[] = [];
        for (const n of due) {
          const outcome = await appendOwed(n);
          userEventsSwept.inc({ outcome });
          if (outcome === 'failed') failed += 1;
          else {
            if (outcome === 'appended') appended += 1;
            done.push({ notificationUuid: n.notificationUuid, dueAt: n.userEventDueAt });
          }
        }
        await deps.repository.clearUserEventsDue(done);
        // A short batch was the last. Failed marks are leased like the others, so a run never meets
        // the same mark twice and the marks behind failing ones are still reached.
        if (due.length < SWEEP_BATCH) break;
      }
      return { appended, failed };
    },
  };
}

export type UserEventOutbox = ReturnType<typeof createUserEventOutbox>;
