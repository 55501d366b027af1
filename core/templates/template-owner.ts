import { scopeFilter } from '../platform/tenancy/tenant-filter.js';

/**
 * Who a template belongs to: one enterprise (its `enterpriseId`), or, without one, every
 * enterprise (the shared set, as the seeded defaults are). Names are unique per owner, so an
 * enterprise may have its own `otp_sms` beside the shared one.
 */
export type TemplateOwner = string | undefined;

/** The MongoDB filter of one owner's templates: an enterprise's own, or the shared ones. */
export function ownerFilter(owner: TemplateOwner): Record<string, unknown> {
  return owner === undefined ? { enterpriseId: { $exists: false } } : scopeFilter({ enterpriseId: owner });
}

/** `{ enterpriseId }` of an enterprise's own template, nothing for a shared one (list filters, activity entries). */
export function ownerFields(owner: TemplateOwner): { enterpriseId?: string } {
  return owner === undefined ? {} : scopeFilter({ enterpriseId: owner });
}

/** The owner of a stored template document. */
export function storedOwner(doc: { enterpriseId?: unknown }): TemplateOwner {
  return typeof doc.enterpriseId === 'string' ? doc.enterpriseId : undefined;
}

/**
 * A cache key for one owner's template of a name. JSON, not a separator: a request may name any
 * string, and no name of one owner may read as another owner's key.
 */
export function ownedTemplateKey(name: string, owner: TemplateOwner): string {
  return JSON.stringify([owner ?? null, name]);
}

/** The name and owner a key of ownedTemplateKey stands for. */
export function parseOwnedTemplateKey(key: string): { name: string; owner: TemplateOwner } {
  const [owner, name] = JSON.parse(key) as [string | null, string];
  return { name, owner: owner ?? undefined };
}

/**
 * The template of a name that carries an enterprise's messages: its own first, then the shared
 * one, never another enterprise's. Another enterprise's template is thus answered exactly as a name
 * that does not exist, so its name, branding and wording stay that enterprise's.
 */
export async function templateFor<T>(
  find: (name: string, owner: TemplateOwner) => Promise<T | undefined>,
  name: string,
  enterpriseId: string,
): Promise<T | undefined> {
  return (await find(name, enterpriseId)) ?? (await find(name, undefined));
}
