import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { projectRoot } from '../platform/project-root.js';
import { BASE_LOCALE, SHIPPED_LOCALES } from '../platform/locales/shipped-locales.js';
import { localizedTemplateName } from './template-locale.js';
import type { TemplateChannel, TemplateContent } from './template.types.js';

export const templatesDir = join(projectRoot, 'templates');

// Folders under templates/ that hold Handlebars building blocks, the sign-in pages, their words (locales) or the admin pages rather than message templates.
const SUPPORT_FOLDERS = new Set(['layouts', 'partials', 'pages', 'locales', 'admin']);

function readOptional(file: string): string | undefined {
  // Editors add a final newline; it is not part of a subject or message.
  return existsSync(file) ? readFileSync(file, 'utf8').replace(/\r?\n$/, '') : undefined;
}

/** One template's content, leaving out the parts it has no file for. */
function templateContent(
  name: string,
  channel: TemplateChannel,
  parts: { text: string; subject: string | undefined; html: string | undefined },
): TemplateContent {
  return {
    name,
    channel,
    text: parts.text,
    ...(parts.subject !== undefined ? { subject: parts.subject } : {}),
    ...(parts.html !== undefined ? { html: parts.html } : {}),
  };
}

/**
 * Reads the default templates: templates/<name>/{meta.json, text.txt, subject.txt?, html.hbs?},
 * and their language variants beside them, `text.<locale>.txt` (which makes the variant),
 * `subject.<locale>.txt`, `html.<locale>.hbs`, seeded as the template `<name>.<locale>`
 * (template-locale.ts); a variant's part that has no file of its own is the English one.
 */
export function loadTemplateFiles(dir = templatesDir): TemplateContent[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !SUPPORT_FOLDERS.has(entry.name))
    .flatMap((entry) => {
      const folder = join(dir, entry.name);
      const meta = JSON.parse(readFileSync(join(folder, 'meta.json'), 'utf8')) as { channel: TemplateChannel };
      const text = readOptional(join(folder, 'text.txt'));
      if (text === undefined) throw new Error(`Template ${entry.name} has no text.txt`);
      const subject = readOptional(join(folder, 'subject.txt'));
      const html = readOptional(join(folder, 'html.hbs'));
      const english = templateContent(entry.name, meta.channel, { text, subject, html });
      // Only the shipped languages' file names are ever tried.
      const variants = SHIPPED_LOCALES.filter((locale) => locale !== BASE_LOCALE).flatMap((locale) => {
        const localText = readOptional(join(folder, `text.${locale}.txt`));
        if (localText === undefined) return [];
        return [
          templateContent(localizedTemplateName(entry.name, locale), meta.channel, {
            text: localText,
            subject: readOptional(join(folder, `subject.${locale}.txt`)) ?? subject,
            html: readOptional(join(folder, `html.${locale}.hbs`)) ?? html,
          }),
        ];
      });
      return [english, ...variants];
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Layouts (registered as `layouts/<name>`) and partials (`<name>`) for the Handlebars instance. */
export function loadHandlebarsPartials(dir = templatesDir): Record<string, string> {
  const partials: Record<string, string> = {};
  for (const [folder, prefix] of [
    ['layouts', 'layouts/'],
    ['partials', ''],
  ] as const) {
    const full = join(dir, folder);
    if (!existsSync(full)) continue;
    for (const file of readdirSync(full).filter((f) => f.endsWith('.hbs'))) {
      partials[`${prefix}${basename(file, '.hbs')}`] = readFileSync(join(full, file), 'utf8');
    }
  }
  return partials;
}
