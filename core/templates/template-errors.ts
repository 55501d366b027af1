import { ValidationError } from '../platform/errors/app-error.js';

/** Rendering needs a value for every macro the template uses. */
export class MissingMacroError extends ValidationError {
  constructor(readonly missing: string[]) {
    super(`Missing values for macros ${missing.join(', ')}`);
    this.name = 'MissingMacroError';
  }
}

/** The HTML part is not valid Handlebars, or names a partial or value that does not exist. */
export class TemplateSyntaxError extends ValidationError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`Invalid template html: ${detail}`, options);
    this.name = 'TemplateSyntaxError';
  }
}

/**
 * A macro value would turn a link or resource address of the HTML part into something other
 * than a web address (`javascript:`, `data:`, ...). Escaping keeps such a value from breaking out
 * of the attribute, but not from being followed when the reader clicks.
 */
export class UnsafeMacroUrlError extends ValidationError {
  constructor(
    readonly macros: string[],
    readonly attribute: string,
    readonly allowed: readonly string[],
  ) {
    super(`Macro ${macros.join(', ')} in a ${attribute} attribute must give an ${allowed.join(', ')} URL`);
    this.name = 'UnsafeMacroUrlError';
  }
}
