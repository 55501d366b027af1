import { ENTERPRISE_ID_RE } from '../platform/tenancy/enterprise-id.js';

/**
 * The format of a user id, as the JSON Schemas give it (common.ids.json): 1 to 64 characters of
 * A-Z a-z 0-9 . _ @ -, the enterprise ids' format (neither has a `:`, which user keys rely on).
 * For ids that arrive outside a schema-checked body (paths, forms, cursors).
 */
export const USER_ID_RE: RegExp = ENTERPRISE_ID_RE;
