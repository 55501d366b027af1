import type { ServerResponse } from 'node:http';

/**
 * The responses a server is writing now, held in numbered slots that a finished response empties
 * for the next one.
 *
 * Not a `Set`: V8 replaces a Set's table every few adds and deletes (every few requests under
 * keep-alive load), and a replaced table keeps the entries it held and a link to the table that
 * replaced it. Once one replaced table has reached the old generation, that chain keeps every
 * later table, and every response each one held (with its request, socket and the authorization
 * server's context), alive through each young-generation collection until the next full one: a
 * tenth of a client-credentials grant's young memory was copied and then promoted that way.
 * A slot array only grows to the most responses ever in flight at once and holds none after it.
 */
export class InFlightResponses {
  private readonly slots: (ServerResponse | undefined)[] = [];
  private readonly freeSlots: number[] = [];

  /** Holds `res` until its `close` event. */
  track(res: ServerResponse): void {
    const slot = this.freeSlots.pop() ?? this.slots.length;
    this.slots[slot] = res;
    res.once('close', () => {
      this.slots[slot] = undefined;
      this.freeSlots.push(slot);
    });
  }

  forEach(visit: (res: ServerResponse) => void): void {
    for (const res of this.slots) if (res) visit(res);
  }
}
