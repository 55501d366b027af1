import { ValidationError } from '../platform/errors/app-error.js';

const DEFAULT_NAME = 'Passkey';

/**
 * What may not be in a passkey's name. The name is chosen by whoever adds the passkey (possibly
 * someone holding a stolen session) and quoted in the "passkey added" message to the user: a line
 * break would let it write lines of its own ("No action needed"), a control character or a
 * direction mark (U+200E/F, U+202A-E, U+2066-9) would make it read differently from what it holds.
 * Zero-width joiners stay allowed: emoji sequences are made of them.
 */
const FORBIDDEN = /[\p{Cc}\u2028\u2029\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/** The name to store (trimmed, or the default); ValidationError for a name the user's messages cannot quote safely. */
export function passkeyName(given: string | undefined): string {
  if (given !== undefined && FORBIDDEN.test(given))
    throw new ValidationError('Invalid field name: must not hold line breaks, control characters or text direction marks');
  return given?.trim() || DEFAULT_NAME;
}
