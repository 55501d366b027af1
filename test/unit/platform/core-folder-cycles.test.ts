import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../core/project-root.js';

const coreDir = join(projectRoot, 'core');

/** Which other core/ folders each core/ folder imports from (static and type imports alike). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const folder of readdirSync(coreDir, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    const targets = new Set<string>();
    for (const file of readdirSync(join(coreDir, folder.name), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(coreDir, folder.name, file), 'utf8');
      for (const [, target] of text.matchAll(/from '\.\.\/([a-z-]+)\//g)) if (target !== folder.name) targets.add(target as string);
    }
    graph.set(folder.name, targets);
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
