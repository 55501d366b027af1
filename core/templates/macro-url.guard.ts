import { UnsafeMacroUrlError } from './template-errors.js';

// Attributes whose value a browser or mail client follows or loads as an address.
const URL_ATTRIBUTES = new Set([
  'href',
  'xlink:href',
  'src',
  'action',
  'formaction',
  'cite',
  'background',
  'poster',
  'data',
  'codebase',
  'longdesc',
  'usemap',
  'srcset',
  'ping',
  'manifest',
  'lowsrc',
  'dynsrc',
  'icon',
  'profile',
  'archive',
  'classid',
]);
// A reader clicks these: writing an e-mail or calling a number makes sense there, not elsewhere.
const LINK_ATTRIBUTES = new Set(['href', 'xlink:href']);
const LINK_SCHEMES = ['http', 'https', 'mailto', 'tel'] as const;
const RESOURCE_SCHEMES = ['http', 'https'] as const;

const TAG_RE = /<[A-Za-z][^\s/>]*((?:[^>"']|"[^"]*"|'[^']*')*)>/g;
const ATTRIBUTE_RE = /([^\s"'>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?/g;
const SCHEME_RE = /^([A-Za-z][A-Za-z0-9+.-]*):/;

/**
 * What a URL parser looks at (WHATWG URL): tabs and line breaks anywhere are dropped and leading
 * control characters and spaces are trimmed, so `java\tscript:` and ` javascript:` are still
 * `javascript:`. A few character references are decoded for the same reason.
 */
function normalizedUrl(value: string): string {
  const url = value
    .replace(/&(?:colon|#0*58|#x0*3a);?/gi, ':')
    .replace(/&(?:tab|newline|#0*9|#0*10|#0*13|#x0*9|#x0*a|#x0*d);?/gi, '')
    .replace(/[\t\n\r]/g, '');
  let start = 0;
  while (start < url.length && url.charCodeAt(start) <= 0x20) start += 1;
  return url.slice(start);
}

function unquoted(value: string): string {
  return /^["']/.test(value) ? value.slice(1, -1) : value;
}

/** The addresses one attribute value holds: srcset lists several, each before its descriptor. */
function addressesOf(name: string, value: string): string[] {
  if (name !== 'srcset') return [value];
  return value.split(',').map((candidate) => candidate.trim().split(/\s+/)[0] ?? '');
}

/**
 * Checks every URL attribute of the expanded HTML that contains a macro: with the macros' values
 * in place, its address must be absolute with an allowed scheme (http(s), and mailto / tel for
 * links). Throws UnsafeMacroUrlError otherwise; the message names the macros, never the values.
 */
export function assertSafeMacroUrls(html: string, macroRe: RegExp, macros: Record<string, string>): void {
  for (const tag of html.matchAll(TAG_RE)) {
    for (const attribute of (tag[1] ?? '').matchAll(ATTRIBUTE_RE)) {
      const name = (attribute[1] ?? '').toLowerCase();
      const rawValue = attribute[2];
      if (rawValue === undefined || !URL_ATTRIBUTES.has(name)) continue;
      const value = unquoted(rawValue);
      const used = value.match(macroRe);
      if (!used) continue;
      const allowed = LINK_ATTRIBUTES.has(name) ? LINK_SCHEMES : RESOURCE_SCHEMES;
      const filled = value.replace(macroRe, (macro) => macros[macro] ?? '');
      for (const address of addressesOf(name, filled)) {
        const scheme = SCHEME_RE.exec(normalizedUrl(address))?.[1]?.toLowerCase();
        if (scheme === undefined || !(allowed as readonly string[]).includes(scheme)) {
          throw new UnsafeMacroUrlError([...new Set(used)], name, allowed);
        }
      }
    }
  }
}
