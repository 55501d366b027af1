// TAIL_TRACE=1 for bench/otp-e2e: which of the project's slowest requests a garbage collection or
// an event-loop stall of the API (between the request and its answer) or of the dispatch worker
// (between the answer and the provider's receipt) overlapped, against the same count for requests around the median: a
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
  /** Stalls: the process's CPU time during it. */
  cpuMs?: number;
}

export function readGcTimeline(file: string): GcEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as GcEvent);
}

/** Milliseconds of `events` inside [from, to], the kinds that were, and the CPU the overlapping stalls used. */
function overlap(events: GcEvent[], from: number, to: number): { ms: number; kinds: Set<string>; eventMs: number; cpuMs: number } {
  let ms = 0;
  let eventMs = 0;
  let cpuMs = 0;
  const kinds = new Set<string>();
  for (const e of events) {
    const inside = Math.min(to, e.startMs + e.durationMs) - Math.max(from, e.startMs);
    if (inside > 0) {
      ms += inside;
      eventMs += e.durationMs;
      cpuMs += e.cpuMs ?? 0;
      kinds.add(e.kind);
    }
  }
  return { ms, kinds, eventMs, cpuMs };
}

function describe(group: TimedRequest[], api: GcEvent[], worker: GcEvent[]) {
  const share = (hits: boolean[]) => round((100 * hits.filter(Boolean).length) / Math.max(1, hits.length), 1);
  const mean = (list: { ms: number }[]) => round(list.reduce((sum, o) => sum + o.ms, 0) / Math.max(1, group.length), 2);
  // Of the stalls' time, how much the process spent on a core (the rest it waited for one).
  const busy = (list: { eventMs: number; cpuMs: number }[]) => {
    const total = list.reduce((sum, o) => sum + o.eventMs, 0);
    return total > 0 ? round((100 * list.reduce((sum, o) => sum + o.cpuMs, 0)) / total, 1) : 0;
  };
  const collections = (events: GcEvent[]) => events.filter((e) => e.kind !== 'stall');
  const stalls = (events: GcEvent[]) => events.filter((e) => e.kind === 'stall');
  // The API holds a request until its answer; the dispatch worker from the answer to the provider.
  const apiGc = group.map((r) => overlap(collections(api), r.scheduledAt, r.answeredAt));
  const workerGc = group.map((r) => overlap(collections(worker), r.answeredAt, r.arrivedAt));
  const apiStall = group.map((r) => overlap(stalls(api), r.scheduledAt, r.answeredAt));
  const workerStall = group.map((r) => overlap(stalls(worker), r.answeredAt, r.arrivedAt));
  return {
    requests: group.length,
    totalMsP50: round(
      percentile(
        group.map((r) => r.arrivedAt - r.scheduledAt),
        50,
      ),
      1,
    ),
    apiGcOverlapPercent: share(apiGc.map((o) => o.ms > 0)),
    apiMajorOrIncrementalPercent: share(apiGc.map((o) => o.kinds.has('major') || o.kinds.has('incremental'))),
    apiGcMsMean: mean(apiGc),
    workerGcOverlapPercent: share(workerGc.map((o) => o.ms > 0)),
    workerGcMsMean: mean(workerGc),
    // Stalls: the loop held more than 2 ms by anything (collections included).
    apiStallOverlapPercent: share(apiStall.map((o) => o.ms > 0)),
    apiStallMsMean: mean(apiStall),
    apiStallBusyPercent: busy(apiStall),
    workerStallOverlapPercent: share(workerStall.map((o) => o.ms > 0)),
    workerStallMsMean: mean(workerStall),
    workerStallBusyPercent: busy(workerStall),
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
    events: {
      api: { collections: api.filter((e) => e.kind !== 'stall').length, stalls: api.filter((e) => e.kind === 'stall').length },
      worker: { collections: worker.filter((e) => e.kind !== 'stall').length, stalls: worker.filter((e) => e.kind === 'stall').length },
    },
  };
}
