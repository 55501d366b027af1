import type { Request } from 'express';
import { DEFAULT_ENTERPRISE_ID, ENTERPRISE_ID_RE } from '../../core/platform/tenancy/enterprise-id.js';
import { ValidationError } from '../../core/platform/errors/app-error.js';

/** Admin routes name the enterprise in the query (`?enterpriseId=`); absent is `default`. */
export function enterpriseQuery(req: Request): string {
  const value = req.query.enterpriseId;
  if (value === undefined) return DEFAULT_ENTERPRISE_ID;
  if (typeof value !== 'string' || !ENTERPRISE_ID_RE.test(value))
    throw new ValidationError('[Invalid field enterpriseId]', { error: 'Invalid data.' });
  return value;
}
