/** Error responses shared by route documentation entries. */
export const commonErrors = {
  '400': { description: 'Malformed request', schema: 'common.error.json' },
  '401': { description: 'Missing or invalid credentials', schema: 'common.bearer-error.json' },
  '422': { description: 'Validation failed', schema: 'common.error.json' },
};

/** Refusals of every admin route: the admin token is checked before anything else. */
export const adminTokenErrors = {
  '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' },
  '503': { description: 'ADMIN_TOKEN is not set', schema: 'common.error.json' },
};

/** The 415 of admin routes that read a JSON body. */
export const notJsonError = { description: 'Content type is not JSON', schema: 'common.error.json' };
