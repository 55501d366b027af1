import { randomUUID } from 'node:crypto';
import { createGroupCommit, STORE_BATCHING, type ItemOutcome } from '../platform/batching/group-commit.js';
import type { Logger } from '../platform/logger/logger.js';
import { canSignIn, isReachable, isUserBlocked, type UserFinder } from '../users/user-reachability.js';
import type { User } from '../users/user.types.js';
import type { ClientRef, UserRef } from '../platform/tenancy/enterprise-id.js';
import { isHeldBy, type NotificationHolder } from './notification-holder.js';
import { AppError, ValidationError } from '../platform/errors/app-error.js';
import {
  invalidArgument,
  notificationEnded,
  notificationNotFound,
  refusalError,
  userBlocked,
  userNotFound,
} from './notification-errors.js';
import { verifyDeviceSignature } from './notification-signature.js';
import { asSeenAt, effectiveStatus, refusalOf } from './notification-states.js';
import {
  FINAL_STATUSES,
  type FinalStatus,
  type Notification,
  type NotificationAction,
  type NotificationBody,
} from './notification.types.js';
import type { NotificationsRepository } from './notifications.repository.js';
import { checkCallbackUrl, type CallbackAddressPolicy } from './callback-address-policy.js';
import { generateMatchingNumber, matchesNumber, needsNumber, triesLeftAfter } from './number-match.js';

export interface CreateNotificationInput {
  userId: string;
  body: NotificationBody[];
  actions: NotificationAction[];
  ds_required?: boolean;
  expiresIn?: number;
  callbackUrl?: string;
  numberMatch?: boolean;
}

export interface AnswerInput {
  response: string;
  signature?: string;
  number?: string;
}

export interface ListOptions {
  /** 0 means all. */
  recordCount: number;
  /** From 1. */
  startIndex: number;
  /** The client library's enterpriseID filter: another enterprise than the user's gives nothing. */
  enterpriseFilter?: string;
  startDate?: Date;
  endDate?: Date;
}

export interface HistoryOptions extends ListOptions {
  notificationStatus?: FinalStatus;
  actionPerformed?: string;
  keywordSearch?: string;
  deviceId?: string;
}

export interface NotificationsDeps {
  repository: NotificationsRepository;
  users: UserFinder;
  /** Queues the delayed expiry job; failures are tolerated (the sweep expires it anyway). */
  enqueueExpiry: (notificationUuid: string, expiresAt: Date) => Promise<void>;
  /** Queues the callback; failures are tolerated (the sweep re-queues WAITING callbacks). */
  enqueueCallback: (notificationUuid: string) => Promise<void>;
  /**
   * The sweep's: queues the callback again when its job ended without marking it, true when it
   * did (a job still waiting or running is left alone). Only the notification worker sweeps.
   */
  requeueCallback?: (notificationUuid: string) => Promise<boolean>;
  /**
   * Queues the Web Push of a new notification (its user's browsers hear that something waits).
   * Failures are tolerated: a push only hastens what the app's stream and polling also show.
   */
  enqueuePush?: (notificationUuid: string) => Promise<void>;
  logger: Logger;
  /** Which addresses a callbackUrl may name (checked again when each callback is sent). */
  callbackPolicy: CallbackAddressPolicy;
  /** Told once a new notification is stored and still wanted (its user's open streams hear of it). */
  onCreated?: (n: Notification) => void;
  now?: () => Date;
}

export const DEFAULT_EXPIRES_IN_SECONDS = 300;

/** The client a notification belongs to: only it reads and cancels it. */
export type NotificationOwner = ClientRef;

const NUMBER_MISSING = 'is required for this answer; type the two-digit number shown where the request was made';

/** An empty list, in the form lists are read in. */
async function* nothing(): AsyncIterable<Notification> {}

/** A wrong matching number, in words that tell the person what to do next. */
function wrongNumber(triesLeft: number): ValidationError {
  const rule =
    triesLeft > 0
      ? `does not match the number shown where the request was made; check it and type it again (${triesLeft} ${triesLeft === 1 ? 'try' : 'tries'} left)`
      : 'does not match, and no tries are left; the request is stopped (TAMPERED): if you made it, start it again';
  return new ValidationError(`Invalid field number: ${rule}`, { extra: { triesLeft } });
}

export function createNotificationsService(deps: NotificationsDeps) {
  const { repository } = deps;
  const now = deps.now ?? (() => new Date());
  const log = deps.logger.child({ component: 'notifications' });

  async function queueCallbackOf(notificationUuid: string): Promise<void> {
    await deps
      .enqueueCallback(notificationUuid)
      .catch((err: unknown) => log.warn({ err, notificationUuid }, 'callback not queued; the sweep will queue it'));
  }
  async function queueCallback(n: Pick<Notification, 'notificationUuid' | 'callbackUrl'>): Promise<void> {
    if (n.callbackUrl) await queueCallbackOf(n.notificationUuid);
  }

  /** Ends it in `to` (one conditional write), or throws why not. */
  async function end(
    uuid: string,
    holder: NotificationHolder,
    to: FinalStatus,
    fields: Parameters<NotificationsRepository['end']>[4] = {},
  ): Promise<Notification> {
    const at = now();
    const ended = await repository.end(uuid, holder, to, at, fields);
    if (ended) {
      await queueCallback(ended);
      return ended;
    }
    throw await refusalFor(uuid, holder, at);
  }

  async function refusalFor(uuid: string, holder: NotificationHolder, at: Date) {
    const current = await repository.find(uuid);
    const mine = current && isHeldBy(current, holder) ? current : null;
    const refusal = refusalOf(mine, at);
    // Past expiresAt and still ACTIVE: the worker is late or down; write what the clock says
    // (one record by its id: the request path does not join the worker's batches).
    if (refusal.kind === 'expired' && mine?.status === 'ACTIVE') {
      const expired = await repository.end(uuid, 'system', 'EXPIRED', now());
      if (expired) await queueCallback(expired);
    }
    return refusalError(refusal);
  }

  type ExpireOutcome = { outcome: 'expired' | 'ended' | 'missing' } | { outcome: 'not-due'; inMs: number };

  // Expiry jobs running at once share one update and one read (group commit): at a steady
  // thousand expiries a second that halves the store work per expiry.
  const expiryBatches = createGroupCommit<string, ExpireOutcome>(async (uuids) => {
    const at = now();
    const rows = await repository.expireMany([...new Set(uuids)], at);
    const byId = new Map(rows.map((r) => [r.notificationUuid, r]));
    const outcomes: ItemOutcome<ExpireOutcome>[] = [];
    for (const uuid of uuids) {
      const row = byId.get(uuid);
      if (!row) outcomes.push({ ok: true, value: { outcome: 'missing' } });
      else if (row.status === 'ACTIVE')
        outcomes.push({ ok: true, value: { outcome: 'not-due', inMs: Math.max(row.expiresAt.getTime() - at.getTime(), 1) } });
      else if (row.status === 'EXPIRED') {
        // Also when it was EXPIRED already: the callback job id makes a second enqueue a no-op.
        await queueCallback(row);
        outcomes.push({ ok: true, value: { outcome: 'expired' } });
      } else outcomes.push({ ok: true, value: { outcome: 'ended' } });
    }
    return outcomes;
  }, STORE_BATCHING);

  /** EXPIRED when due; 'not-due' with the milliseconds left, 'ended' when in another final state. */
  function expire(uuid: string): Promise<ExpireOutcome> {
    return expiryBatches.submit(uuid);
  }

  /**
   * The answering user as their answer is about to be written. Their token was checked when the
   * request arrived, but a block or a delete may have been stored since: a blocked user is
   * refused as the token check refuses them (user_blocked), any other user who can no longer
   * sign in as not found, as every unreachable user is.
   */
  async function answeringUser(user: UserRef): Promise<User> {
    const found = await deps.users.findUser(user);
    if (found && isUserBlocked(found)) throw userBlocked();
    if (!found || !canSignIn(found)) throw userNotFound();
    return found;
  }

  async function userNotification(enterpriseId: string, userId: string, uuid: string): Promise<Notification> {
    const n = await repository.find(uuid);
    if (!n || n.enterpriseId !== enterpriseId || n.userId !== userId) throw notificationNotFound();
    return n;
  }

  function listWindow(options: ListOptions) {
    return {
      ...(options.startDate ? { createdFrom: options.startDate } : {}),
      ...(options.endDate ? { createdTo: options.endDate } : {}),
      skip: options.startIndex - 1,
      limit: options.recordCount,
    };
  }

  /** The rules on the body that its schema cannot say (422), before any budget is taken or anything read. */
  function checkRequest(input: CreateNotificationInput): void {
    const actions = input.actions.map((a) => a.action);
    if (new Set(actions).size !== actions.length) throw invalidArgument('actions', 'action values must be distinct');
    if (input.callbackUrl !== undefined) {
      const check = checkCallbackUrl(input.callbackUrl, deps.callbackPolicy);
      if (!check.ok) throw invalidArgument('callbackUrl', check.reason);
    }
  }

  return {
    checkRequest,

    async create(
      client: { clientId: string; enterpriseId: string },
      input: CreateNotificationInput,
      /** `notificationUuid`: given by an Idempotency-Key claim, so a retry finds the notification its first request created. */
      options: { notificationUuid?: string } = {},
    ): Promise<{ notificationUuid: string; number?: string }> {
      checkRequest(input);
      const user = await deps.users.findUser({ enterpriseId: client.enterpriseId, userId: input.userId });
      if (!isReachable(user)) throw userNotFound();
      const dsRequired = input.ds_required === true;
      if (dsRequired && !user.device) throw invalidArgument('ds_required', 'the user has no device key registered at activation');

      const createdAt = now();
      const n: Notification = {
        notificationUuid: options.notificationUuid ?? randomUUID(),
        enterpriseId: client.enterpriseId,
        clientId: client.clientId,
        userId: input.userId,
        body: input.body.map(({ lng, subject, message }) => ({ lng, subject, message })),
        actions: input.actions.map(({ label, action, authlevel, requiresNumber }) => ({
          label,
          action,
          authlevel,
          ...(requiresNumber !== undefined ? { requiresNumber } : {}),
        })),
        dsRequired,
        ...(input.numberMatch === true ? { number: generateMatchingNumber() } : {}),
        numberAttempts: 0,
        ...(input.callbackUrl !== undefined ? { callbackUrl: input.callbackUrl, callbackState: 'WAITING' as const } : {}),
        status: 'ACTIVE',
        signingStatus: 'NA',
        isDsVerified: false,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + (input.expiresIn ?? DEFAULT_EXPIRES_IN_SECONDS) * 1000),
      };
      await repository.insert(n);
      // Stored first: from here the sweep guarantees expiry even if this enqueue fails.
      await deps
        .enqueueExpiry(n.notificationUuid, n.expiresAt)
        .catch((err: unknown) =>
          log.warn({ err, notificationUuid: n.notificationUuid }, 'expiry job not queued; the sweep will expire it'),
        );
      // A user deleted or blocked while this was being written would miss the discard: check again.
      const after = await deps.users.findUser({ enterpriseId: client.enterpriseId, userId: input.userId });
      if (!isReachable(after)) {
        await repository.end(n.notificationUuid, 'system', 'DISCARD', now());
        throw userNotFound();
      }
      deps.onCreated?.(n);
      await deps
        .enqueuePush?.(n.notificationUuid)
        .catch((err: unknown) =>
          log.warn({ err, notificationUuid: n.notificationUuid }, 'push not queued; the app finds it on its next look'),
        );
      return { notificationUuid: n.notificationUuid, ...(n.number !== undefined ? { number: n.number } : {}) };
    },

    /**
     * The record as its client sees it (an ACTIVE one past expiresAt reads EXPIRED). Another
     * client's, even of the same enterprise, is not found: a notification is its creator's business.
     */
    async read(owner: NotificationOwner, uuid: string): Promise<Notification> {
      const n = await repository.find(uuid);
      if (!n || n.enterpriseId !== owner.enterpriseId || n.clientId !== owner.clientId) throw notificationNotFound();
      return asSeenAt(n, now());
    },

    /** CANCELLED by its client; an expired notification is one more state it is in (409, not 410). */
    async cancel(owner: NotificationOwner, uuid: string): Promise<Notification> {
      try {
        return await end(uuid, { client: owner }, 'CANCELLED');
      } catch (err) {
        if (err instanceof AppError && err.code === 'NOTIFICATION_EXPIRED') throw notificationEnded('EXPIRED');
        throw err;
      }
    },

    /** The user's pending list, read as it is consumed (see NotificationsRepository.list). */
    async listActive(enterpriseId: string, userId: string, options: ListOptions): Promise<AsyncIterable<Notification>> {
      if (options.enterpriseFilter !== undefined && options.enterpriseFilter !== enterpriseId) return nothing();
      return repository.list({ enterpriseId, userId, statuses: ['ACTIVE'], expiresAfter: now(), ...listWindow(options) });
    },

    /** The user's ended notifications, read as they are consumed (see NotificationsRepository.list). */
    async history(enterpriseId: string, userId: string, options: HistoryOptions): Promise<AsyncIterable<Notification>> {
      if (options.enterpriseFilter !== undefined && options.enterpriseFilter !== enterpriseId) return nothing();
      return repository.list({
        enterpriseId,
        userId,
        statuses: options.notificationStatus ? [options.notificationStatus] : [...FINAL_STATUSES],
        ...(options.actionPerformed !== undefined ? { action: options.actionPerformed } : {}),
        ...(options.deviceId !== undefined ? { deviceId: options.deviceId } : {}),
        ...(options.keywordSearch !== undefined ? { keyword: options.keywordSearch } : {}),
        ...listWindow(options),
      });
    },

    /**
     * The user's answer. Refusals that change nothing come first (unknown action, missing
     * signature or number), then the user is checked again (blocked or deleted since the token
     * check: refused, nothing written); a wrong number counts an attempt; a bad signature ends it
     * TAMPERED; otherwise one conditional write decides between this answer and anything racing
     * it, a block's or delete's discard included.
     */
    async answer(
      enterpriseId: string,
      userId: string,
      uuid: string,
      input: AnswerInput,
    ): Promise<{ notificationUuid: string; isDsVerified: boolean }> {
      const user: UserRef = { enterpriseId, userId };
      const holder: NotificationHolder = { user };
      const n = await userNotification(enterpriseId, userId, uuid);
      const at = now();
      if (n.status !== 'ACTIVE' || effectiveStatus(n, at) !== 'ACTIVE') throw await refusalFor(uuid, holder, at);
      if (!n.actions.some((a) => a.action === input.response))
        throw invalidArgument('response', "is not one of the notification's actions");
      if (n.dsRequired && input.signature === undefined) throw invalidArgument('signature', 'is required for this notification');
      const found = await answeringUser(user);
      // Only answers that need the number (approving, by default) check it: saying no never does.
      if (n.number !== undefined && needsNumber(n.actions, input.response)) {
        if (input.number === undefined) throw invalidArgument('number', NUMBER_MISSING);
        if (!matchesNumber(n.number, input.number)) {
          const counted = await repository.countWrongNumber(uuid, user, at);
          if (counted) throw wrongNumber(triesLeftAfter(counted.numberAttempts));
          const tampered = await repository.endOnLastWrongNumber(uuid, user, at, found.device?.deviceId);
          if (tampered) {
            await queueCallback(tampered);
            throw wrongNumber(0);
          }
          throw await refusalFor(uuid, holder, at);
        }
      }
      if (n.dsRequired) {
        const verified = found.device !== undefined && verifyDeviceSignature(found.device, uuid, input.response, input.signature ?? '');
        if (!verified) {
          await end(uuid, holder, 'TAMPERED', {
            signingStatus: 'Failed',
            isDsVerified: false,
            ...(found.device ? { deviceId: found.device.deviceId } : {}),
          });
          throw invalidArgument('signature', 'does not verify against the registered device key; the notification is TAMPERED');
        }
      }
      const answered = await end(uuid, holder, 'UPDATED', {
        action: input.response,
        signingStatus: n.dsRequired ? 'Verified' : 'NA',
        isDsVerified: n.dsRequired,
        ...(found.device ? { deviceId: found.device.deviceId } : {}),
      }).catch(async (err: unknown) => {
        // Only a block's or a delete's discard ends a notification DISCARD. One that ran after the
        // check above won the write: the answer is refused as that user now is.
        if (err instanceof AppError && err.extra.notificationStatus === 'DISCARD') await answeringUser(user);
        throw err;
      });
      return { notificationUuid: answered.notificationUuid, isDsVerified: answered.isDsVerified };
    },

    async dismiss(enterpriseId: string, userId: string, uuid: string): Promise<Notification> {
      const holder: NotificationHolder = { user: { enterpriseId, userId } };
      await userNotification(enterpriseId, userId, uuid);
      return end(uuid, holder, 'DISMISSED');
    },

    expire,

    /**
     * DISCARD for every pending notification of the user (deleted or blocked). Safe to repeat:
     * call it again after a crash and it finishes the job.
     */
    async discardPendingNotifications(ref: UserRef): Promise<number> {
      const at = now();
      const pending = await repository.findPendingOfUser(ref, at);
      const changed = await repository.endMany(
        pending.map((p) => p.notificationUuid),
        'DISCARD',
        at,
      );
      for (const p of pending) await queueCallback(p);
      return changed;
    },

    /**
     * The sweep: everything past expiresAt still ACTIVE becomes EXPIRED (those with a callback
     * in batches, so their callbacks are queued; the rest in one update), and callbacks of ended
     * notifications still WAITING after `callbackGraceMs` are queued again.
     */
    async sweep(options: { batchSize: number; callbackGraceMs: number }): Promise<{ expired: number; callbacksRequeued: number }> {
      let expired = 0;
      const at = now();
      const waiting = await repository.findWaitingCallbacks();
      const due = waiting.filter((w) => w.status === 'ACTIVE' && w.expiresAt.getTime() <= at.getTime()).map((w) => w.notificationUuid);
      for (let from = 0; from < due.length; from += options.batchSize) {
        const batch = due.slice(from, from + options.batchSize);
        expired += await repository.endMany(batch, 'EXPIRED', at);
        for (const uuid of batch) await queueCallbackOf(uuid);
      }
      expired += await repository.expireDueWithoutCallback(now());
      const graceEnd = at.getTime() - options.callbackGraceMs;
      const unsent = waiting
        .filter((w) => w.status !== 'ACTIVE' && w.answeredAt !== undefined && w.answeredAt.getTime() <= graceEnd)
        .slice(0, options.batchSize);
      // Its job was never queued, or ended without marking the callback: an add alone would be a
      // no-op while that ended job is kept, and the callback would stay WAITING for good.
      const requeue = deps.requeueCallback ?? (async (uuid: string) => (await deps.enqueueCallback(uuid), true));
      let callbacksRequeued = 0;
      for (const w of unsent) {
        const queued = await requeue(w.notificationUuid).catch((err: unknown) => {
          log.warn({ err, notificationUuid: w.notificationUuid }, 'callback not queued again; the next sweep tries again');
          return false;
        });
        if (queued) callbacksRequeued += 1;
      }
      return { expired, callbacksRequeued };
    },

    /** Deletes notifications ended more than `retentionDays` ago. */
    purgeEnded(retentionDays: number): Promise<number> {
      return repository.purgeEndedBefore(new Date(now().getTime() - retentionDays * 86_400_000));
    },
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;
