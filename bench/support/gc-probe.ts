// Loaded into a benchmarked process with `node --expose-gc --import` (GC_PROBE_FILE set): on each
// SIGUSR2 it collects garbage (twice, so objects freed by finalizers of the first go too) and
// appends the process's memory after it to GC_PROBE_FILE, one JSON line per signal. A benchmark
// reads memory per open connection from the difference between two such lines.
import { appendFileSync } from 'node:fs';

const file = process.env.GC_PROBE_FILE;
const collect = (globalThis as { gc?: () => void }).gc;
if (file && collect) {
  let seq = 0;
  process.on('SIGUSR2', () => {
    collect();
    collect();
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    appendFileSync(file, `${JSON.stringify({ seq: ++seq, rss, heapUsed, heapTotal, external, arrayBuffers })}\n`);
  });
}
