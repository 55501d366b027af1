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

  // V8 runs a full collection instead of a scavenge whenever the old generation could not take in
  // everything the young one holds. Node 24's default semi-space grows to 64 MB on a machine with
  // this much memory, so an old generation bounded at 128 MB without a semi-space bound made the
  // API run about 1,200 full collections in one otp-e2e run (against about ten) and raised the
  // OTP path's p50 from 5 to 31-36 ms.
  test.each(parsed)(
    'when the $type line is read, then it bounds the old generation and the semi-space to an eighth of that or less',
    ({ flags }) => {
      const sizeOf = (name: string) => {
        const flag = flags.find((f) => f.startsWith(`--${name}=`));
        return flag === undefined ? undefined : Number(flag.slice(name.length + 3));
      };
      const oldSpace = sizeOf('max-old-space-size');
      const semiSpace = sizeOf('max-semi-space-size');
      expect(oldSpace).toBeGreaterThan(0);
      expect(semiSpace).toBeGreaterThan(0);
      expect((semiSpace ?? Infinity) * 8).toBeLessThanOrEqual(oldSpace ?? 0);
    },
  );
});
