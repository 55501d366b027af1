import type { Application } from 'express';

// Kept on the app (not the service context) because draining belongs to the listening server:
// tests and tools that build the app without a server never drain.
const DRAINING_CHECK = 'isDraining';

/** Tells the app's readiness route how to know that the server is draining. */
export function setDrainingCheck(app: Application, isDraining: () => boolean): void {
  app.locals[DRAINING_CHECK] = isDraining;
}

/** True once the server serving this app has started to drain (a shutdown is under way). */
export function isDraining(app: Application): boolean {
  const check = app.locals[DRAINING_CHECK] as (() => boolean) | undefined;
  return check?.() ?? false;
}
