import type { ActivityRepository } from '../activity/activity.repository.js';
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors/app-error.js';
import type { TemplateCache } from './template-cache.js';
import { validateTemplateSyntax } from './template-renderer.js';
import { loadTemplateFiles } from './template-files.loader.js';
import type { TemplatesRepository } from './templates.repository.js';
import type { MessageTemplate, TemplateContent, TemplateSummary } from './template.types.js';

/** What the administration of templates works on, built once at a composition root and handed down. */
export interface TemplateStores {
  templates: TemplatesRepository;
  activity: Pick<ActivityRepository, 'append'>;
  /** This process's template reads, forgotten after an edit so that it applies here at once. */
  cache: Pick<TemplateCache, 'forget'>;
}

/** One template by name (the admin's view; the send path reads through the cache). */
export function findTemplate(stores: TemplateStores, name: string): Promise<MessageTemplate | undefined> {
  return stores.templates.findTemplate(name);
}

export function listTemplates(stores: TemplateStores): Promise<MessageTemplate[]> {
  return stores.templates.listTemplates();
}

/** Every template without its HTML, which may be long (read one template for it). */
export function listTemplateSummaries(stores: TemplateStores): Promise<TemplateSummary[]> {
  return stores.templates.listTemplatesWithoutHtml();
}

/** E-mail needs a subject; SMS has neither subject nor HTML. Then the HTML must compile. */
function checkContent(content: Omit<TemplateContent, 'name'>): void {
  if (content.channel === 'EMAIL' && content.subject === undefined) throw new ValidationError('[Invalid field subject]');
  if (content.channel === 'SMS' && content.subject !== undefined) throw new ValidationError('[Invalid field subject]');
  if (content.channel === 'SMS' && content.html !== undefined) throw new ValidationError('[Invalid field html]');
  validateTemplateSyntax({ name: '', ...content });
}

/** Creates a template (recorded in the activity record with the operator's `comments`). */
export async function createTemplate(stores: TemplateStores, content: TemplateContent, comments?: string): Promise<MessageTemplate> {
  checkContent(content);
  const created = await stores.templates.insertTemplate(content, 'admin');
  if (!created) throw new ConflictError(`Template ${content.name} already exists`);
  stores.cache.forget(content.name);
  await stores.activity.append({ actor: { type: 'admin' }, action: 'template.created', templateName: created.name, comments });
  return created;
}

export async function updateTemplate(
  stores: TemplateStores,
  name: string,
  content: Omit<TemplateContent, 'name'>,
  comments?: string,
): Promise<MessageTemplate> {
  checkContent(content);
  const updated = await stores.templates.replaceTemplateContent(name, content);
  if (!updated) throw new NotFoundError('Template not found');
  stores.cache.forget(name);
  await stores.activity.append({ actor: { type: 'admin' }, action: 'template.updated', templateName: updated.name, comments });
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
export async function deleteTemplate(stores: TemplateStores, name: string): Promise<void> {
  if (isSeededDefault(name))
    throw new ConflictError(`Template ${name} is a default template the service needs; update it instead of deleting it`);
  if (!(await stores.templates.removeTemplate(name))) throw new NotFoundError('Template not found');
  stores.cache.forget(name);
  await stores.activity.append({ actor: { type: 'admin' }, action: 'template.deleted', templateName: name });
}
