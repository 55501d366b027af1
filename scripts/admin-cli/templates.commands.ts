import { readFileSync } from 'node:fs';
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import { ENTERPRISE_ID_RE } from '../../core/platform/tenancy/enterprise-id.js';
import type { TemplateContent } from '../../core/templates/template.types.js';
import { createTemplate, deleteTemplate, findTemplate, listTemplates, updateTemplate } from '../../core/templates/templates.service.js';
import { checkAgainstSchema, comments, required, UsageError, type CliOptions, type Command } from './cli-support.js';

/** The template content in the file named by --file: the JSON body of `PUT /admin/templates/{name}`. */
function contentFromFile(path: string): Omit<TemplateContent, 'name'> {
  let content: unknown;
  try {
    content = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`--file ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  checkAgainstSchema('admin-templates.update.json', content);
  return content as Omit<TemplateContent, 'name'>;
}

/** The template's owner: `--enterprise` for an enterprise's own, none for the shared one (as `?enterpriseId=`). */
function ownerOf(options: CliOptions): string | undefined {
  const owner = options.enterprise;
  if (owner !== undefined && !ENTERPRISE_ID_RE.test(owner)) throw new UsageError(`--enterprise ${owner}: not an enterprise id`);
  return owner;
}

export const templateCommands: Record<string, Command> = {
  'templates list': async ({ services, options }) => listTemplates(services.templates, ownerOf(options)),
  'templates show': async ({ services, arg, options }) => {
    const template = await findTemplate(services.templates, required(arg, 'template name'), ownerOf(options));
    if (!template) throw new NotFoundError('Template not found');
    return template;
  },
  // Creates the template, or replaces the content of the existing one (its version grows by one).
  'templates set': async ({ services, arg, options }) => {
    const name = required(arg, 'template name');
    const owner = ownerOf(options);
    const content = contentFromFile(required(options.file, '--file'));
    if (await findTemplate(services.templates, name, owner)) {
      try {
        return await updateTemplate(services.templates, name, owner, content, comments(options));
      } catch (err) {
        // Deleted in between: create it below.
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    const created = { name, ...content, ...(owner === undefined ? {} : { enterpriseId: owner }) };
    checkAgainstSchema('admin-templates.create.json', created);
    return createTemplate(services.templates, created, comments(options));
  },
  'templates delete': async ({ services, arg, options }) => {
    const name = required(arg, 'template name');
    const owner = ownerOf(options);
    await deleteTemplate(services.templates, name, owner);
    return { deleted: name, ...(owner === undefined ? {} : { enterpriseId: owner }) };
  },
};
