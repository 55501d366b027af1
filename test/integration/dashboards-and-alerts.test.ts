import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { projectRoot } from '../../core/platform/project-root.js';
import { startTestService, type TestService } from '../support/test-service.js';

const run = promisify(execFile);
const rulesFile = join(projectRoot, 'deploy/prometheus/alerts.yml');
const rulesTestFile = join(projectRoot, 'deploy/prometheus/alerts.test.yml');
const dashboardFile = join(projectRoot, 'deploy/grafana/svc-identity.json');

// Words of PromQL that look like metric names but are not.
const PROMQL_WORDS = new Set([
  'sum', 'min', 'max', 'avg', 'count', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right',
  'and', 'or', 'unless', 'rate', 'irate', 'increase', 'deriv', 'histogram_quantile', 'offset', 'bool',
]); // prettier-ignore

/** The metric names a PromQL expression reads: label matchers, grouping lists, ranges and strings removed. */
export function metricNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)]
    .filter((m) => !PROMQL_WORDS.has(m[0]) && bare[m.index + m[0].length] !== '(')
    .map((m) => m[0]);
  return [...new Set(names)];
}

interface RuleFile {
  groups: { rules: { alert: string; expr: string }[] }[];
}
interface Dashboard {
  panels: { type: string; title: string; targets?: { expr: string }[] }[];
}

const rules = () => (parse(readFileSync(rulesFile, 'utf8')) as RuleFile).groups.flatMap((group) => group.rules);
const dashboardExprs = () =>
  (JSON.parse(readFileSync(dashboardFile, 'utf8')) as Dashboard).panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
  );

describe('Grafana dashboard and Prometheus alert rules', () => {
  let service: TestService;
  let exported: Set<string>;
  beforeAll(async () => {
    service = await startTestService('dashboards');
    const text = await (await fetch(`${service.url}/metrics`)).text();
    // `# TYPE name histogram` stands for name_bucket, name_sum and name_count too.
    exported = new Set(
      [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
        type === 'histogram'
          ? [name, `${name}_bucket`, `${name}_sum`, `${name}_count`]
          : type === 'summary'
            ? [name, `${name}_sum`, `${name}_count`]
            : [name],
      ) as string[],
    );
  });
  afterAll(async () => {
    await service.close();
  });

  test('when promtool checks the rules and runs their unit tests, then both pass', async () => {
    const check = await run('promtool', ['check', 'rules', rulesFile]);
    expect(check.stdout).toContain('SUCCESS: 15 rules found');
    const tests = await run('promtool', ['test', 'rules', rulesTestFile]);
    expect(tests.stdout).toContain('SUCCESS');
  });

  test("when promtool lints the service metrics, then it finds nothing to complain about but prom-client's own handle gauges", async () => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    const linted = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile('promtool', ['check', 'metrics'], (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      );
      child.stdin?.end(text);
    });
    // prom-client names three of its default gauges `nodejs_active_*_total`; every other series passes.
    const complaints = linted.output
      .split('\n')
      .filter((line) => line !== '' && !/^nodejs_active_(handles|requests|resources)_total /.test(line));
    expect(complaints).toEqual([]);
  });

  test('when an alert rule reads a series, then the service exports that series (or Prometheus makes it: up)', () => {
    const missing = rules().flatMap((rule) =>
      metricNamesOf(rule.expr)
        .filter((name) => name !== 'up' && !exported.has(name))
        .map((name) => `${rule.alert}: ${name}`),
    );
    expect(missing).toEqual([]);
    expect(rules().map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        'SvcIdentityQueueGrowing',
        'SvcIdentityOldestJobTooOld',
        'SvcIdentityProviderFailing',
        'SvcIdentityNotificationExpiryLag',
        'SvcIdentityDependencyDown',
        'SvcIdentityWorkerDown',
        'SvcIdentityNoWorkers',
      ]),
    );
  });

  test('when a dashboard panel queries a series, then the service exports that series', () => {
    const queries = dashboardExprs();
    expect(queries.length).toBeGreaterThan(15);
    const missing = queries.flatMap(({ panel, expr }) =>
      metricNamesOf(expr)
        .filter((name) => !exported.has(name))
        .map((name) => `${panel}: ${name}`),
    );
    expect(missing).toEqual([]);
  });

  test('when an expression is taken apart, then only its metric names remain', () => {
    expect(
      metricNamesOf(
        'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{status=~"5.."}[$__rate_interval]))) > 0.5',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(metricNamesOf('max by (queue) (queue_jobs{state="waiting"}) > 1000 and deriv(max by (queue) (queue_jobs)[10m:1m]) > 0')).toEqual(
      ['queue_jobs'],
    );
  });
});
