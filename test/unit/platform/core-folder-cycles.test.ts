import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { projectRoot } from '../../../core/platform/project-root.js';

const coreDir = join(projectRoot, 'core');

/** The unit a core/ file belongs to: its top folder, or platform/<folder> for the platform's parts. */
function unitOf(pathInCore: string): string | undefined {
  const parts = pathInCore.split(sep);
  if (parts.length < 2 || parts[0] === '..') return undefined;
  return parts[0] === 'platform' && parts.length > 2 ? `platform/${parts[1]}` : parts[0];
}

/** Which other core/ units each core/ unit imports from (static and type imports alike). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const files = readdirSync(coreDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  for (const file of files) {
    const unit = unitOf(file);
    if (!unit) continue;
    const targets = graph.get(unit) ?? new Set<string>();
    graph.set(unit, targets);
    const text = readFileSync(join(coreDir, file), 'utf8');
    for (const [, specifier] of text.matchAll(/from '(\.\.?\/[^']+)'/g)) {
      const target = unitOf(relative(coreDir, resolve(coreDir, dirname(file), specifier as string)));
      if (target && target !== unit) targets.add(target);
    }
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each as the path that closes it. */
function cyclesOf(graph: Map<string, Set<string>>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const walk = (node: string, path: string[]) => {
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), node, next]);
      else if (!state.has(next)) walk(next, [...path, node]);
    }
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) walk(node, []);
  return cycles;
}

describe('core/ folders import each other without cycles', () => {
  test('when the imports between core/ folders are followed, then no folder reaches back to itself', () => {
    const graph = folderGraph();
    expect(graph.size).toBeGreaterThan(10);
    expect(graph.get('otp')?.has('deliveries')).toBe(true); // the walk sees real edges
    expect(graph.get('platform/lifecycle')?.has('platform/queues')).toBe(true); // and the platform's parts
    expect(cyclesOf(graph).map((cycle) => cycle.join(' → '))).toEqual([]);
  });

  test('when a cycle exists, then the walk names it', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
    ]);
    expect(cyclesOf(graph).map((cycle) => cycle.join(' → '))).toEqual(['a → b → c → a']);
  });
});
