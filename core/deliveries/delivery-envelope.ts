import { decryptSecret, encryptSecret } from '../crypto/secret-box.js';
import type { Delivery } from './delivery.types.js';

/** What the dispatch worker needs to send a delivery without reading its row first. */
type EnvelopeContent = Pick<
  Delivery,
  'kind' | 'refId' | 'enterpriseId' | 'channel' | 'to' | 'template' | 'macros' | 'secretMacros' | 'test'
> & {
  notAfter: number;
};

const context = (deliveryId: string) => `dispatch:${deliveryId}`;

/** The largest envelope a dispatch job takes (schemas/jobs/dispatch.deliver.json, `sealed`). */
export const MAX_SEALED_LENGTH = 65536;

/**
 * A fresh delivery row, sealed for its dispatch job (AES-256-GCM with the server key, bound to the
 * delivery id): the worker skips one MongoDB read per message, and Redis, which holds job data in
 * plain text, sees neither the address nor the (already encrypted) code. Undefined when the row is
 * too large for a job (many long macro values): that job carries only the id and the worker reads.
 */
export function sealDelivery(delivery: Delivery, key: Buffer): string | undefined {
  const { kind, refId, enterpriseId, channel, to, template, macros, secretMacros, test } = delivery;
  const content: EnvelopeContent = {
    kind,
    refId,
    // Which enterprise's templates may carry it (an enterprise's own, or a shared one).
    ...(enterpriseId === undefined ? {} : { enterpriseId }),
    channel,
    to,
    template,
    macros,
    secretMacros,
    ...(test ? { test } : {}),
    notAfter: delivery.notAfter.getTime(),
  };
  const sealed = encryptSecret(JSON.stringify(content), key, context(delivery.id));
  return sealed.length <= MAX_SEALED_LENGTH ? sealed : undefined;
}

/** The row as it was sealed, still QUEUED; throws if the envelope was tampered with or moved. */
export function openDelivery(sealed: string, deliveryId: string, key: Buffer, now: Date): Delivery {
  const content = JSON.parse(decryptSecret(sealed, key, context(deliveryId))) as EnvelopeContent;
  return { ...content, id: deliveryId, notAfter: new Date(content.notAfter), state: 'QUEUED', attempts: 0, queuedAt: now, updatedAt: now };
}
