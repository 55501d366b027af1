import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import type { DeliveryFilter, DeliveryView, ReplayResult } from '../../core/deliveries/delivery-replay.types.js';
import { projectRoot } from '../../core/platform/project-root.js';

// An isolated instance, compiled once, strict: a field the page names but the data lacks is a bug.
const template = Handlebars.create().compile(readFileSync(join(projectRoot, 'templates', 'admin', 'delivery-replay.hbs'), 'utf8'), {
  strict: true,
});

/** `2026-11-25 06:04:19`: UTC, to the second, as an operator reads it. */
const shown = (at: Date) => at.toISOString().slice(0, 19).replace('T', ' ');

const row = (view: Partial<DeliveryView> & { id: string }) => ({
  id: view.id,
  channel: view.channel ?? '',
  to: view.to ?? '',
  provider: view.provider ?? '',
  lastError: view.lastError ?? '',
  attempts: view.attempts ?? 0,
  failedAt: view.updatedAt ? shown(view.updatedAt) : '',
  notAfter: view.notAfter ? shown(view.notAfter) : '',
});

export interface ReplayPageData {
  title: string;
  error?: string;
  notice?: string;
  done?: string;
  csrf: string;
  /** The list step: filters as typed, rows, the next page's address. */
  listing?: { filter: { channel: string; provider: string; since: string }; rows: DeliveryView[]; next?: string };
  /** The preview (confirm: true) or the outcome of a replay. */
  result?: { replay: ReplayResult; confirm: boolean };
}

export interface RenderedAdminPage {
  html: string;
  /** Nothing loads and no script runs; one inline style by nonce; forms post only here. */
  csp: string;
}

export function renderReplayPage(data: ReplayPageData): RenderedAdminPage {
  const nonce = randomBytes(16).toString('base64');
  const filter = data.listing?.filter ?? { channel: '', provider: '', since: '' };
  const html = template({
    title: data.title,
    error: data.error ?? '',
    notice: data.notice ?? '',
    done: data.done ?? '',
    csrf: data.csrf,
    nonce,
    listing: data.listing !== undefined,
    filter,
    channels: ['SMS', 'EMAIL'].map((value) => ({ value, selected: filter.channel === value })),
    rows: (data.listing?.rows ?? []).map(row),
    next: data.listing?.next ?? '',
    result: data.result
      ? {
          queued: data.result.replay.queued.map(row),
          skipped: data.result.replay.skipped.map((s) => ({ ...row(s), reason: s.skip.reason })),
        }
      : false,
    confirm: data.result?.confirm ?? false,
    sendHeading: data.result?.replay.dryRun ? 'Would be sent again' : 'Queued to be sent again',
  });
  const csp = `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
  return { html, csp };
}

/** The filters as the form shows them again. */
export const filterAsTyped = (query: Record<string, unknown>) => {
  const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : '');
  return { channel: text('channel'), provider: text('provider'), since: text('since') };
};

export type { DeliveryFilter };
