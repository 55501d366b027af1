import { adminRouteDocs } from './admin.route-docs.js';
import { authServerRouteDocs } from './auth-server.route-docs.js';
import { demoRouteDocs } from './demo.route-docs.js';
import { meRouteDocs } from './me.route-docs.js';
import { messagingRouteDocs } from './messaging.route-docs.js';
import { notificationsRouteDocs } from './notifications.route-docs.js';
import { operationsRouteDocs } from './operations.route-docs.js';
import { otpRouteDocs } from './otp.route-docs.js';
import { pushRouteDocs } from './push.route-docs.js';
import type { RouteDoc } from './route-docs.types.js';
import { usersRouteDocs } from './users.route-docs.js';

export type { RouteDoc };

/**
 * The catalog of documented operations, one file per feature. Request bodies point at schemas/
 * by `$id`; a test fails when the app serves a route that is not listed here.
 */
export const routeDocs: RouteDoc[] = [
  ...operationsRouteDocs,
  ...authServerRouteDocs,
  ...adminRouteDocs,
  ...messagingRouteDocs,
  ...otpRouteDocs,
  ...usersRouteDocs,
  ...meRouteDocs,
  ...notificationsRouteDocs,
  ...pushRouteDocs,
  ...demoRouteDocs,
];
