import type { ActivityRepository } from '../activity/activity.repository.js';
import { DEFAULT_ENTERPRISE_ID } from '../platform/tenancy/enterprise-id.js';
import { ValidationError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import { maskContactsInText, maskEmail, maskPhone } from '../platform/logger/logger.js';
import { REQUEST_NOT_ANSWERED, type DeliveriesRepository } from './deliveries.repository.js';
import type { DeliveryFilter, DeliveryView, ReplayRequest, ReplayResult, ReplaySkip, StillWantedCheck } from './delivery-replay.types.js';
import type { Delivery, DeliveryKind } from './delivery.types.js';
import { replayActivityEntries } from './replay-activity.js';

/** Deliveries one replay request takes at most (by ids or by filter). */
export const REPLAY_MAX = 100;
export const LIST_PAGE_DEFAULT = 50;
export const LIST_PAGE_MAX = 200;

export interface DeliveryReplayDeps {
  deliveries: Pick<DeliveriesRepository, 'listByState' | 'findByIds' | 'reopenFailed'>;
  /** Per kind: is its message still wanted (OTP not used, locked or expired; activation current)? */
  stillWanted: Record<DeliveryKind, StillWantedCheck>;
  /** Queues the delivery's dispatch job again (removing a finished one of the same id). */
  enqueue: (deliveryId: string) => Promise<unknown>;
  activity: Pick<ActivityRepository, 'append'>;
  logger: Logger;
  now?: () => Date;
}

/** A message that carries a code (OTP, activation code) cannot be sent without it; a notice carries none. */
const NEEDS_SECRETS: Record<DeliveryKind, boolean> = { otp: true, login: true, activation: true, notice: false };

/** The row without its code, its address masked as the logs mask it. */
export function toDeliveryView(delivery: Delivery): DeliveryView {
  return {
    id: delivery.id,
    kind: delivery.kind,
    enterpriseId: delivery.enterpriseId ?? DEFAULT_ENTERPRISE_ID,
    refId: delivery.kind === 'activation' || delivery.kind === 'notice' ? maskContactsInText(delivery.refId) : delivery.refId,
    channel: delivery.channel,
    to: delivery.channel === 'EMAIL' ? maskEmail(delivery.to) : maskPhone(delivery.to),
    template: delivery.template,
    state: delivery.state,
    ...(delivery.provider !== undefined ? { provider: delivery.provider } : {}),
    ...(delivery.lastError !== undefined ? { lastError: maskContactsInText(delivery.lastError) } : {}),
    attempts: delivery.attempts,
    replays: delivery.replays ?? 0,
    queuedAt: delivery.queuedAt,
    updatedAt: delivery.updatedAt,
    notAfter: delivery.notAfter,
  };
}

/** Opaque page cursor: the last row's (updatedAt, id), the order's tie-break included. */
export function encodeCursor(delivery: Pick<Delivery, 'updatedAt' | 'id'>): string {
  return Buffer.from(`${delivery.updatedAt.getTime()}.${delivery.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): { updatedAt: Date; id: string } {
  const text = /^[A-Za-z0-9_-]{1,400}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const match = /^([0-9]{1,15})\.([A-Za-z0-9._:@=-]{1,200})$/.exec(text);
  if (!match) throw new ValidationError('[Invalid field cursor]');
  return { updatedAt: new Date(Number(match[1])), id: match[2] as string };
}

/** Why a FAILED row is not replayed, from the row alone (before asking its feature). */
function skipOfRow(delivery: Delivery, now: Date): ReplaySkip | undefined {
  if (delivery.state !== 'FAILED') return { code: 'not-failed', reason: `It is ${delivery.state}, not FAILED.` };
  if (delivery.lastError === REQUEST_NOT_ANSWERED)
    return { code: 'request-not-answered', reason: 'Its request was answered with an error: nobody holds a code to check.' };
  if (delivery.notAfter.getTime() <= now.getTime())
    return { code: 'expired', reason: `It could be sent until ${delivery.notAfter.toISOString()}.` };
  if (NEEDS_SECRETS[delivery.kind] && delivery.secretMacros === undefined)
    return {
      code: 'code-not-kept',
      reason: 'Its code is no longer kept (it was sent once, then reported failed): the user asks for a new one.',
    };
  return undefined;
}

/**
 * Operators' replay of FAILED deliveries. A replay moves each selected row FAILED → QUEUED with a
 * conditional update (on the state and the moment it failed), then queues its dispatch job: two
 * replays of one failure, at once or one after the other, send it once. A row is never replayed
 * when its message is no longer wanted (the OTP was used, locked or expired; the activation
 * ended or was replaced) or was never answered for. A crash between the two steps leaves the row
 * QUEUED: the delivery sweeper queues it. Recorded in the activity of each enterprise it touched.
 */
export function createDeliveryReplay(deps: DeliveryReplayDeps) {
  const now = deps.now ?? (() => new Date());

  async function skipOf(delivery: Delivery, at: Date): Promise<ReplaySkip | undefined> {
    return skipOfRow(delivery, at) ?? (await deps.stillWanted[delivery.kind](delivery, at));
  }

  async function select(request: ReplayRequest): Promise<{ rows: (Delivery | string)[]; more: boolean }> {
    const { selection } = request;
    if ('ids' in selection) {
      const found = new Map((await deps.deliveries.findByIds(selection.ids)).map((d) => [d.id, d]));
      return { rows: selection.ids.map((id) => found.get(id) ?? id), more: false };
    }
    const rows = await deps.deliveries.listByState({ ...selection.filter, limit: REPLAY_MAX + 1 });
    return { rows: rows.slice(0, REPLAY_MAX), more: rows.length > REPLAY_MAX };
  }

  return {
    async list(filter: DeliveryFilter, page: { cursor?: string; limit: number }): Promise<{ deliveries: DeliveryView[]; next?: string }> {
      const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
      const rows = await deps.deliveries.listByState({ ...filter, ...(after ? { after } : {}), limit: page.limit + 1 });
      const shown = rows.slice(0, page.limit);
      const last = shown.at(-1);
      return { deliveries: shown.map(toDeliveryView), ...(rows.length > page.limit && last ? { next: encodeCursor(last) } : {}) };
    },

    async replay(request: ReplayRequest): Promise<ReplayResult> {
      const at = now();
      const { rows, more } = await select(request);
      const result: ReplayResult = { dryRun: request.dryRun, queued: [], skipped: [], more };
      for (const row of rows) {
        if (typeof row === 'string') {
          result.skipped.push({ id: row, skip: { code: 'not-found', reason: 'No such delivery.' } });
          continue;
        }
        const skip = await skipOf(row, at);
        if (skip) {
          result.skipped.push({ ...toDeliveryView(row), skip });
          continue;
        }
        if (request.dryRun) {
          result.queued.push(toDeliveryView(row));
          continue;
        }
        if (!(await deps.deliveries.reopenFailed(row.id, row.updatedAt, at))) {
          result.skipped.push({
            ...toDeliveryView(row),
            skip: { code: 'replayed-meanwhile', reason: 'It changed while this replay ran (another replay took it).' },
          });
          continue;
        }
        try {
          await deps.enqueue(row.id);
        } catch (err) {
          // The row is QUEUED: the delivery sweeper queues it once Redis answers again.
          deps.logger.warn({ deliveryId: row.id, err: (err as Error).message }, 'replay could not enqueue; left for the sweeper');
        }
        result.queued.push(toDeliveryView({ ...row, state: 'QUEUED', updatedAt: at, replays: (row.replays ?? 0) + 1 }));
      }
      if (!request.dryRun) {
        for (const entry of replayActivityEntries(result, rows.length, request.comments)) await deps.activity.append(entry, at);
        deps.logger.info({ queued: result.queued.length, skipped: result.skipped.length }, 'deliveries replayed');
      }
      return result;
    },
  };
}

export type DeliveryReplay = ReturnType<typeof createDeliveryReplay>;
