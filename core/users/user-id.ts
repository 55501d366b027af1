/**
 * The format of a user id, as the JSON Schemas give it (common.ids.json): 1 to 64 characters of
 * A-Z a-z 0-9 . _ @ -. For ids that arrive outside a schema-checked body (paths, forms, cursors).
 */
export const USER_ID_RE = /^[A-Za-z0-9._@-]{1,64}$/;
