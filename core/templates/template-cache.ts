import type { Connection } from 'mongoose';
import { createConnectionTtlCache } from '../platform/db/connection-ttl-cache.js';
import type { MessageTemplate } from './template.types.js';
import { createTemplatesRepository } from './templates.repository.js';

/** How long a template read is reused; an edit made in another process shows within this. */
export const TEMPLATE_CACHE_TTL_MS = 5000;

const cache = createConnectionTtlCache<MessageTemplate | undefined>(TEMPLATE_CACHE_TTL_MS, (connection, name) =>
  createTemplatesRepository(connection).findTemplate(name),
);

/**
 * Templates are read on every OTP request and every delivery but change rarely: keep each read
 * for a few seconds per process. Edits through this process's admin API are seen at once.
 */
export function findTemplateCached(connection: Connection, name: string, now = Date.now()): Promise<MessageTemplate | undefined> {
  return cache.get(connection, name, now);
}

export function forgetCachedTemplate(connection: Connection, name: string): void {
  cache.forget(connection, name);
}
