import type { RouteDoc } from './route-docs.types.js';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The request paths an OpenAPI path template stands for (`{x}` is one segment; a trailing slash is allowed). */
export function pathPattern(template: string): RegExp {
  return new RegExp(
    `^${template
      .split(/\{[^}]+\}/)
      .map(escapeRegExp)
      .join('[^/]+')}/?$`,
  );
}

/**
 * Finds the documented template of a request path, a literal path before a template (as OpenAPI
 * resolves them); undefined for undocumented paths.
 */
export function createTemplateMatcher(docs: readonly RouteDoc[]): (path: string) => string | undefined {
  const templates = [...new Set(docs.map((doc) => doc.path))]
    .map((template) => ({ template, pattern: pathPattern(template), params: (template.match(/\{/g) ?? []).length }))
    .sort((a, b) => a.params - b.params);
  return (path) => templates.find((t) => t.pattern.test(path))?.template;
}
