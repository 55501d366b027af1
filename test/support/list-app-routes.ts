import type { Express } from 'express';

interface Layer {
  name: string;
  rawPath?: string;
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/** Every (method, OpenAPI-style path) an Express 5 app serves through its routers. */
export function listAppRoutes(app: Express): { method: string; path: string }[] {
  const routes: { method: string; path: string }[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const path = `${prefix}${layer.route.path}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        for (const method of Object.keys(layer.route.methods)) if (method !== '_all') routes.push({ method, path });
      } else if (layer.handle.stack) {
        const mount = layer.rawPath && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, `${prefix}${mount}`);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return routes;
}
