import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { projectRoot } from '../../core/platform/project-root.js';

// The repository's documents and comments state rules themselves: they never send the reader to
// a decision number, a numbered section of a contract, or a file outside the repository.
const CITATIONS: { what: string; pattern: RegExp }[] = [
  { what: 'decision number', pattern: /(?<![A-Za-z0-9_$.+=])D\d{1,2}(?![A-Za-z0-9_])/ },
  { what: 'numbered spec section', pattern: /\bspec(?:ification)?(?:'s)?\s+(?:section\s+)?\d/i },
  { what: 'external decisions document', pattern: /\bDECISIONS\b/ },
  { what: 'external service spec', pattern: /SERVICE-SPEC/ },
  { what: 'external design document', pattern: /\bDESIGN\.md\b/ },
  { what: 'file outside the repository', pattern: /\.\.\/shared\b|\/work\/shared\b/ },
];

// Third-party files kept verbatim, and this file, which has to spell the patterns out.
const EXEMPT = [/^package-lock\.json$/, /^test\/provider-specs\//, /^test\/unit\/docs-stand-alone\.test\.ts$/];

/** Every citation in `text`, as `<path>:<line>: <what>: <line text>`. */
export function findCitations(path: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    for (const { what, pattern } of CITATIONS) {
      if (pattern.test(line)) found.push(`${path}:${index + 1}: ${what}: ${line.trim().slice(0, 160)}`);
    }
  });
  return found;
}

function trackedTextFiles(): { path: string; text: string }[] {
  const paths = execFileSync('git', ['ls-files', '-z'], { cwd: projectRoot, encoding: 'utf8' }).split('\0').filter(Boolean);
  return paths
    .filter((path) => !EXEMPT.some((rule) => rule.test(path)))
    .flatMap((path) => {
      let content: Buffer;
      try {
        content = readFileSync(join(projectRoot, path));
      } catch {
        return []; // deleted in the work tree but still in the index
      }
      return content.includes(0) ? [] : [{ path, text: content.toString('utf8') }];
    });
}

describe('documents stand alone', () => {
  test('when a line cites a decision, a spec section or a file outside the repository, then it is found', () => {
    for (const line of [
      'per D14, the body',
      '(DECISIONS D2)',
      'D16-D18',
      'see spec 2.3',
      "Spec 7.2's 500 row",
      'DESIGN.md error model',
      '../shared/provider-specs',
      'SERVICE-SPEC.md',
    ]) {
      expect(findCitations('x', line)).not.toEqual([]);
    }
    for (const line of [
      'hashSpec SHA_512',
      'const D1_TIMESTAMP = 1',
      'otpSpecs[0].length',
      'ADD1 x',
      'base64 ab+D12/cd',
      'the design notes',
      'docs/design.md',
    ]) {
      expect(findCitations('x', line)).toEqual([]);
    }
  });

  test('when README.md and docs/ link to files, then every linked file is in the repository', () => {
    const markdown = trackedTextFiles().filter((file) => /^(README\.md|docs\/[^/]+\.md)$/.test(file.path));
    expect(markdown.length).toBeGreaterThan(5);
    const broken = markdown.flatMap((file) =>
      [...file.text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1] ?? '')
        .filter((target) => !/^[a-z]+:/.test(target))
        .filter((target) => !existsSync(join(projectRoot, dirname(file.path), target)))
        .map((target) => `${file.path} -> ${target}`),
    );
    expect(broken).toEqual([]);
  });

  test('when every tracked text file is read, then none cites a decision, a spec section or a file outside the repository', () => {
    const files = trackedTextFiles();
    expect(files.map((file) => file.path)).toContain('README.md');
    expect(files.flatMap((file) => findCitations(file.path, file.text))).toEqual([]);
  });
});
