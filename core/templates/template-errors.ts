import { ValidationError } from '../errors/app-error.js';

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
