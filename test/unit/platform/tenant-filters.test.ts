import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../core/platform/project-root.js';
import { anyOfUsersFilter, clientFilter, scopeFilter, userFilter } from '../../../core/platform/tenancy/tenant-filter.js';

// Tenant filters come from core/platform/tenancy/tenant-filter.ts only: a repository that wrote
// `{ enterpriseId: x }` itself could pass the wrong id, or spread a caller's object and widen it.
const REPOSITORIES = readdirSync(join(projectRoot, 'core'), { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.repository.ts'))
  .map((path) => join('core', path));

// Allowed: schema fields (`{ type: String }`), index keys (`1`), type declarations (`string`).
const WRITTEN_VALUE = /\benterpriseId\??\s*:(?!\s*(?:\{\s*type\s*:|-?1\b|string\b))/;
const SHORTHAND = /[{,]\s*enterpriseId\s*[,}]/;

/** Lines of `text` that build an enterpriseId filter by hand, as `<line>: <text>`. */
export function handWrittenTenantFilters(text: string): string[] {
  return text
    .split('\n')
    .map((line, index) => ({ line: line.trim(), number: index + 1 }))
    .filter(({ line }) => !line.startsWith('//') && !line.startsWith('*') && !line.startsWith('/*'))
    .filter(({ line }) => WRITTEN_VALUE.test(line) || SHORTHAND.test(line))
    .map(({ line, number }) => `${number}: ${line}`);
}

describe('tenant filters', () => {
  test('the filters copy only the named ids', () => {
    const ref = { enterpriseId: 'acme', userId: 'ana', clientId: 'c1', status: 'ACTIVE' };
    expect(scopeFilter(ref)).toEqual({ enterpriseId: 'acme' });
    expect(userFilter(ref)).toEqual({ enterpriseId: 'acme', userId: 'ana' });
    expect(clientFilter(ref)).toEqual({ enterpriseId: 'acme', clientId: 'c1' });
    expect(anyOfUsersFilter([ref, { enterpriseId: 'acme', userId: 'bo' }])).toEqual({
      enterpriseId: { $in: ['acme'] },
      userId: { $in: ['ana', 'bo'] },
    });
  });

  test('the scan finds a hand-written filter', () => {
    expect(handWrittenTenantFilters('x.find({ enterpriseId: ref.enterpriseId, userId });')).toHaveLength(1);
    expect(handWrittenTenantFilters('x.find({ enterpriseId, credentialId });')).toHaveLength(1);
    expect(handWrittenTenantFilters('  enterpriseId: { type: String, required: true },\n  enterpriseId?: string;')).toEqual([]);
  });

  test.each(REPOSITORIES)('%s builds tenant filters only through the tenancy module', (path) => {
    expect(handWrittenTenantFilters(readFileSync(join(projectRoot, path), 'utf8'))).toEqual([]);
  });
});
