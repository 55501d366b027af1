import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../core/platform/project-root.js';
import { readProcfile } from '../../../scripts/procfile.js';

// Operators run one process per Procfile line: each must name a compiled entry that exists and
// Node flags that this Node accepts (a misspelt flag stops the process at start).
const parsed = readProcfile();

describe('Procfile', () => {
  test('when read, then it has one line per role: web, dispatch, enrollment, notifications', () => {
    expect(parsed.map((p) => p.type)).toEqual(['web', 'dispatch', 'enrollment', 'notifications']);
  });

  test.each(parsed)('when the $type line is read, then it runs node on a compiled entry whose source exists', ({ program, entry }) => {
    expect(program).toBe('node');
    expect(entry).toMatch(/^dist\/.+\.js$/);
    expect(existsSync(join(projectRoot, entry.replace(/^dist\//, '').replace(/\.js$/, '.ts')))).toBe(true);
  });

  test.each(parsed)('when node is started with the $type line flags, then it accepts them', ({ flags }) => {
    const run = spawnSync(process.execPath, [...flags, '-e', 'process.exit(0)'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
