// Where a process's time went, from a V8 CPU profile (`node --cpu-prof`, BENCH_CPU_PROF_DIR):
// self time bottom-up by function, and by component (oidc-provider, Koa and the packages it
// answers with, jose and node:crypto, Node's HTTP, net and streams, the service's own code by
// folder, logging, metrics, the main thread's GC). Shares are of the samples taken while the
// process was not idle: V8 samples on a timer, so a sample after the process waited for a core
// lands where it resumed (docs/benchmarks.md "Authorization server: tokens" says how to read them).
// Usage: node dist/bench/support/cpu-profile-breakdown.js <file.cpuprofile> [top functions, default 40]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

/** Packages that run only as part of Koa's request handling (the provider's app is a Koa app). */
const KOA_HELPERS = new Set([
  'delegates',
  'type-is',
  'on-finished',
  'ee-first',
  'vary',
  'mime-types',
  'media-typer',
  'content-type',
  'statuses',
  'http-errors',
  'only',
  'http-assert',
  'cookies',
  'keygrip',
  'accepts',
  'negotiator',
  'fresh',
  'encodeurl',
  'escape-html',
  'destroy',
  'content-disposition',
]);

/** The component a function belongs to, by where its code lives. */
export function componentOf(url: string, functionName: string): string {
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(program)') return 'V8/native (program)';
  if (url === '') return `native: ${functionName || '(anonymous)'}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) {
    if (pkg === 'oidc-provider') return 'oidc-provider';
    if (pkg === 'koa' || pkg.startsWith('koa-') || pkg.startsWith('@koa/') || KOA_HELPERS.has(pkg)) return 'Koa';
    if (pkg === 'jose') return 'jose/crypto';
    if (pkg === 'pino' || pkg.startsWith('pino-') || pkg === 'sonic-boom' || pkg === 'fast-redact') return 'logging';
    if (pkg === 'prom-client' || pkg === 'tdigest' || pkg === 'bintrees') return 'metrics';
    if (['mongodb', 'mongoose', 'bson', 'mquery', 'kareem'].includes(pkg)) return 'MongoDB client';
    if (['ioredis', '@ioredis/commands', 'redis-parser', 'bullmq'].includes(pkg)) return 'Redis client';
    return `package: ${pkg}`;
  }
  if (url.startsWith('node:')) {
    const mod = url.slice('node:'.length);
    if (/crypto/.test(mod)) return 'jose/crypto';
    if (
      /^(_http|http|internal\/http|net|internal\/net|stream|internal\/streams|internal\/stream_base|events|internal\/event|internal\/timers|timers)/.test(
        mod,
      )
    )
      return 'Node http/net/streams/events';
    if (/async_hooks|internal\/async|internal\/process\/task_queues|internal\/process\/promises/.test(mod)) return 'Node async/promises';
    return `Node other: ${mod}`;
  }
  const ours = /\/dist\/((?:api|core|workers)\/(?:[^/]+\/)?)/.exec(url)?.[1];
  if (ours) {
    if (/logger/.test(url)) return 'logging';
    if (/metrics/.test(url)) return 'metrics';
    return `ours: ${ours}`;
  }
  return `other: ${url}`;
}

function main(): void {
  const [file, topArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: cpu-profile-breakdown <file.cpuprofile> [top]');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const samplesOf = new Map<number, number>();
  for (const id of profile.samples) samplesOf.set(id, (samplesOf.get(id) ?? 0) + 1);
  const fn = new Map<string, number>();
  const comp = new Map<string, number>();
  let busy = 0;
  for (const [id, samples] of samplesOf) {
    const { functionName, url, lineNumber } = byId.get(id)?.callFrame ?? { functionName: '?', url: '', lineNumber: 0 };
    const component = componentOf(url, functionName);
    if (component === 'idle') continue;
    busy += samples;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${lineNumber + 1} [${component}]`;
    fn.set(key, (fn.get(key) ?? 0) + samples);
    comp.set(component, (comp.get(component) ?? 0) + samples);
  }
  const pct = (samples: number) => `${((samples * 100) / busy).toFixed(1).padStart(5)} %`;
  console.log(`samples while not idle: ${busy}\n\nby component:`);
  for (const [name, samples] of [...comp].sort((a, b) => b[1] - a[1])) console.log(`${pct(samples)}  ${name}`);
  console.log(`\nbottom-up self time, top ${topArg ?? 40}:`);
  for (const [name, samples] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 40))) console.log(`${pct(samples)}  ${name}`);
}

main();
