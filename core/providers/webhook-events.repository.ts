import { Schema, type Connection, type Model } from 'mongoose';
import { ensureIndexes } from '../db/model-registry.js';

interface WebhookEventDoc {
  provider: string;
  eventId: string;
  receivedAt: Date;
}

const webhookEventSchema = new Schema<WebhookEventDoc>(
  {
    provider: { type: String, required: true },
    eventId: { type: String, required: true },
    receivedAt: { type: Date, required: true },
  },
  { collection: 'webhook_events', versionKey: false },
);
// The unique index is what makes de-duplication safe between concurrent deliveries.
webhookEventSchema.index({ provider: 1, eventId: 1 }, { unique: true });
// Real MongoDB forgets events after 30 days (SendGrid retries for 72 hours); the local server ignores TTLs.
webhookEventSchema.index({ receivedAt: 1 }, { expireAfterSeconds: 30 * 24 * 3600 });

function webhookEventModel(connection: Connection): Model<WebhookEventDoc> {
  return (connection.models.WebhookEvent as Model<WebhookEventDoc> | undefined) ?? connection.model<WebhookEventDoc>('WebhookEvent', webhookEventSchema);
}

export function registerWebhookEventModel(connection: Connection): void {
  webhookEventModel(connection);
}

export async function isWebhookEventSeen(connection: Connection, provider: string, eventId: string): Promise<boolean> {
  const model = webhookEventModel(connection);
  await ensureIndexes(model);
  return (await model.exists({ provider, eventId })) !== null;
}

/** Records a processed event; false when it was already recorded. */
export async function markWebhookEventSeen(connection: Connection, provider: string, eventId: string): Promise<boolean> {
  const model = webhookEventModel(connection);
  await ensureIndexes(model);
  try {
    await model.create({ provider, eventId, receivedAt: new Date() });
    return true;
  } catch (err) {
    if ((err as { code?: unknown })?.code === 11000) return false;
    throw err;
  }
}
