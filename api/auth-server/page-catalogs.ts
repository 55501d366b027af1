import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import { projectRoot } from '../../core/platform/project-root.js';
import { BASE_LOCALE, SHIPPED_LOCALES, type Locale } from '../../core/platform/locales/shipped-locales.js';

/** The words of the sign-in pages in one language: key -> text, with `{name}` (and `{*name}`, shown bold) for values. */
export type Catalog = Readonly<Record<string, string>>;

export const catalogsDir = join(projectRoot, 'templates', 'locales');

/** Reads one shipped catalog. The file name comes from SHIPPED_LOCALES only, never from a request. */
export function readCatalog(locale: Locale): Catalog {
  const parsed: unknown = JSON.parse(readFileSync(join(catalogsDir, `${locale}.json`), 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`templates/locales/${locale}.json is not an object`);
  for (const [key, text] of Object.entries(parsed)) {
    if (typeof text !== 'string') throw new Error(`templates/locales/${locale}.json: ${key} is not a string`);
  }
  return Object.freeze(parsed as Record<string, string>);
}

// Read once at start: a broken catalog stops the process there, not on a user's page.
const catalogs = new Map<Locale, Catalog>(SHIPPED_LOCALES.map((locale) => [locale, readCatalog(locale)]));

/** The text of a key in this language, else in English (a catalog being completed); an unknown key is a bug. */
function textOf(locale: Locale, key: string): string {
  const text = catalogs.get(locale)?.[key] ?? catalogs.get(BASE_LOCALE)?.[key];
  if (text === undefined) throw new Error(`No sign-in page text ${key}`);
  return text;
}

const PLACEHOLDER = /\{(\*?)([A-Za-z]+)\}/g;

function fill(text: string, params: Record<string, unknown>, value: (raw: string, bold: boolean) => string): string {
  return text.replace(PLACEHOLDER, (whole, star: string, name: string) =>
    Object.hasOwn(params, name) ? value(String(params[name]), star === '*') : whole,
  );
}

/** A key's text with its values filled in, as plain text (the page escapes it where it shows it). */
export function translate(locale: Locale, key: string, params: Record<string, unknown> = {}): string {
  return fill(textOf(locale, key), params, (raw) => raw);
}

/** A text that depends on a number: `<key>.one`, `<key>.other`..., chosen by the language's plural rules. */
export function translateCount(locale: Locale, key: string, count: number, params: Record<string, unknown> = {}): string {
  const form = new Intl.PluralRules(locale).select(count);
  const known = catalogs.get(locale)?.[`${key}.${form}`] ?? catalogs.get(BASE_LOCALE)?.[`${key}.${form}`];
  return translate(locale, known === undefined ? `${key}.other` : `${key}.${form}`, { ...params, count });
}

/**
 * A key's text as HTML for a page: the text and every value escaped, `{*name}` values in
 * <strong>. Catalogs hold no markup, so a translation can never add any.
 */
export function translateHtml(locale: Locale, key: string, params: Record<string, unknown>): Handlebars.SafeString {
  const escape = Handlebars.escapeExpression;
  const pieces: string[] = [];
  let last = 0;
  const text = textOf(locale, key);
  for (const match of text.matchAll(PLACEHOLDER)) {
    const [whole, star, name] = match as unknown as [string, string, string];
    pieces.push(escape(text.slice(last, match.index)));
    if (Object.hasOwn(params, name)) {
      const value = escape(String(params[name]));
      pieces.push(star === '*' ? `<strong>${value}</strong>` : value);
    } else pieces.push(escape(whole));
    last = match.index + whole.length;
  }
  pieces.push(escape(text.slice(last)));
  return new Handlebars.SafeString(pieces.join(''));
}
