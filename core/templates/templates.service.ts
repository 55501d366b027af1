import type { Connection } from 'mongoose';
import { createActivityRepository } from '../activity/activity.repository.js';
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors/app-error.js';
import { forgetCachedTemplate } from './template-cache.js';
import { validateTemplateSyntax } from './template-renderer.js';
import { loadTemplateFiles } from './template-files.loader.js';
import { createTemplatesRepository } from './templates.repository.js';
import type { MessageTemplate, TemplateContent } from './template.types.js';

/** One template by name (the admin's view; the send path reads through the cache). */
export function findTemplate(connection: Connection, name: string): Promise<MessageTemplate | undefined> {
  return createTemplatesRepository(connection).findTemplate(name);
}

export function listTemplates(connection: Connection): Promise<MessageTemplate[]> {
  return createTemplatesRepository(connection).listTemplates();
}

/** E-mail needs a subject; SMS has neither subject nor HTML. Then the HTML must compile. */
function checkContent(content: Omit<TemplateContent, 'name'>): void {
  if (content.channel === 'EMAIL' && content.subject === undefined) throw new ValidationError('[Invalid field subject]');
  if (content.channel === 'SMS' && content.subject !== undefined) throw new ValidationError('[Invalid field subject]');
  if (content.channel === 'SMS' && content.html !== undefined) throw new ValidationError('[Invalid field html]');
  validateTemplateSyntax({ name: '', ...content });
}

/** Creates a template (recorded in the activity record with the operator's `comments`). */
export async function createTemplate(connection: Connection, content: TemplateContent, comments?: string): Promise<MessageTemplate> {
  checkContent(content);
  const created = await createTemplatesRepository(connection).insertTemplate(content, 'admin');
  if (!created) throw new ConflictError(`Template ${content.name} already exists`);
  forgetCachedTemplate(connection, content.name);
  await createActivityRepository(connection).append({ actor: { type: 'admin' }, action: 'template.created', templateName: created.name, comments });
  return created;
}

export async function updateTemplate(connection: Connection, name: string, content: Omit<TemplateContent, 'name'>, comments?: string): Promise<MessageTemplate> {
  checkContent(content);
  const updated = await createTemplatesRepository(connection).replaceTemplateContent(name, content);
  if (!updated) throw new NotFoundError('Template not found');
  forgetCachedTemplate(connection, name);
  await createActivityRepository(connection).append({ actor: { type: 'admin' }, action: 'template.updated', templateName: updated.name, comments });
  return updated;
}

let seededNames: Set<string> | undefined;

/** The defaults shipped in templates/: the service sends them itself (login, activation, OTP). */
function isSeededDefault(name: string): boolean {
  seededNames ??= new Set(loadTemplateFiles().map((template) => template.name));
  return seededNames.has(name);
}

/**
 * Deletes a template an admin created. The shipped defaults stay (409): the service's own messages
 * need them, and the next start would seed them again anyway; edit them with an update instead.
 */
export async function deleteTemplate(connection: Connection, name: string): Promise<void> {
  if (isSeededDefault(name)) throw new ConflictError(`Template ${name} is a default template the service needs; update it instead of deleting it`);
  if (!(await createTemplatesRepository(connection).removeTemplate(name))) throw new NotFoundError('Template not found');
  forgetCachedTemplate(connection, name);
  await createActivityRepository(connection).append({ actor: { type: 'admin' }, action: 'template.deleted', templateName: name });
}
