/** Error responses shared by route documentation entries. */
export const commonErrors = {
  '400': { description: 'Malformed request', schema: 'common.error.json' },
  '401': { description: 'Missing or invalid credentials', schema: 'common.bearer-error.json' },
  '422': { description: 'Validation failed', schema: 'common.error.json' },
};
