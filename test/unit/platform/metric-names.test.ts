import { businessRegistry } from '../../../core/platform/metrics/business-metrics.js';

// Prometheus naming: snake_case with the service prefix, counters end in _total, durations are
// histograms in seconds, label names are snake_case too.
describe('business metric names', () => {
  test('when the business metrics are listed, then each follows the Prometheus conventions for its type', async () => {
    const metrics = await businessRegistry.getMetricsAsJSON();
    expect(metrics.length).toBeGreaterThanOrEqual(7);
    const problems: string[] = [];
    for (const metric of metrics) {
      const { name, help } = metric;
      const type = String(metric.type);
      if (!/^svc_[a-z][a-z0-9_]*[a-z0-9]$/.test(name)) problems.push(`${name}: not snake_case with the svc_ prefix`);
      if (type === 'counter' && !name.endsWith('_total')) problems.push(`${name}: a counter must end in _total`);
      if (type !== 'counter' && name.endsWith('_total')) problems.push(`${name}: only counters end in _total`);
      if (type === 'histogram' && !name.endsWith('_seconds')) problems.push(`${name}: durations are histograms in seconds`);
      if (help.length < 20) problems.push(`${name}: help text says too little`);
    }
    expect(problems).toEqual([]);
    const labels = (await businessRegistry.metrics()).match(/\{[^}]*\}/g) ?? [];
    for (const set of labels) for (const [, label] of set.matchAll(/([A-Za-z_]+)="/g)) expect(label).toMatch(/^[a-z][a-z_]*$/);
  });
});
