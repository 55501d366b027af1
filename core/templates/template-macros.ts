/** The macro every OTP template carries; the service fills it, never the caller. */
export const OTP_MACRO = '__SVC_OTP__';

const MACRO_PATTERN = /__[A-Z0-9_]+__/g;

/** Macro names used in the given template texts, distinct and sorted. */
export function findMacros(templateTexts: readonly string[]): string[] {
  return [...new Set(templateTexts.flatMap((text) => text.match(MACRO_PATTERN) ?? []))].sort();
}

/**
 * Macros the templates use that `macros` gives no value for, sorted so that the 422 message
 * naming them is deterministic. __SVC_OTP__ is excluded: the service supplies it.
 */
export function findMissingMacros(templateTexts: readonly string[], macros: Readonly<Record<string, string>>): string[] {
  return findMacros(templateTexts).filter((name) => name !== OTP_MACRO && !Object.hasOwn(macros, name));
}
