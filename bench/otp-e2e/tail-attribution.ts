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

export interface GcEvent {
  startMs: number;
  durationMs: number;
  kind: string;
  /** Stalls: the process's CPU time during it (all its threads). */
  cpuMs?: number;
  /** Stalls: the main thread's time waiting in the run queue for a core during it. */
  waitMs?: number;
}

/**
 * The JVM's collection pauses from its `-Xlog:gc:file=...:time` log: each pause's line is written
 * when it ends, stamped with the wall clock, and ends with its length
 * (`[2026-11-29T12:53:36.812+0000] GC(0) Pause Young (Allocation Failure) 100M->8M(365M) 25.039ms`).
 */
export function readJvmPauses(file: string): GcEvent[] {
  if (!existsSync(file)) return [];
  const pauses: GcEvent[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^\[(\S+?)([+-]\d{2})(\d{2})\] GC\(\d+\) Pause (\w+).* ([\d.]+)ms$/.exec(line);
    if (!m) continue;
    const endMs = Date.parse(`${m[1]}${m[2]}:${m[3]}`);
    const durationMs = Number(m[5]);
    pauses.push({ startMs: endMs - durationMs, durationMs, kind: m[4].toLowerCase() });
  }
  return pauses;
}

/** True when one of `events` overlaps [from, to]. */
export function overlapsAny(events: GcEvent[], from: number, to: number): boolean {
  return events.some((e) => e.startMs < to && e.startMs + e.durationMs > from);
}

export function readGcTimeline(file: string): GcEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as GcEvent);
}

/** Milliseconds of `events` inside [from, to], the kinds that were, and the CPU the overlapping stalls used. */
function overlap(
  events: GcEvent[],
  from: number,
  to: number,
): { ms: number; kinds: Set<string>; eventMs: number; cpuMs: number; waitMs: number } {
  let ms = 0;
  let eventMs = 0;
  let cpuMs = 0;
  let waitMs = 0;
  const kinds = new Set<string>();
  for (const e of events) {
    const inside = Math.min(to, e.startMs + e.durationMs) - Math.max(from, e.startMs);
    if (inside > 0) {
      ms += inside;
      eventMs += e.durationMs;
      cpuMs += e.cpuMs ?? 0;
      waitMs += e.waitMs ?? 0;
      kinds.add(e.kind);
    }
  }
  return { ms, kinds, eventMs, cpuMs, waitMs };
}

function describe(group: TimedRequest[], api: GcEvent[], worker: GcEvent[], mongo: GcEvent[]) {
  const share = (hits: boolean[]) => round((100 * hits.filter(Boolean).length) / Math.max(1, hits.length), 1);
  const mean = (list: { ms: number }[]) => round(list.reduce((sum, o) => sum + o.ms, 0) / Math.max(1, group.length), 2);
  // Of the stalls' time, how much the main thread waited in the run queue for a core (the machine's
  // cores held by other processes, not work on the loop), and how much CPU the whole process used
  // (every thread's: it can pass 100 %).
  const shareOfStalls = (list: { eventMs: number; cpuMs: number; waitMs: number }[], key: 'cpuMs' | 'waitMs') => {
    const total = list.reduce((sum, o) => sum + o.eventMs, 0);
    return total > 0 ? round((100 * list.reduce((sum, o) => sum + o[key], 0)) / total, 1) : 0;
  };
  const collections = (events: GcEvent[]) => events.filter((e) => e.kind !== 'stall');
  const stalls = (events: GcEvent[]) => events.filter((e) => e.kind === 'stall');
  // The API holds a request until its answer; the dispatch worker from the answer to the provider.
  const apiGc = group.map((r) => overlap(collections(api), r.scheduledAt, r.answeredAt));
  const workerGc = group.map((r) => overlap(collections(worker), r.answeredAt, r.arrivedAt));
  const apiStall = group.map((r) => overlap(stalls(api), r.scheduledAt, r.answeredAt));
  const workerStall = group.map((r) => overlap(stalls(worker), r.answeredAt, r.arrivedAt));
  // The store serves both halves of a request.
  const mongoPause = group.map((r) => overlap(mongo, r.scheduledAt, r.arrivedAt));
  const anyCollection = group.map((_, i) => apiGc[i].ms > 0 || workerGc[i].ms > 0 || mongoPause[i].ms > 0);
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
    mongoServerPauseOverlapPercent: share(mongoPause.map((o) => o.ms > 0)),
    mongoServerPauseMsMean: mean(mongoPause),
    anyCollectionOverlapPercent: share(anyCollection),
    // Slow requests come in runs: a request delayed by a pause delays those right behind it.
    episodes: episodes(group),
    // Stalls: the loop held more than 2 ms by anything (collections included).
    apiStallOverlapPercent: share(apiStall.map((o) => o.ms > 0)),
    apiStallMsMean: mean(apiStall),
    apiStallWaitingForCorePercent: shareOfStalls(apiStall, 'waitMs'),
    apiStallProcessCpuPercent: shareOfStalls(apiStall, 'cpuMs'),
    workerStallOverlapPercent: share(workerStall.map((o) => o.ms > 0)),
    workerStallMsMean: mean(workerStall),
    workerStallWaitingForCorePercent: shareOfStalls(workerStall, 'waitMs'),
    workerStallProcessCpuPercent: shareOfStalls(workerStall, 'cpuMs'),
  };
}

/** How many separate episodes the requests fall in: scheduled less than 100 ms apart is one episode. */
function episodes(group: TimedRequest[]): number {
  const starts = group.map((r) => r.scheduledAt).sort((a, b) => a - b);
  return starts.filter((at, i) => i === 0 || at - starts[i - 1] >= 100).length;
}

/**
 * The slowest `slowShare` of the requests (by POST to receipt) and as many around the median,
 * each with how often an API or worker collection, a pause of the MongoDB-wire server's JVM or a stall
 * overlapped it and for how long on average.
 */
export function attributeTail(requests: TimedRequest[], api: GcEvent[], worker: GcEvent[], mongo: GcEvent[], slowShare = 0.02) {
  const sorted = [...requests].sort((a, b) => a.arrivedAt - a.scheduledAt - (b.arrivedAt - b.scheduledAt));
  const n = Math.max(1, Math.round(sorted.length * slowShare));
  const mid = Math.floor(sorted.length / 2);
  return {
    slowest: describe(sorted.slice(-n), api, worker, mongo),
    aroundMedian: describe(sorted.slice(Math.max(0, mid - Math.floor(n / 2)), mid - Math.floor(n / 2) + n), api, worker, mongo),
    events: {
      api: { collections: api.filter((e) => e.kind !== 'stall').length, stalls: api.filter((e) => e.kind === 'stall').length },
      worker: { collections: worker.filter((e) => e.kind !== 'stall').length, stalls: worker.filter((e) => e.kind === 'stall').length },
      mongoServer: { pauses: mongo.length, pauseMsMax: round(Math.max(0, ...mongo.map((e) => e.durationMs)), 1) },
    },
  };
}
