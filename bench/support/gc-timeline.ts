// Loaded into a benchmarked process with `node --import` (GC_TIMELINE_FILE set): appends each of
// its garbage collections to GC_TIMELINE_FILE as one JSON line with its wall-clock start (epoch
// ms, the clock the load generator and the provider stub stamp requests with), its duration and
// its kind, so a benchmark can tell which slow requests a collection overlapped. It also records
// the event loop's stalls (kind "stall"): a 1 ms timer that ran more than 2 ms late was held by work
// on the loop, a collection's or any other (the timer's own wake-ups cost some CPU: a diagnostic).
import { appendFileSync, readFileSync } from 'node:fs';
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
  // cpuMs: the process's CPU time during the stall, every thread's (V8's collector and compiler
  // threads too), so it can exceed the stall. runMs and waitMs: the main thread's own time on a core
  // and waiting in the run queue for one (Linux schedstat): a stall mostly waited is the machine's
  // cores taken by other processes, one mostly run is work on the loop.
  if (process.env.GC_TIMELINE_STALLS !== '0') recordStalls(file);
}

function recordStalls(file: string): void {
  let due = performance.now() + 1;
  let cpuBefore = process.cpuUsage();
  let schedBefore = mainThreadSchedule();
  const stalls: string[] = [];
  setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage();
    const sched = mainThreadSchedule();
    if (now - due > 2) {
      const cpuMs = (cpu.user - cpuBefore.user + cpu.system - cpuBefore.system) / 1000;
      const runMs = (sched.runNs - schedBefore.runNs) / 1e6;
      const waitMs = (sched.waitNs - schedBefore.waitNs) / 1e6;
      // monoUs: the start on the monotonic clock in microseconds, the clock of a V8 CPU profile's
      // timestamps (`--cpu-prof`), so a profile's samples can be cut at the stalls.
      const monoUs = Number(process.hrtime.bigint() / 1000n) - (now - due) * 1000;
      stalls.push(
        JSON.stringify({ startMs: performance.timeOrigin + due, durationMs: now - due, cpuMs, runMs, waitMs, monoUs, kind: 'stall' }),
      );
    }
    cpuBefore = cpu;
    schedBefore = sched;
    due = now + 1;
  }, 1).unref();
  setInterval(() => {
    if (stalls.length > 0) appendFileSync(file, `${stalls.splice(0).join('\n')}\n`);
  }, 1000).unref();
}

/** The calling thread's time on a core and waiting for one, in ns (zeros where /proc has no schedstat). */
function mainThreadSchedule(): { runNs: number; waitNs: number } {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ');
    return { runNs: Number(run), waitNs: Number(wait) };
  } catch {
    return { runNs: 0, waitNs: 0 };
  }
}
