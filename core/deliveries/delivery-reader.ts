import type { DeliveriesRepository } from './deliveries.repository.js';
import { rowAfterSend } from './delivery-states.js';
import type { Delivery } from './delivery.types.js';
import type { SentJournal } from './sent-journal.js';

/**
 * Delivery rows as they stand, sends included that are journaled but not on their rows yet (the
 * dispatch worker writes rows up to 100 ms after the send, later while MongoDB is away). The
 * journal is read first: an entry disappears only after its row says SENT, so a send is never
 * missed between the two reads. Without Redis the rows still answer, milliseconds behind.
 */
export function createDeliveryReader(stores: { journal: Pick<SentJournal, 'find'>; deliveries: Pick<DeliveriesRepository, 'findByRef'> }) {
  return {
    /** The rows of one OTP or user (`refId`); `ids` are those whose sends the journal may hold. */
    async byRef(refId: string, ids: readonly string[]): Promise<Delivery[]> {
      const sent = await stores.journal.find([...ids]).catch(() => []);
      const rows = await stores.deliveries.findByRef(refId);
      const byId = new Map(sent.map((outcome) => [outcome.deliveryId, outcome]));
      return rows.map((row) => {
        const outcome = byId.get(row.id);
        return outcome ? rowAfterSend(row, outcome) : row;
      });
    },
  };
}

export type DeliveryReader = ReturnType<typeof createDeliveryReader>;
