import { createTtlCache } from '../platform/ttl-cache.js';
import type { MessageTemplate } from './template.types.js';
import type { TemplatesRepository } from './templates.repository.js';

/** How long a template read is reused; an edit made in another process shows within this. */
export const TEMPLATE_CACHE_TTL_MS = 5000;

/**
 * Templates are read on every OTP request and every delivery but change rarely: each process keeps
 * each read for a few seconds (one cache, built at its composition root). Edits through this
 * process's admin API are seen at once.
 */
export interface TemplateCache {
  find(name: string, now?: number): Promise<MessageTemplate | undefined>;
  forget(name: string): void;
  /** A read past the cache (kept for the next ones): for a use that the cached copy failed. */
  reread(name: string): Promise<MessageTemplate | undefined>;
}

export function createTemplateCache(templates: Pick<TemplatesRepository, 'findTemplate'>): TemplateCache {
  const cache = createTtlCache<MessageTemplate | undefined>(TEMPLATE_CACHE_TTL_MS, (name) => templates.findTemplate(name), {
    // Requests may name templates that do not exist: those misses never push out real templates.
    isMiss: (template) => template === undefined,
  });
  return {
    find: (name, now) => cache.get(name, now),
    forget: (name) => cache.forget(name),
    reread: (name) => {
      cache.forget(name);
      return cache.get(name);
    },
  };
}
