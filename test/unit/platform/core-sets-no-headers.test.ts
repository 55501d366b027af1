import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConflictError, UnavailableError } from '../../../core/platform/errors/app-error.js';
import { projectRoot } from '../../../core/platform/project-root.js';

const coreDir = join(projectRoot, 'core');

/** Each core/ file's code without its comments (comments may name headers when they explain). */
function coreSources(): { file: string; code: string }[] {
  return readdirSync(coreDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((file) => ({
      file,
      code: readFileSync(join(coreDir, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/(^|[^:'"`])\/\/.*$/gm, '$1'),
    }));
}

/**
 * The error edge is api/ alone (api/errors/http-error-mapping.ts): core raises domain errors and
 * returns domain values; which status, which headers (Retry-After, RateLimit, Location) and which
 * body answer them is decided there.
 */
describe('core sets no headers', () => {
  const rules: { name: string; pattern: RegExp }[] = [
    {
      name: 'a response header set in an object literal',
      pattern: /['"](Retry-After|RateLimit|RateLimit-Policy|Location|WWW-Authenticate)['"]\s*:/,
    },
    { name: 'headers given to an error', pattern: /new \w*Error\([^;]*?\bheaders\s*:/s },
    { name: 'a header set on a response', pattern: /\.(setHeader|location)\(|\.set\(\s*['"]/ },
    { name: 'a Location path returned', pattern: /\blocation\s*:\s*`\// },
    { name: 'an HTTP status given to an error', pattern: /new \w*Error\([^)]*?\b[45]\d\d\s*,/ },
  ];

  test.each(rules)('when core/ is scanned for $name, then none is found', ({ pattern }) => {
    const offenders = coreSources()
      .filter(({ code }) => pattern.test(code))
      .map(({ file }) => file);
    expect(offenders).toEqual([]);
  });

  test('when a domain error is made, then it has no status nor headers to give (only the edge has them)', () => {
    // @ts-expect-error the domain errors take no headers option
    const conflict = new ConflictError('x', { headers: { 'Retry-After': '1' } });
    expect(conflict).not.toHaveProperty('headers');
    expect(conflict).not.toHaveProperty('status');
    expect(new UnavailableError('down', { retryAfterSeconds: 5 }).retryAfterSeconds).toBe(5);
  });
});
