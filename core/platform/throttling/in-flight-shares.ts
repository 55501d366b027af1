/** One cap a piece of work counts against while it is in flight. */
export interface InFlightShare {
  /** What is counted, unique across every kind of share this counter holds ("host acme a.example:443"). */
  key: string;
  /** How many may be in flight under the key at once. */
  cap: number;
  /** The error thrown when the key already holds its cap. */
  full: () => Error;
}

/**
 * Counts the work this process has in flight under several keys at once (a receiver host and its
 * enterprise, a user and their enterprise), each key with its own cap. In memory: each worker process
 * guards its own slots, so the caps scale with the number of workers as the slots do.
 */
export function createInFlightShares() {
  const counts = new Map<string, number>();
  return {
    /**
     * Takes a slot under every share and returns their release, or throws the first full share's
     * error having taken none. The release is safe to call more than once.
     */
    take(shares: readonly InFlightShare[]): () => void {
      for (const share of shares) if ((counts.get(share.key) ?? 0) >= share.cap) throw share.full();
      for (const share of shares) counts.set(share.key, (counts.get(share.key) ?? 0) + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        for (const share of shares) {
          const left = (counts.get(share.key) ?? 1) - 1;
          if (left <= 0) counts.delete(share.key);
          else counts.set(share.key, left);
        }
      };
    },
  };
}
