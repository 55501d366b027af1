/** The macro every OTP template carries; the service fills it, never the caller. */
export const OTP_MACRO = '__SVC_OTP__';

/**
 * A macro is `__NAME__`: upper-case letters, digits and inner underscores (NAME neither starts nor
 * ends with `_`). The one grammar for the request check, the renderer and the `dynamicMacros` keys,
 * so a template the check accepts is one the renderer can fill: a run of underscores (`______`) is
 * no macro, and `___ORDER__` holds `__ORDER__` after a plain `_`.
 */
export const MACRO_PATTERN = /__[A-Z0-9](?:[A-Z0-9_]*[A-Z0-9])?__/g;

/** The macros in one text, in order of appearance (repeats kept). */
export function macrosIn(text: string | undefined): string[] {
  return text === undefined ? [] : (text.match(MACRO_PATTERN) ?? []);
}

/**
 * Macros among `used` that `macros` gives no value for, sorted so that the 422 message naming them
 * is deterministic. __SVC_OTP__ is excluded: the service supplies it.
 */
export function findMissingMacros(used: readonly string[], macros: Readonly<Record<string, string>>): string[] {
  return [...new Set(used)].filter((name) => name !== OTP_MACRO && !Object.hasOwn(macros, name)).sort();
}
