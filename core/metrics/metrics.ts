import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueRegistry } from '../queues/queue-registry.js';

export interface Metrics {
  registry: Registry;
  httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
}

const JOB_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;

/** A registry per app instance (not prom-client's global one), so tests can build many apps. */
export function createMetrics(queues: QueueRegistry): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  new Gauge({
    name: 'queue_jobs',
    help: 'BullMQ jobs per queue and state, read at scrape time',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
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
  return { registry, httpRequestDuration };
}
