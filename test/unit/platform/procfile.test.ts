import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../core/project-root.js';

// Operators run one process per Procfile line: each must name a compiled entry that exists and
// Node flags that this Node accepts (a misspelt flag stops the process at start).
const lines = readFileSync(join(projectRoot, 'Procfile'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '');

const parsed = lines.map((line) => {
  const [role, command] = [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()];
  const words = command.split(/\s+/);
  return { role, program: words[0], flags: words.slice(1, -1), entry: words[words.length - 1] };
});

describe('Procfile', () => {
  test('when read, then it has one line per role: web, dispatch, enrollment, notifications', () => {
    expect(parsed.map((p) => p.role)).toEqual(['web', 'dispatch', 'enrollment', 'notifications']);
  });

  test.each(parsed)('when the $role line is read, then it runs node on a compiled entry whose source exists', ({ program, entry }) => {
    expect(program).toBe('node');
    expect(entry).toMatch(/^dist\/.+\.js$/);
    expect(existsSync(join(projectRoot, entry.replace(/^dist\//, '').replace(/\.js$/, '.ts')))).toBe(true);
  });

  test.each(parsed)('when node is started with the $role line flags, then it accepts them', ({ flags }) => {
    const run = spawnSync(process.execPath, [...flags, '-e', 'process.exit(0)'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
