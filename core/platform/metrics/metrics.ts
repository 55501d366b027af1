import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueRegistry } from '../queues/queue-registry.js';
import type { RedisClient } from '../queues/redis-connection.js';
import { businessRegistry } from './business-metrics.js';
import { oldestWaitingSince } from './oldest-waiting-job.js';

/** Checks that a dependency answers (throws when it does not), run at scrape time. */
export type DependencyProbes = Record<'mongodb' | 'redis', () => Promise<void>>;

export interface Metrics {
  registry: Registry;
  httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
}

// 'prioritized': jobs queued with a BullMQ priority (dispatch fairness) wait there, not in 'waiting'.
const JOB_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed'] as const;

/**
 * A registry per app instance (not prom-client's global one), so tests can build many apps; the
 * process's business counters (business-metrics.ts) are exported with it.
 */
export function createMetrics(queues: QueueRegistry, redis: RedisClient, probes?: DependencyProbes): Metrics {
  const own = new Registry();
  collectDefaultMetrics({ register: own });
  const httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [own],
  });
  new Gauge({
    name: 'queue_jobs',
    help: 'BullMQ jobs per queue and state, read at scrape time',
    labelNames: ['queue', 'state'] as const,
    registers: [own],
    async collect() {
      this.reset();
      await Promise.all(
        Object.entries(queues).map(async ([name, queue]) => {
          try {
            const counts = await queue.getJobCounts(...JOB_STATES);
            for (const state of JOB_STATES) this.set({ queue: name, state }, counts[state] ?? 0);
          } catch {
            // Redis down: the gauge is left out for this queue; /readyz reports the outage.
          }
        }),
      );
    },
  });
  new Gauge({
    name: 'queue_oldest_waiting_age_seconds',
    help: 'Age of the oldest job waiting to be taken, per queue (0 when none waits), read at scrape time',
    labelNames: ['queue'] as const,
    registers: [own],
    async collect() {
      this.reset();
      const now = Date.now();
      await Promise.all(
        Object.entries(queues).map(async ([name, queue]) => {
          try {
            // Waiting jobs sit in two places: the wait list and, for jobs with a priority, the
            // prioritized set, where the oldest may be in any band (oldest-waiting-job.ts).
            const since = (await oldestWaitingSince(queue, redis)) ?? now;
            this.set({ queue: name }, Math.max(now - since, 0) / 1000);
          } catch {
            // Redis down: left out, as for queue_jobs.
          }
        }),
      );
    },
  });
  if (probes) {
    new Gauge({
      name: 'svc_dependency_up',
      help: 'Whether MongoDB and Redis answer this process (1) or not (0), checked at scrape time as /readyz does',
      labelNames: ['dependency'] as const,
      registers: [own],
      async collect() {
        await Promise.all(
          Object.entries(probes).map(async ([dependency, probe]) => {
            this.set(
              { dependency },
              await probe().then(
                () => 1,
                () => 0,
              ),
            );
          }),
        );
      },
    });
  }
  // Merged last: a merged registry holds the metrics its parts had at that moment.
  const registry = Registry.merge([own, businessRegistry]);
  return { registry, httpRequestDuration };
}
