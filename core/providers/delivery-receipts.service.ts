import type { Connection } from 'mongoose';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import type { Logger } from '../logger/logger.js';
import type { RecordDeliveryReceipt } from './delivery-receipt.types.js';
import { receiptFromSendgridEvent, receiptFromTwilioStatus, type SendgridEvent } from './delivery-receipts.mapper.js';
import { isWebhookEventSeen, markWebhookEventSeen } from './webhook-events.repository.js';

export async function handleTwilioStatus(params: Record<string, unknown>, onReceipt: RecordDeliveryReceipt): Promise<void> {
  const receipt = receiptFromTwilioStatus(params);
  // Twilio sends no event id; receipts are idempotent state updates, so a repeat is harmless.
  if (receipt) await onReceipt(receipt);
}

/**
 * Each event once: skipped when its sg_event_id was seen, recorded only after the receipt was
 * handled, so a failure lets SendGrid's retry deliver it again (at least once, de-duplicated).
 */
export async function handleSendgridEvents(mongo: Connection, events: SendgridEvent[], onReceipt: RecordDeliveryReceipt): Promise<{ processed: number; duplicates: number }> {
  let processed = 0;
  let duplicates = 0;
  for (const event of events) {
    const eventId = typeof event.sg_event_id === 'string' ? event.sg_event_id : undefined;
    if (eventId && (await isWebhookEventSeen(mongo, 'sendgrid', eventId))) {
      duplicates += 1;
      continue;
    }
    const receipt = receiptFromSendgridEvent(event);
    if (receipt) await onReceipt(receipt);
    if (eventId) await markWebhookEventSeen(mongo, 'sendgrid', eventId);
    processed += 1;
  }
  return { processed, duplicates };
}

/** Applies a receipt to the delivery rows sent under that provider id (or our own reference). */
export function recordDeliveryReceipt(deliveries: Pick<DeliveriesRepository, 'applyReceipt'>, logger: Logger): RecordDeliveryReceipt {
  return async (receipt) => {
    const ids = [receipt.providerMessageId, receipt.reference].filter((id): id is string => typeof id === 'string' && id.length > 0);
    let updated = 0;
    for (const id of new Set(ids)) updated += await deliveries.applyReceipt(id, receipt.state, receipt.error);
    logger.info({ provider: receipt.provider, state: receipt.state, updated }, 'delivery receipt');
  };
}
