import { Schema, type Connection } from 'mongoose';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';

interface WebhookEventDoc {
  provider: string;
  eventId: string;
  receivedAt: Date;
}

export const webhookEventSchema = new Schema<WebhookEventDoc>(
  {
    provider: { type: String, required: true },
    eventId: { type: String, required: true },
    receivedAt: { type: Date, required: true },
  },
  { collection: 'webhook_events', versionKey: false },
);
// The unique index is what makes de-duplication safe between concurrent deliveries.
webhookEventSchema.index({ provider: 1, eventId: 1 }, { unique: true });
// Real MongoDB forgets events after 30 days (SendGrid retries for 72 hours); the local server
// ignores TTLs, so reads treat an older event as forgotten too: the same answer either way.
const KEPT_SECONDS = 30 * 24 * 3600;
webhookEventSchema.index({ receivedAt: 1 }, { expireAfterSeconds: KEPT_SECONDS });
const keptSince = () => new Date(Date.now() - KEPT_SECONDS * 1000);

const webhookEventModel = (connection: Connection) => modelFor(connection, 'WebhookEvent', webhookEventSchema);

export function createWebhookEventsRepository(connection: Connection) {
  return {
    async isWebhookEventSeen(provider: string, eventId: string): Promise<boolean> {
      const model = await webhookEventModel(connection);
      return (await model.exists({ provider, eventId, receivedAt: { $gt: keptSince() } })) !== null;
    },

    /** Records a processed event; false when it was already recorded. */
    async markWebhookEventSeen(provider: string, eventId: string): Promise<boolean> {
      const model = await webhookEventModel(connection);
      try {
        await model.create({ provider, eventId, receivedAt: new Date() });
        return true;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        // A record past the TTL counts as forgotten: this event takes it over (once, if concurrent).
        const renewed = await model.updateOne(
          { provider, eventId, receivedAt: { $lte: keptSince() } },
          { $set: { receivedAt: new Date() } },
        );
        return renewed.modifiedCount === 1;
      }
    },
  };
}

export type WebhookEventsRepository = ReturnType<typeof createWebhookEventsRepository>;
