import type { Connection } from 'mongoose';
import type { MessageTemplate } from './template.types.js';
import { findTemplate } from './templates.repository.js';

/** How long a template read is reused; an edit made in another process shows within this. */
export const TEMPLATE_CACHE_TTL_MS = 5000;

interface Entry {
  readAt: number;
  template: Promise<MessageTemplate | undefined>;
}

const caches = new WeakMap<Connection, Map<string, Entry>>();

function cacheOf(connection: Connection): Map<string, Entry> {
  let cache = caches.get(connection);
  if (!cache) {
    cache = new Map();
    caches.set(connection, cache);
  }
  return cache;
}

/**
 * Templates are read on every OTP request and every delivery but change rarely: keep each read
 * for a few seconds per process. Edits through this process's admin API are seen at once.
 */
export function findTemplateCached(connection: Connection, name: string, ttlMs = TEMPLATE_CACHE_TTL_MS, now = Date.now()): Promise<MessageTemplate | undefined> {
  const cache = cacheOf(connection);
  const entry = cache.get(name);
  if (entry && now - entry.readAt < ttlMs) return entry.template;
  const template = findTemplate(connection, name);
  cache.set(name, { readAt: now, template });
  // A failed read is not remembered.
  template.catch(() => cache.delete(name));
  return template;
}

export function forgetCachedTemplate(connection: Connection, name: string): void {
  caches.get(connection)?.delete(name);
}
