// Renders `.env.example` and the tables of docs/configuration.md from the settings table
// (core/platform/config/settings.ts). `npm run config:docs` writes them; a unit test compares.
import type { SettingDeclaration, SettingSection } from '../../core/platform/config/setting-declaration.js';
import { SETTINGS } from '../../core/platform/config/settings.js';
import { TOOL_VARIABLES } from './tool-variables.js';

export const REGENERATE = 'npm run config:docs';

/** The sections in the order of `.env.example`, with its heading for each. */
const SECTIONS: readonly { id: SettingSection; heading: string }[] = [
  { id: 'runtime', heading: 'Runtime' },
  { id: 'stores', heading: 'Data stores' },
  { id: 'secrets', heading: 'Secrets (required in production)' },
  { id: 'sign-in', heading: 'Tokens and sign-in lifetimes' },
  { id: 'workers', heading: 'Workers' },
  { id: 'push', heading: 'Web Push' },
  { id: 'providers', heading: 'Message providers (without credentials, messages go to the outbox: GET /admin/outbox)' },
  { id: 'limits', heading: 'Abuse limits (Redis)' },
  { id: 'sign-in-limits', heading: 'Sign-in pages' },
  { id: 'activation-limits', heading: 'Activation' },
  { id: 'enrollment', heading: 'Enrollment' },
];

const entries = Object.entries(SETTINGS as Record<string, SettingDeclaration>);

/** The accepted range, said once here rather than in every doc line. */
function range(d: SettingDeclaration): string {
  if (d.kind !== 'integer' || d.min === undefined) return '';
  return d.max === undefined ? ` (at least ${d.min})` : ` (${d.min} to ${d.max})`;
}

function defaultCell(d: SettingDeclaration): string {
  if (d.defaultText) return d.defaultText;
  if (d.default !== undefined && typeof d.default !== 'function') return `\`${String(d.default)}\``;
  if (d.required) return 'required';
  if (d.requiredToRun) return 'required (every process)';
  if (d.requiredInProduction) return 'required in production';
  return 'unset';
}

/** Markdown's column width as Prettier counts it (every character here is one column wide). */
const width = (text: string) => [...text].length;

function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [header, ...rows].map((row) => row.map((cell) => cell.replace(/\|/g, '\\|')));
  const widths = header.map((_, i) => Math.max(3, ...cells.map((row) => width(row[i] as string))));
  const line = (row: readonly string[]) =>
    `| ${row.map((cell, i) => cell + ' '.repeat((widths[i] as number) - width(cell))).join(' | ')} |`;
  return [line(cells[0] as string[]), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...cells.slice(1).map(line)].join('\n');
}

function sectionTable(section: string): string {
  if (section === 'tools') {
    return markdownTable(
      ['variable', 'read by', 'meaning'],
      TOOL_VARIABLES.map((v) => [v.names.map((n) => `\`${n}\``).join(', '), v.readBy, v.doc]),
    );
  }
  const rows = entries.filter(([, d]) => d.section === section).map(([key, d]) => [`\`${key}\``, defaultCell(d), d.doc + range(d)]);
  if (rows.length === 0) throw new Error(`docs/configuration.md names a settings section that does not exist: ${section}`);
  return markdownTable(['variable', 'default', 'meaning'], rows);
}

const BLOCK = /(<!-- settings table: ([a-z-]+) -->\n)[\s\S]*?(\n<!-- end of settings table -->)/g;

/** docs/configuration.md with every marked table replaced by the one the settings table gives. */
export function renderConfigurationDoc(markdown: string): string {
  return markdown.replace(BLOCK, (_all, open: string, section: string, close: string) => `${open}\n${sectionTable(section)}\n${close}`);
}

/** The sections docs/configuration.md has a table for; every section must have one. */
export function documentedSections(markdown: string): string[] {
  return [...markdown.matchAll(BLOCK)].map((match) => match[2] as string);
}

export const SETTING_SECTIONS = SECTIONS.map((s) => s.id);

/** Markdown links read as plain text in a comment: `[operations.md](operations.md#x)` becomes `docs/operations.md`. */
function plain(doc: string): string {
  return doc.replace(/\[([^\]]+)\]\(([^)#]+)(#[^)]*)?\)/g, (_all, label: string, target: string) =>
    label.endsWith('.md') ? `docs/${target}` : label,
  );
}

function comment(text: string): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.split(' ')) {
    if (line.length + word.length + 1 > 100 && line !== '#') {
      lines.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  return [...lines, line];
}

/** `.env.example`: every variable, its doc line above it, the example or default as its value. */
export function renderEnvExample(): string {
  const out = [
    `# Every variable svc-identity reads, generated from core/platform/config/settings.ts by \`${REGENERATE}\``,
    '# (edit the table there). An empty value counts as unset. `npm start` fills the secrets and local',
    '# services for you; production must set every secret explicitly (the process refuses to start otherwise).',
  ];
  for (const { id, heading } of SECTIONS) {
    out.push('', `# --- ${heading} ---`);
    for (const [key, d] of entries.filter(([, e]) => e.section === id)) {
      const fallback = d.default !== undefined && typeof d.default !== 'function' ? String(d.default) : '';
      const extra = d.defaultText && !d.required ? `; default ${d.defaultText}` : '';
      out.push(...comment(plain(d.doc + range(d)) + extra), `${key}=${d.example ?? fallback}`);
    }
  }
  out.push('', '# --- Local runs only (read by npm start, not by the service) ---');
  for (const v of TOOL_VARIABLES.filter((t) => t.example !== undefined)) {
    out.push(...comment(plain(v.doc)), `${v.names[0] as string}=${v.example as string}`);
  }
  return out.join('\n') + '\n';
}
