import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import type { Delivery } from '../deliveries/delivery.types.js';
import type { Logger } from '../platform/logger/logger.js';
import type { SentJournal } from '../deliveries/sent-journal.js';
import { applySentOutcomes } from '../deliveries/sent-outcomes.js';
import type { DeliveryReceipt, RecordDeliveryReceipt } from './delivery-receipt.types.js';
import { receiptFromSendgridEvent, receiptFromTwilioStatus, type SendgridEvent } from './delivery-receipts.mapper.js';
import type { WebhookEventsRepository } from './webhook-events.repository.js';
import { deliveryOutcomes } from '../platform/metrics/business-metrics.js';

export async function handleTwilioStatus(
  params: Record<string, unknown>,
  onReceipt: RecordDeliveryReceipt,
  secondaryAccountSid?: string,
): Promise<void> {
  const receipt = receiptFromTwilioStatus(params, secondaryAccountSid);
  // Twilio sends no event id; receipts are idempotent state updates, so a repeat is harmless.
  if (receipt) await onReceipt(receipt);
}

/**
 * Each event once: skipped when its sg_event_id was seen, recorded only after the receipt was
 * handled, so a failure lets SendGrid's retry deliver it again (at least once, de-duplicated).
 */
export async function handleSendgridEvents(
  seen: Pick<WebhookEventsRepository, 'isWebhookEventSeen' | 'markWebhookEventSeen'>,
  events: SendgridEvent[],
  onReceipt: RecordDeliveryReceipt,
): Promise<{ processed: number; duplicates: number }> {
  let processed = 0;
  let duplicates = 0;
  for (const event of events) {
    const eventId = typeof event.sg_event_id === 'string' ? event.sg_event_id : undefined;
    if (eventId && (await seen.isWebhookEventSeen('sendgrid', eventId))) {
      duplicates += 1;
      continue;
    }
    const receipt = receiptFromSendgridEvent(event);
    if (receipt) await onReceipt(receipt);
    if (eventId) await seen.markWebhookEventSeen('sendgrid', eventId);
    processed += 1;
  }
  return { processed, duplicates };
}

/**
 * Applies a receipt to the delivery rows sent under that provider id (or our own reference). A
 * receipt can beat its row to SENT (the dispatch worker writes rows a few milliseconds after the
 * send, later if it died or MongoDB was away): the journaled send is written first, then the receipt.
 * A failure receipt then sends an OTP's code again another way (delivery-failover.ts). That runs
 * on every repeat of the receipt, not only when it changed a row: a failover that failed midway
 * (and answered the provider with an error, so that it calls again) is finished by the repeat.
 */
export function recordDeliveryReceipt(
  deliveries: Pick<DeliveriesRepository, 'applyReceipt' | 'markSentMany' | 'findByProviderMessageId'>,
  journal: Pick<SentJournal, 'findByProviderMessageId' | 'forget'>,
  logger: Logger,
  failover?: { failOver: (failed: Delivery, cause: 'provider') => Promise<unknown> },
): RecordDeliveryReceipt {
  const failOverRows = async (providerMessageId: string) => {
    if (!failover) return;
    for (const row of await deliveries.findByProviderMessageId(providerMessageId)) {
      if (row.state === 'FAILED') await failover.failOver(row, 'provider');
    }
  };
  const apply = async (receipt: DeliveryReceipt, providerMessageId: string): Promise<number> => {
    const updated = await deliveries.applyReceipt(providerMessageId, receipt.state, receipt.error, new Date(), receipt.provider);
    if (updated > 0) return updated;
    // Redis down: the receipt still counts for rows that say SENT; one that beat its row is lost,
    // as before there was a journal, rather than failing the whole webhook call.
    const journaled = await journal.findByProviderMessageId(providerMessageId).catch((err: unknown) => {
      logger.warn({ err: (err as Error).message }, 'sent journal unavailable for a receipt');
      return undefined;
    });
    // No entry: either never sent from here, or its row was written (and the entry removed) just
    // after the first try; the second try settles which.
    if (journaled) await applySentOutcomes({ deliveries, journal }, [journaled]);
    return deliveries.applyReceipt(providerMessageId, receipt.state, receipt.error, new Date(), receipt.provider);
  };
  return async (receipt) => {
    const ids = [receipt.providerMessageId, receipt.reference].filter((id): id is string => typeof id === 'string' && id.length > 0);
    let updated = 0;
    for (const id of new Set(ids)) {
      updated += await apply(receipt, id);
      if (receipt.state === 'FAILED') await failOverRows(id);
    }
    if (updated > 0) {
      const channel = receipt.channel ?? (receipt.provider.startsWith('twilio') ? 'SMS' : 'EMAIL');
      deliveryOutcomes.inc({ channel, provider: receipt.provider, state: receipt.state });
    }
    logger.info({ provider: receipt.provider, state: receipt.state, updated }, 'delivery receipt');
  };
}
