import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import {
  CANCELLED_BEFORE_SENDING,
  DELIVERY_TRANSITIONS,
  EXPIRED_BEFORE_SENDING,
  REQUEST_NOT_ANSWERED,
  rowAfterSend,
} from '../../core/deliveries/delivery-states.js';
import type { Delivery, DeliveryState } from '../../core/deliveries/delivery.types.js';
import { startTestService, type TestService } from '../support/test-service.js';

/** One row in each situation a recorded send, a receipt or a failure can meet. */
const situations: { name: string; state: DeliveryState; lastError?: string }[] = [
  { name: 'queued', state: 'QUEUED' },
  { name: 'queued-after-a-transient-error', state: 'QUEUED', lastError: 'Twilio answered 500' },
  { name: 'sent', state: 'SENT' },
  { name: 'delivered', state: 'DELIVERED' },
  { name: 'expired-unsent', state: 'FAILED', lastError: EXPIRED_BEFORE_SENDING },
  { name: 'cancelled-unsent', state: 'FAILED', lastError: CANCELLED_BEFORE_SENDING },
  { name: 'request-not-answered', state: 'FAILED', lastError: REQUEST_NOT_ANSWERED },
  { name: 'refused', state: 'FAILED', lastError: 'invalid number' },
];

describe('delivery states: the MongoDB filters and the rules in hand say the same', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('deliverystates');
  });
  afterAll(async () => {
    await service.close();
  });

  async function insertSituations(label: string): Promise<Delivery[]> {
    const at = new Date('2026-11-25T09:00:00.000Z');
    const rows: Delivery[] = situations.map(({ name, state, lastError }) => ({
      id: `${label}-${name}`,
      kind: 'otp',
      refId: label,
      channel: 'SMS',
      to: '+15550001111',
      template: 'otp_sms',
      macros: {},
      secretMacros: 'sealed',
      state,
      ...(lastError ? { lastError } : {}),
      ...(state === 'SENT' || state === 'DELIVERED' ? { providerMessageId: `SM-${label}-${name}` } : {}),
      attempts: 1,
      notAfter: new Date(at.getTime() + 3600_000),
      queuedAt: at,
      updatedAt: at,
    }));
    await createDeliveriesRepository(service.ctx.mongo).insertMany(rows);
    return rows;
  }

  test('when a send is recorded for rows in every state, then each row ends as rowAfterSend predicts', async () => {
    const deliveries = createDeliveriesRepository(service.ctx.mongo);
    const rows = await insertSituations('send');
    const sentAt = new Date('2026-11-25T09:00:05.000Z');
    const outcomeOf = (row: Delivery) => ({ deliveryId: row.id, providerMessageId: `SM-new-${row.id}`, attempts: 2, sentAt });
    await deliveries.markSentMany(rows.map(outcomeOf));
    const stored = new Map((await deliveries.findByRef('send')).map((row) => [row.id, row]));
    for (const row of rows) {
      const predicted = rowAfterSend(row, outcomeOf(row));
      expect({ id: row.id, ...pick(stored.get(row.id)) }).toEqual({ id: row.id, ...pick(predicted) });
    }
    // What the diagram promises: waiting and ended-unsent rows take the send, nothing else does.
    expect(rows.filter((row) => stored.get(row.id)?.state === 'SENT' && row.state !== 'SENT').map((row) => row.id)).toEqual([
      'send-queued',
      'send-queued-after-a-transient-error',
      'send-expired-unsent',
      'send-cancelled-unsent',
    ]);
  });

  test('when a failure, a receipt and a replay meet rows in every state, then only the edges of the diagram are taken', async () => {
    const deliveries = createDeliveriesRepository(service.ctx.mongo);
    const rows = await insertSituations('edges');
    const now = new Date('2026-11-25T09:00:06.000Z');
    // A failure applies to waiting rows only; a receipt to sent ones; a replay to a failure as it was read.
    for (const row of rows) await deliveries.markFailed(row.id, 'refused again', {}, now);
    for (const row of rows) if (row.providerMessageId) await deliveries.applyReceipt(row.providerMessageId, 'DELIVERED', undefined, now);
    for (const row of rows) await deliveries.reopenFailed(row.id, row.updatedAt, now);
    const after = new Map((await deliveries.findByRef('edges')).map((row) => [row.id.replace('edges-', ''), row.state]));
    expect(Object.fromEntries(after)).toEqual({
      // QUEUED → FAILED; the replay then finds a failure newer than the one read, and does nothing.
      queued: 'FAILED',
      'queued-after-a-transient-error': 'FAILED',
      sent: 'DELIVERED',
      delivered: 'DELIVERED',
      // FAILED rows are untouched by the failure and the receipt; the replay reopens them.
      'expired-unsent': 'QUEUED',
      'cancelled-unsent': 'QUEUED',
      'request-not-answered': 'QUEUED',
      refused: 'QUEUED',
    });
    for (const row of rows) {
      const to = after.get(row.id.replace('edges-', '')) as DeliveryState;
      if (to !== row.state) expect(reachable(row.state)).toContain(to);
    }
  });
});

const pick = (row: Delivery | undefined) => ({ state: row?.state, providerMessageId: row?.providerMessageId, lastError: row?.lastError });

/** States reachable from `from` along the diagram's edges (several writes in a row). */
function reachable(from: DeliveryState): DeliveryState[] {
  const seen = new Set<DeliveryState>();
  const walk = (state: DeliveryState) => {
    for (const next of DELIVERY_TRANSITIONS[state]) {
      if (!seen.has(next)) {
        seen.add(next);
        walk(next);
      }
    }
  };
  walk(from);
  return [...seen];
}
