import { readFileSync } from 'node:fs';
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import type { TemplateContent } from '../../core/templates/template.types.js';
import { createTemplate, deleteTemplate, findTemplate, listTemplates, updateTemplate } from '../../core/templates/templates.service.js';
import { checkAgainstSchema, comments, required, UsageError, type Command } from './cli-support.js';

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

export const templateCommands: Record<string, Command> = {
  'templates list': async ({ services }) => listTemplates(services.templates),
  'templates show': async ({ services, arg }) => {
    const template = await findTemplate(services.templates, required(arg, 'template name'));
    if (!template) throw new NotFoundError('Template not found');
    return template;
  },
  // Creates the template, or replaces the content of the existing one (its version grows by one).
  'templates set': async ({ services, arg, options }) => {
    const name = required(arg, 'template name');
    const content = contentFromFile(required(options.file, '--file'));
    if (await findTemplate(services.templates, name)) {
      try {
        return await updateTemplate(services.templates, name, content, comments(options));
      } catch (err) {
        // Deleted in between: create it below.
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    checkAgainstSchema('admin-templates.create.json', { name, ...content });
    return createTemplate(services.templates, { name, ...content }, comments(options));
  },
  'templates delete': async ({ services, arg }) => {
    const name = required(arg, 'template name');
    await deleteTemplate(services.templates, name);
    return { deleted: name };
  },
};
