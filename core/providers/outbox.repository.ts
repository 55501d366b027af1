import { Schema, type Connection } from 'mongoose';
import { modelFor } from '../platform/db/model-registry.js';

export type OutboxChannel = 'SMS' | 'EMAIL';

interface OutboxDoc {
  channel: OutboxChannel;
  to: string;
  subject?: string;
  text: string;
  html?: string;
  otpUuid?: string;
  createdAt: Date;
}

export interface OutboxMessage extends OutboxDoc {
  id: string;
}

export const outboxSchema = new Schema<OutboxDoc>(
  {
    channel: { type: String, enum: ['SMS', 'EMAIL'], required: true },
    to: { type: String, required: true },
    subject: { type: String },
    text: { type: String, required: true },
    html: { type: String },
    otpUuid: { type: String },
    createdAt: { type: Date, required: true },
  },
  { collection: 'outbox', versionKey: false },
);
// Serves "newest messages to this address" and the unfiltered newest-first listing.
outboxSchema.index({ to: 1, createdAt: -1 });
outboxSchema.index({ createdAt: -1 });

const outboxModel = (connection: Connection) => modelFor(connection, 'OutboxMessage', outboxSchema);

export function createOutboxRepository(connection: Connection) {
  return {
    async insertOutboxMessage(message: Omit<OutboxMessage, 'id' | 'createdAt'>): Promise<OutboxMessage> {
      const model = await outboxModel(connection);
      const created = await model.create({ ...message, createdAt: new Date() });
      const { _id, ...rest } = created.toObject();
      return { id: String(_id), ...rest };
    },

    /** Newest first; `_id` breaks ties between messages stored in the same millisecond. */
    async listOutboxMessages(filter: { to?: string; limit: number }): Promise<OutboxMessage[]> {
      const model = await outboxModel(connection);
      const docs = await model
        .find(filter.to === undefined ? {} : { to: filter.to })
        .sort({ createdAt: -1, _id: -1 })
        .limit(filter.limit)
        .lean();
      return docs.map(({ _id, ...rest }) => ({ id: String(_id), ...rest }));
    },
  };
}

export type OutboxRepository = ReturnType<typeof createOutboxRepository>;
