import Handlebars from 'handlebars';
import { assertSafeMacroUrls } from './macro-url.guard.js';
import { countPartialCalls, renderWithinLimits } from './partial-expansion.limits.js';
import { loadHandlebarsPartials } from './template-files.loader.js';
import { MissingMacroError, TemplateSyntaxError } from './template-errors.js';
import { MACRO_PATTERN, macrosIn } from './template-macros.js';
import type { RenderedMessage, TemplateContent } from './template.types.js';
import { ownedTemplateKey } from './template-owner.js';

type HandlebarsEnv = ReturnType<typeof Handlebars.create>;
type CompiledHtml = (context: object) => string;

let env: HandlebarsEnv | undefined;
// One compiled function per template (name and owner: an enterprise's own `otp_email` and the
// shared one do not replace each other's); a changed source (admin edit) replaces it.
const compiled = new Map<string, { source: string; render: CompiledHtml }>();

/** An isolated instance: nothing registered here leaks into (or from) the global Handlebars. */
function handlebars(): HandlebarsEnv {
  if (!env) {
    env = Handlebars.create();
    countPartialCalls(env);
    for (const [name, source] of Object.entries(loadHandlebarsPartials())) env.registerPartial(name, source);
  }
  return env;
}

function compileHtml(source: string): CompiledHtml {
  const hb = handlebars();
  try {
    // precompile parses eagerly, so syntax errors surface here rather than at first render.
    hb.precompile(source, { strict: true });
    return hb.compile(source, { strict: true, noEscape: false });
  } catch (err) {
    throw new TemplateSyntaxError(problemOf(err), { cause: err });
  }
}

/**
 * Handlebars' message in one line. A parse error's message is four lines: where (`Parse error on
 * line 2:`), a quote of the source, a caret under it, and what was expected and got; the first
 * and the last together tell the admin what to fix, and the quote is their own HTML.
 */
function problemOf(err: unknown): string {
  const lines = (err instanceof Error ? err.message : String(err)).split('\n').filter((line) => line.trim() !== '');
  const [first, last] = [lines[0], lines[lines.length - 1]];
  if (first === undefined || last === undefined) return 'unknown error';
  return lines.length === 1 ? first : `${first.replace(/:$/, '')}: ${last}`;
}

function compiledHtmlOf(template: TemplateContent & { html: string }): CompiledHtml {
  const key = ownedTemplateKey(template.name, template.enterpriseId);
  const cached = compiled.get(key);
  if (cached && cached.source === template.html) return cached.render;
  const render = compileHtml(template.html);
  compiled.set(key, { source: template.html, render });
  return render;
}

/**
 * Runs the Handlebars part (layouts, partials) with an empty context: templates carry no
 * Handlebars data, only `__MACRO__`s, which are substituted afterwards.
 */
function expandHtml(template: TemplateContent & { html: string }): string {
  return runHtml(compiledHtmlOf(template));
}

/**
 * Runs compiled HTML with an empty context, within the limits on partial calls and output
 * (partial-expansion.limits.ts): validation runs an admin's HTML on the API's event loop.
 */
function runHtml(render: CompiledHtml): string {
  try {
    return renderWithinLimits(() => render({}));
  } catch (err) {
    // Strict mode: an unknown value or partial is found only when running the template.
    throw new TemplateSyntaxError(problemOf(err), { cause: err });
  }
}

function hasHtml(template: TemplateContent): template is TemplateContent & { html: string } {
  return typeof template.html === 'string' && template.html !== '';
}

/** Every `__MACRO__` the rendered message would contain (subject, text, HTML with its layout). */
export function findTemplateMacros(template: TemplateContent): string[] {
  const found = [
    ...macrosIn(template.subject),
    ...macrosIn(template.text),
    ...macrosIn(hasHtml(template) ? expandHtml(template) : undefined),
  ];
  return [...new Set(found)].sort();
}

/**
 * Checks that the HTML compiles and runs (known partials, no data references) within the limits
 * on partial calls and output; throws TemplateSyntaxError.
 */
export function validateTemplateSyntax(template: TemplateContent): void {
  if (!hasHtml(template)) return;
  runHtml(compileHtml(template.html));
}

export function escapeHtml(value: string): string {
  return Handlebars.Utils.escapeExpression(value);
}

/**
 * One pass over the text: each macro is replaced by its value as data. A value is never scanned
 * again, so a value containing `__OTHER__`, `$&` or `{{x}}` appears literally.
 */
function substitute(text: string, macros: Record<string, string>, encode: (v: string) => string): string {
  return text.replace(MACRO_PATTERN, (macro) => encode(macros[macro] as string));
}

/**
 * Renders a template: Handlebars first (layout and partials, no caller data), then macro
 * substitution, HTML-escaped in the HTML part. Because Handlebars has already run when values are
 * inserted, a value can never be interpreted as template syntax.
 * Throws MissingMacroError (422) naming every macro without a value, and UnsafeMacroUrlError when
 * a value would make a link or image address anything but a web (or mailto / tel) address.
 */
export function renderTemplate(template: TemplateContent, macros: Record<string, string>): RenderedMessage {
  const html = hasHtml(template) ? expandHtml(template) : undefined;
  const used = new Set([...macrosIn(template.subject), ...macrosIn(template.text), ...macrosIn(html)]);
  const missing = [...used].filter((m) => !Object.hasOwn(macros, m) || typeof macros[m] !== 'string').sort();
  if (missing.length > 0) throw new MissingMacroError(missing);
  if (html !== undefined) assertSafeMacroUrls(html, MACRO_PATTERN, macros);
  const plain = (v: string) => v;
  // A line break in a subject would be a header injection attempt at any SMTP hop.
  const oneLine = (v: string) => v.replace(/[\r\n]+/g, ' ');
  return {
    ...(template.subject !== undefined ? { subject: substitute(template.subject, macros, oneLine) } : {}),
    text: substitute(template.text, macros, plain),
    ...(html !== undefined ? { html: substitute(html, macros, escapeHtml) } : {}),
  };
}
