import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import type { Delivery } from '../deliveries/delivery.types.js';
import type { Logger } from '../platform/logger/logger.js';
import type { EarlyReceipt, EarlyReceiptsOnSend, EarlyReceiptStore } from '../deliveries/early-receipts.js';
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

export interface DeliveryReceiptsDeps {
  deliveries: Pick<DeliveriesRepository, 'applyReceipt' | 'markSentMany' | 'findByProviderMessageId'>;
  journal: Pick<SentJournal, 'findByProviderMessageId' | 'forget'>;
  /** Where a receipt waits for a send not recorded yet; without it such a receipt is dropped. */
  early?: Pick<EarlyReceiptStore, 'hold' | 'find' | 'drop'>;
  logger: Logger;
  failover?: { failOver: (failed: Delivery, cause: 'provider') => Promise<unknown> };
}

const channelOf = (receipt: EarlyReceipt) => receipt.channel ?? (receipt.provider.startsWith('twilio') ? 'SMS' : 'EMAIL');

/**
 * Applies receipts to the delivery rows sent under their provider id (or our own reference).
 * `record` takes a webhook's receipt; `applyEarly` is called by whoever writes sends to their rows
 * (sent-outcomes.ts), for the receipts that came before.
 *
 * A receipt can beat its row to SENT (the dispatch worker writes rows a few milliseconds after the
 * send, later if it died or MongoDB was away): the journaled send is written first, then the
 * receipt. It can even beat the journal entry (the provider calls back before its answer reaches
 * the worker): it then waits in Redis (early-receipts.ts) until the send reaches its row.
 * A failure receipt then sends an OTP's code again another way (delivery-failover.ts). That runs
 * on every repeat of the receipt, not only when it changed a row: a failover that failed midway
 * (and answered the provider with an error, so that it calls again) is finished by the repeat.
 */
export function createDeliveryReceipts(deps: DeliveryReceiptsDeps): { record: RecordDeliveryReceipt; applyEarly: EarlyReceiptsOnSend } {
  const { deliveries, journal, early, logger, failover } = deps;
  const failOverRows = async (providerMessageId: string) => {
    if (!failover) return;
    for (const row of await deliveries.findByProviderMessageId(providerMessageId)) {
      if (row.state === 'FAILED') await failover.failOver(row, 'provider');
    }
  };
  const applyToRows = (receipt: EarlyReceipt, providerMessageId: string): Promise<number> =>
    deliveries.applyReceipt(providerMessageId, receipt.state, receipt.error, new Date(), receipt.provider);

  const applyEarly: EarlyReceiptsOnSend = {
    async applyTo(outcomes) {
      if (!early) return;
      const held = await early.find(outcomes.map((outcome) => outcome.providerMessageId));
      if (held.size === 0) return;
      for (const [providerMessageId, receipt] of held) {
        const updated = await applyToRows(receipt, providerMessageId);
        if (receipt.state === 'FAILED') await failOverRows(providerMessageId);
        if (updated > 0) deliveryOutcomes.inc({ channel: channelOf(receipt), provider: receipt.provider, state: receipt.state });
        logger.info({ provider: receipt.provider, state: receipt.state, updated }, 'early delivery receipt applied');
      }
      await early.drop([...held.keys()]);
    },
  };
  const stores = { deliveries, journal, earlyReceipts: applyEarly };

  const apply = async (receipt: DeliveryReceipt, providerMessageId: string): Promise<number> => {
    const updated = await applyToRows(receipt, providerMessageId);
    if (updated > 0) return updated;
    // Redis down: the receipt still counts for rows that say SENT; one that beat its row is lost,
    // as before there was a journal, rather than failing the whole webhook call.
    const journaled = await journal.findByProviderMessageId(providerMessageId).catch((err: unknown) => {
      logger.warn({ err: (err as Error).message }, 'sent journal unavailable for a receipt');
      return undefined;
    });
    // No entry: either not journaled yet, never sent from here, or its row was written (and the
    // entry removed) just after the first try; the second try settles the last case.
    if (journaled) await applySentOutcomes(stores, [journaled]);
    return applyToRows(receipt, providerMessageId);
  };

  /**
   * No row and no journal entry took the receipt: it waits for its send. The rows are read once
   * more after it is kept, because a send written in between looked for early receipts before
   * this one was there. (A writer reads early receipts after writing its rows, and this reads
   * the rows after keeping the receipt: one of the two sees the other.)
   */
  const holdForSend = async (receipt: DeliveryReceipt, ids: string[]): Promise<{ kept: boolean; updated: number }> => {
    if (!early) return { kept: false, updated: 0 };
    try {
      await early.hold(ids, receipt);
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'receipt for a message not known yet could not be kept');
      return { kept: false, updated: 0 };
    }
    let updated = 0;
    for (const id of ids) updated += await applyToRows(receipt, id);
    return { kept: true, updated };
  };

  const record: RecordDeliveryReceipt = async (receipt) => {
    const ids = [...new Set([receipt.providerMessageId, receipt.reference])].filter(
      (id): id is string => typeof id === 'string' && id.length > 0,
    );
    let updated = 0;
    for (const id of ids) updated += await apply(receipt, id);
    // Also a repeat of a receipt its row already took; it then waits in vain and expires.
    const waiting = updated === 0 ? await holdForSend(receipt, ids) : undefined;
    if (waiting) updated = waiting.updated;
    if (receipt.state === 'FAILED') for (const id of ids) await failOverRows(id);
    if (updated > 0) deliveryOutcomes.inc({ channel: channelOf(receipt), provider: receipt.provider, state: receipt.state });
    const kept = waiting?.kept === true && updated === 0;
    logger.info({ provider: receipt.provider, state: receipt.state, updated, ...(kept ? { waitsForSend: true } : {}) }, 'delivery receipt');
  };

  return { record, applyEarly };
}
