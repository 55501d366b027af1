// Loaded into every role of a soak with `node --import` (DRILL_MEMORY_PROBE=1): every 10 s it
// appends the process's memory split to DRILL_MEMORY_DIR/<entry file>-<pid>.jsonl, so a soak can
// tell the JavaScript heap (per V8 space) from what lives outside it (code, buffers, malloc).
import { appendFileSync, mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';

const dir = process.env.DRILL_MEMORY_DIR;
if (dir) {
  mkdirSync(dir, { recursive: true });
  const entry = process.argv[1] ?? 'node';
  const file = join(dir, `${basename(dirname(entry))}-${basename(entry, '.js')}-${process.pid}.jsonl`);
  const mb = (bytes: number) => Math.round(bytes / 10485.76) / 100;
  const write = () => {
    const usage = process.memoryUsage();
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, mb(s.space_size)]));
    const line = {
      atMs: Date.now(),
      rss: mb(usage.rss),
      heapTotal: mb(usage.heapTotal),
      heapUsed: mb(usage.heapUsed),
      external: mb(usage.external),
      arrayBuffers: mb(usage.arrayBuffers),
      spaces,
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  // unref: the probe must never keep a role alive that is shutting down.
  setInterval(write, 10_000).unref();
}
