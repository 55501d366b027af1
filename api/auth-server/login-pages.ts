import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import Handlebars from 'handlebars';
import type { Locale } from '../../core/platform/locales/shipped-locales.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { translateHtml } from './page-catalogs.js';

const pagesDir = join(projectRoot, 'templates', 'pages');

// An isolated instance: the message templates' helpers and partials never reach these pages.
const hbs = Handlebars.create();
// {{t "key" name=value}}: the page's words in the page's language (page-catalogs.ts), escaped.
hbs.registerHelper('t', function (key: unknown, options: Handlebars.HelperOptions) {
  const root = (options.data as { root: { locale: Locale } }).root;
  return translateHtml(root.locale, String(key), options.hash as Record<string, unknown>);
});
const pages = new Map<string, Handlebars.TemplateDelegate>();
for (const file of readdirSync(pagesDir).filter((f) => f.endsWith('.hbs'))) {
  const name = basename(file, '.hbs');
  const source = readFileSync(join(pagesDir, file), 'utf8');
  if (name === 'page') hbs.registerPartial('page', source);
  else pages.set(name, hbs.compile(source, { strict: true }));
}

export type PageName = 'login-user' | 'login-code' | 'consent' | 'message' | 'logout';

/** Every field a page may show; absent ones render as nothing (strict templates need them all). */
export interface PageData {
  /** The page's language: its words, and `<html lang>`. */
  locale: Locale;
  title: string;
  clientName?: string;
  error?: string;
  notice?: string;
  action?: string;
  csrf?: string;
  userId?: string;
  /** How long the code just sent lives, in the page's language ("10 minutes"). */
  codeLifetime?: string;
  message?: string;
  restart?: boolean;
  scopes?: { name: string; label: string }[];
  /** The passkey sign-in the user-id page offers: its one challenge, the relying party id, and whether the field suggests passkeys. */
  passkey?: { challenge: string; rpId: string; conditional: boolean };
}

export interface RenderedPage {
  html: string;
  /** Content-Security-Policy for this response: nothing loads; one inline style (and script, on the passkey page) by nonce. */
  csp: string;
}

/**
 * Renders a sign-in page. `formTargets` are the origins a form may end up at: the page itself,
 * and the app's redirect URI, since browsers apply form-action to the redirects that follow a
 * form post (the last step answers 303 to the app).
 */
export function renderPage(name: PageName, data: PageData, formTargets: string[] = []): RenderedPage {
  const template = pages.get(name);
  if (!template) throw new Error(`No sign-in page ${name}`);
  const nonce = randomBytes(16).toString('base64');
  const html = template({
    clientName: '',
    error: '',
    notice: '',
    action: '',
    csrf: '',
    userId: '',
    message: '',
    restart: false,
    scopes: [],
    passkey: false,
    ...data,
    nonce,
  });
  const formAction = ["'self'", ...new Set(formTargets)].join(' ');
  // The passkey script posts its answer as a form: it needs no connection of its own (connect-src stays 'none').
  const script = data.passkey ? ` script-src 'nonce-${nonce}';` : '';
  const csp = `default-src 'none';${script} style-src 'nonce-${nonce}'; img-src 'none'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
  return { html, csp };
}

/**
 * The Content-Security-Policy source that lets a page's last form end at an app's redirect URI
 * (browsers check form-action on the redirects that follow a form post, Chromium up to the last
 * hop): its origin for http(s), its scheme for a native app's private-use scheme
 * (`com.example.app:`). Such a URI has no origin: URL parsing gives `null`, which CSP ignores, and
 * the browser would then refuse to hand the code to the app.
 */
export function formActionSourceOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : url.protocol;
}

export function renderMessagePage(data: { locale: Locale; title: string; message: string; clientName?: string }): RenderedPage {
  return renderPage('message', data);
}
