// Loaded into a benchmarked process with `node --import` (GC_TIMELINE_FILE set): appends each of
// its garbage collections to GC_TIMELINE_FILE as one JSON line with its wall-clock start (epoch
// ms, the clock the load generator and the provider stub stamp requests with), its duration and
// its kind, so a benchmark can tell which slow requests a collection overlapped.
import { appendFileSync } from 'node:fs';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';

const file = process.env.GC_TIMELINE_FILE;
const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
if (file) {
  new PerformanceObserver((list) => {
    const lines = list.getEntries().map((entry) => {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind ?? -1;
      return JSON.stringify({
        startMs: performance.timeOrigin + entry.startTime,
        durationMs: entry.duration,
        kind: KINDS[kind] ?? String(kind),
      });
    });
    if (lines.length > 0) appendFileSync(file, `${lines.join('\n')}\n`);
  }).observe({ entryTypes: ['gc'] });
}
