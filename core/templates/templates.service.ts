import type { ActivityRepository } from '../activity/activity.repository.js';
import { drawOwedEntry } from '../activity/owed-entries.js';
import type { Logger } from '../platform/logger/logger.js';
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors/app-error.js';
import type { TemplateCache } from './template-cache.js';
import { validateTemplateSyntax } from './template-renderer.js';
import { loadTemplateFiles } from './template-files.loader.js';
import type { TemplatesRepository } from './templates.repository.js';
import type { MessageTemplate, TemplateContent, TemplateSummary } from './template.types.js';

/** What the administration of templates works on, built once at a composition root and handed down. */
export interface TemplateStores {
  templates: TemplatesRepository;
  activity: Pick<ActivityRepository, 'appendOnce'>;
  /** This process's template reads, forgotten after an edit so that it applies here at once. */
  cache: Pick<TemplateCache, 'forget'>;
  /** Where an activity entry left to the sweep is logged. */
  logger: Pick<Logger, 'warn'>;
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

/*
 * Each change stores the activity entry it owes in its own write, and the entry is written to the
 * record right after (owing-collection.ts). The answer does not wait on the record: a change
 * stored is answered as done, and an entry the record refused is written by the template's next
 * change or by the enrollment worker's sweep, once, with the change's time.
 */

/** Creates a template (recorded in the activity record with the operator's `comments`). */
export async function createTemplate(stores: TemplateStores, content: TemplateContent, comments?: string): Promise<MessageTemplate> {
  checkContent(content);
  const owed = drawOwedEntry('template.created', { type: 'admin' }, new Date(), comments);
  const created = await stores.templates.insertTemplate(content, 'admin', owed);
  if (!created) throw new ConflictError(`Template ${content.name} already exists`);
  stores.cache.forget(content.name);
  await stores.templates.owedActivity.settleAfterChange(stores, created.name);
  return created;
}

export async function updateTemplate(
  stores: TemplateStores,
  name: string,
  content: Omit<TemplateContent, 'name' | 'enterpriseId'>,
  comments?: string,
): Promise<MessageTemplate> {
  checkContent(content);
  const owed = drawOwedEntry('template.updated', { type: 'admin' }, new Date(), comments);
  const updated = await stores.templates.replaceTemplateContent(name, content, owed);
  if (!updated) throw new NotFoundError('Template not found');
  stores.cache.forget(name);
  await stores.templates.owedActivity.settleAfterChange(stores, name);
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
 * The template is gone for every read at once; its document goes once its entry is written.
 */
export async function deleteTemplate(stores: TemplateStores, name: string): Promise<void> {
  if (isSeededDefault(name))
    throw new ConflictError(`Template ${name} is a default template the service needs; update it instead of deleting it`);
  const owed = drawOwedEntry('template.deleted', { type: 'admin' }, new Date());
  const deleted = await stores.templates.markTemplateDeleted(name, owed);
  if (deleted) stores.cache.forget(name);
  // Deleting again finishes what an earlier deletion left owed (its entry, the document).
  await stores.templates.owedActivity.settleAfterChange(stores, name);
  if (!deleted) throw new NotFoundError('Template not found');
}
