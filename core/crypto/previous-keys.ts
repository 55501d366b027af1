/**
 * Keys that still open, and never seal, what the current key would open: those an operator listed
 * in OTP_ENCRYPTION_KEYS_PREVIOUS while rotating OTP_ENCRYPTION_KEY. They ride with the current
 * key's Buffer, the handle every caller already passes to seal or open, so no caller can forget
 * them and none can seal with one of them. The keys are never modified after start.
 */
const previousKeysOf = new WeakMap<Buffer, readonly Buffer[]>();

/** `current`, now also opening what one of `previous` sealed (returns `current` itself). */
export function withPreviousKeys(current: Buffer, previous: readonly Buffer[]): Buffer {
  const others = previous.filter((key) => !key.equals(current));
  if (others.length > 0) previousKeysOf.set(current, Object.freeze([...others]));
  return current;
}

/** The keys that open with `current`, in the order they are tried: the current key first. */
export function openingKeys(current: Buffer): readonly Buffer[] {
  const previous = previousKeysOf.get(current);
  return previous === undefined ? [current] : [current, ...previous];
}
