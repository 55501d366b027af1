import type { Request } from 'express';
import { DEFAULT_ENTERPRISE_ID, ENTERPRISE_ID_RE } from '../../core/platform/tenancy/enterprise-id.js';
import { ValidationError } from '../../core/platform/errors/app-error.js';

/** Admin routes name the enterprise in the query (`?enterpriseId=`); absent is `default`. */
export function enterpriseQuery(req: Request): string {
  return optionalEnterpriseQuery(req) ?? DEFAULT_ENTERPRISE_ID;
}

/** The enterprise named in the query, if any: for what may belong to no enterprise (a shared template). */
export function optionalEnterpriseQuery(req: Request): string | undefined {
  const value = req.query.enterpriseId;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !ENTERPRISE_ID_RE.test(value))
    throw new ValidationError('[Invalid field enterpriseId]', { error: 'Invalid data.' });
  return value;
}
