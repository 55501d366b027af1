// TAIL_TRACE=1 for bench/otp-e2e: which of the project's slowest requests a garbage collection of
// the API (between the request and its answer) or of the dispatch worker (between the answer and
// the provider's receipt) overlapped, against the same count for requests around the median: a
// cause of the tail shows as overlaps far more common among the slowest than around the median.
import { existsSync, readFileSync } from 'node:fs';
import { percentile, round } from '../support/bench-kit.js';

export interface TimedRequest {
  scheduledAt: number;
  answeredAt: number;
  arrivedAt: number;
}

interface GcEvent {
  startMs: number;
  durationMs: number;
  kind: string;
}

export function readGcTimeline(file: string): GcEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as GcEvent);
}

/** Milliseconds of `events` inside [from, to], and the kinds that were. */
function overlap(events: GcEvent[], from: number, to: number): { ms: number; kinds: Set<string> } {
  let ms = 0;
  const kinds = new Set<string>();
  for (const e of events) {
    const inside = Math.min(to, e.startMs + e.durationMs) - Math.max(from, e.startMs);
    if (inside > 0) {
      ms += inside;
      kinds.add(e.kind);
    }
  }
  return { ms, kinds };
}

function describe(group: TimedRequest[], api: GcEvent[], worker: GcEvent[]) {
  const apiMs = group.map((r) => overlap(api, r.scheduledAt, r.answeredAt));
  const workerMs = group.map((r) => overlap(worker, r.answeredAt, r.arrivedAt));
  const share = (hits: boolean[]) => round((100 * hits.filter(Boolean).length) / Math.max(1, hits.length), 1);
  const withKind = (list: { kinds: Set<string> }[], kind: string) => share(list.map((o) => o.kinds.has(kind)));
  return {
    requests: group.length,
    totalMsP50: round(
      percentile(
        group.map((r) => r.arrivedAt - r.scheduledAt),
        50,
      ),
      1,
    ),
    apiGcOverlapPercent: share(apiMs.map((o) => o.ms > 0)),
    apiMajorOrIncrementalPercent: round(Math.max(withKind(apiMs, 'major'), withKind(apiMs, 'incremental')), 1),
    apiGcMsMean: round(apiMs.reduce((sum, o) => sum + o.ms, 0) / Math.max(1, group.length), 2),
    workerGcOverlapPercent: share(workerMs.map((o) => o.ms > 0)),
    workerGcMsMean: round(workerMs.reduce((sum, o) => sum + o.ms, 0) / Math.max(1, group.length), 2),
  };
}

/**
 * The slowest `slowShare` of the requests (by POST to receipt) and as many around the median,
 * each with how often an API or worker collection overlapped it and for how long on average.
 */
export function attributeTail(requests: TimedRequest[], api: GcEvent[], worker: GcEvent[], slowShare = 0.02) {
  const sorted = [...requests].sort((a, b) => a.arrivedAt - a.scheduledAt - (b.arrivedAt - b.scheduledAt));
  const n = Math.max(1, Math.round(sorted.length * slowShare));
  const mid = Math.floor(sorted.length / 2);
  return {
    slowest: describe(sorted.slice(-n), api, worker),
    aroundMedian: describe(sorted.slice(Math.max(0, mid - Math.floor(n / 2)), mid - Math.floor(n / 2) + n), api, worker),
    gcEvents: { api: api.length, worker: worker.length },
  };
}
