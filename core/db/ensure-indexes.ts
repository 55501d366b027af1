import type { Model } from 'mongoose';

const ready = new WeakMap<Model<never>, Promise<void>>();

/**
 * Creates a model's indexes once per process before its first use. syncIndexes() at boot only
 * sees models registered by then; repositories registered later (per feature) rely on this so
 * that their unique indexes exist before the first write that depends on them.
 */
export function ensureIndexes<T>(model: Model<T>): Promise<void> {
  const key = model as unknown as Model<never>;
  let pending = ready.get(key);
  if (!pending) {
    pending = model.createIndexes().then(() => undefined);
    // A failed attempt (MongoDB briefly down) must not be remembered forever.
    pending.catch(() => ready.delete(key));
    ready.set(key, pending);
  }
  return pending;
}
