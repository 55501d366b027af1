/**
 * Keys whose earlier work is still accepted, and which never do new work: those an operator
 * listed in OTP_ENCRYPTION_KEYS_PREVIOUS (they open what they sealed, never seal) or
 * OTP_HMAC_KEYS_PREVIOUS (codes digested with them still verify, nothing new is digested with
 * them) while changing the key. They ride with the current key's Buffer, the handle every caller
 * already passes to seal, open, digest or verify, so no caller can forget them and none can use
 * one of them for new work. The keys are never modified after start.
 */
const previousKeysOf = new WeakMap<Buffer, readonly Buffer[]>();

/** `current`, now also accepting what one of `previous` made (returns `current` itself). */
export function withPreviousKeys(current: Buffer, previous: readonly Buffer[]): Buffer {
  const others = previous.filter((key) => !key.equals(current));
  if (others.length > 0) previousKeysOf.set(current, Object.freeze([...others]));
  return current;
}

/** The keys whose work is accepted with `current`, in the order they are tried: the current key first. */
export function acceptedKeys(current: Buffer): readonly Buffer[] {
  const previous = previousKeysOf.get(current);
  return previous === undefined ? [current] : [current, ...previous];
}
