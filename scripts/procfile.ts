// The Procfile's process types, parsed once for everything that must run them the way operators
// do (the drills) or check them (tests): `type: [NAME=value ...] node [flags] entry`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../core/platform/project-root.js';

export interface ProcfileLine {
  /** The process type, e.g. `web`. */
  type: string;
  /** `NAME=value` settings before the program. */
  env: Record<string, string>;
  program: string;
  /** Everything between the program and the entry (Node flags). */
  flags: string[];
  /** The last word: the compiled entry, e.g. `dist/api/main.js`. */
  entry: string;
}

export function readProcfile(): ProcfileLine[] {
  return readFileSync(join(projectRoot, 'Procfile'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const words = line
        .slice(line.indexOf(':') + 1)
        .trim()
        .split(/\s+/);
      const env: Record<string, string> = {};
      while (words.length > 1 && /^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
        const [name, ...value] = (words.shift() ?? '').split('=');
        env[name as string] = value.join('=');
      }
      return {
        type: line.slice(0, line.indexOf(':')),
        env,
        program: words[0] ?? '',
        flags: words.slice(1, -1),
        entry: words[words.length - 1] ?? '',
      };
    });
}
