import type { IdempotencyClaim } from '../idempotency/idempotent-requests.js';
import type { ActivityRepository } from '../activity/activity.repository.js';
import { drawOwedEntry } from '../activity/owed-entries.js';
import type { Logger } from '../platform/logger/logger.js';
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors/app-error.js';
import type { TemplateCache } from './template-cache.js';
import { validateTemplateSyntax } from './template-renderer.js';
import { loadTemplateFiles } from './template-files.loader.js';
import type { TemplatesRepository } from './templates.repository.js';
import type { TemplateOwner } from './template-owner.js';
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

/*
 * The admin names a template by its name and owner: an enterprise's own, or (no owner) the
 * shared one. The send path reads through the cache instead, for an enterprise.
 */

/** One owner's template by name. */
export function findTemplate(stores: TemplateStores, name: string, owner?: TemplateOwner): Promise<MessageTemplate | undefined> {
  return stores.templates.findTemplate(name, owner);
}

/** Every owner's templates, or one enterprise's own (`ownedBy`). */
export function listTemplates(stores: TemplateStores, ownedBy?: string): Promise<MessageTemplate[]> {
  return stores.templates.listTemplates(ownedBy);
}

/** As listTemplates, without the HTML, which may be long (read one template for it). */
export function listTemplateSummaries(stores: TemplateStores, ownedBy?: string): Promise<TemplateSummary[]> {
  return stores.templates.listTemplatesWithoutHtml(ownedBy);
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

/**
 * Creates a template (recorded in the activity record with the operator's `comments`). With an
 * Idempotency-Key claim, the template records it: a retry resuming a request that died after
 * creating it answers that template instead of 409 "exists".
 */
export async function createTemplate(
  stores: TemplateStores,
  content: TemplateContent,
  comments?: string,
  claim?: IdempotencyClaim,
): Promise<MessageTemplate> {
  checkContent(content);
  if (claim?.resumed) {
    const done = await stores.templates.findTemplateCreatedBy(content.name, content.enterpriseId, claim.id);
    if (done) {
      await stores.templates.owedActivity.settleAfterChange(stores, { name: done.name, owner: content.enterpriseId });
      return done;
    }
  }
  const owed = drawOwedEntry('template.created', { type: 'admin' }, new Date(), comments);
  const created = await stores.templates.insertTemplate(content, 'admin', owed, claim?.id);
  if (!created) throw new ConflictError(`Template ${content.name} already exists`);
  stores.cache.forget(content.name, content.enterpriseId);
  await stores.templates.owedActivity.settleAfterChange(stores, { name: created.name, owner: content.enterpriseId });
  return created;
}

export async function updateTemplate(
  stores: TemplateStores,
  name: string,
  owner: TemplateOwner,
  content: Omit<TemplateContent, 'name' | 'enterpriseId'>,
  comments?: string,
): Promise<MessageTemplate> {
  checkContent(content);
  const owed = drawOwedEntry('template.updated', { type: 'admin' }, new Date(), comments);
  const updated = await stores.templates.replaceTemplateContent(name, owner, content, owed);
  if (!updated) throw new NotFoundError('Template not found');
  stores.cache.forget(name, owner);
  await stores.templates.owedActivity.settleAfterChange(stores, { name, owner });
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
 * An enterprise's own template of a default's name goes: its messages use the shared one again.
 * The template is gone for every read at once; its document goes once its entry is written.
 */
export async function deleteTemplate(stores: TemplateStores, name: string, owner?: TemplateOwner): Promise<void> {
  if (owner === undefined && isSeededDefault(name))
    throw new ConflictError(`Template ${name} is a default template the service needs; update it instead of deleting it`);
  const owed = drawOwedEntry('template.deleted', { type: 'admin' }, new Date());
  const deleted = await stores.templates.markTemplateDeleted(name, owner, owed);
  if (deleted) stores.cache.forget(name, owner);
  // Deleting again finishes what an earlier deletion left owed (its entry, the document).
  await stores.templates.owedActivity.settleAfterChange(stores, { name, owner });
  if (!deleted) throw new NotFoundError('Template not found');
}
