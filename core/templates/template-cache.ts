import { createTtlCache } from '../platform/ttl-cache.js';
import { ownedTemplateKey, parseOwnedTemplateKey, templateFor, type TemplateOwner } from './template-owner.js';
import type { MessageTemplate } from './template.types.js';
import type { TemplatesRepository } from './templates.repository.js';

/** How long a template read is reused; an edit made in another process shows within this. */
export const TEMPLATE_CACHE_TTL_MS = 5000;

/**
 * Templates are read on every OTP request and every delivery but change rarely: each process keeps
 * each read for a few seconds (one cache, built at its composition root). Edits through this
 * process's admin API are seen at once.
 *
 * Reads are for an enterprise (its own template of the name, else the shared one); the cache keeps
 * each owner's template apart (its keys carry the owner), so an edit forgets exactly one entry.
 */
export interface TemplateCache {
  /** The template of this name that carries the enterprise's messages: its own, else the shared one. */
  find(name: string, enterpriseId: string, now?: number): Promise<MessageTemplate | undefined>;
  /** Forgets one owner's template of the name (absent owner: the shared one). */
  forget(name: string, owner: TemplateOwner): void;
  /** A read past the cache (kept for the next ones): for a use that the cached copy failed. */
  reread(name: string, enterpriseId: string): Promise<MessageTemplate | undefined>;
}

export function createTemplateCache(templates: Pick<TemplatesRepository, 'findTemplate'>): TemplateCache {
  const cache = createTtlCache<MessageTemplate | undefined>(
    TEMPLATE_CACHE_TTL_MS,
    (key) => {
      const { name, owner } = parseOwnedTemplateKey(key);
      return templates.findTemplate(name, owner);
    },
    // Requests may name templates that do not exist: those misses never push out real templates.
    { isMiss: (template) => template === undefined },
  );
  const forget = (name: string, owner: TemplateOwner) => cache.forget(ownedTemplateKey(name, owner));
  return {
    find: (name, enterpriseId, now) => templateFor((n, owner) => cache.get(ownedTemplateKey(n, owner), now), name, enterpriseId),
    forget,
    reread: (name, enterpriseId) => {
      forget(name, enterpriseId);
      forget(name, undefined);
      return templateFor((n, owner) => cache.get(ownedTemplateKey(n, owner)), name, enterpriseId);
    },
  };
}
