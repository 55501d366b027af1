import { Router } from 'express';
import {
  createTemplate,
  deleteTemplate,
  findTemplate,
  listTemplateSummaries,
  updateTemplate,
  type TemplateStores,
} from '../../core/templates/templates.service.js';
import type { TemplateContent } from '../../core/templates/template.types.js';
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import type { IdempotentRequests } from '../../core/idempotency/idempotent-requests.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { invalidFieldError, validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { optionalEnterpriseQuery } from './enterprise-query.js';
import { ADMIN_CALLER, idempotencyKeyOf, sendIdempotentAnswer } from './idempotency-key-header.js';

export function adminTemplatesRoutes(ctx: ServiceContext, templates: TemplateStores, idempotent: IdempotentRequests): Router {
  const router = Router();
  const admin = requireAdminToken(ctx);
  // A template may hold 200 000 characters of HTML and 20 000 of text (its schema), escaped in JSON.
  const json = jsonBody(ctx, { limit: '1024kb' });
  const validate = (schemaId: string) => validateBody(schemaId, { toError: invalidFieldError() });

  // A template is named by its name and owner: `?enterpriseId=` for an enterprise's own, none for
  // the shared one. The list shows every owner's templates, or with `?enterpriseId=` that one's own.

  // The list leaves the HTML out: with up to 200 000 characters each it would make the answer
  // grow with every template. GET /admin/templates/{name} shows it.
  router.get('/admin/templates', admin, async (req, res) => {
    res.json(await listTemplateSummaries(templates, optionalEnterpriseQuery(req)));
  });

  router.get('/admin/templates/:name', admin, async (req, res) => {
    const template = await findTemplate(templates, req.params.name as string, optionalEnterpriseQuery(req));
    if (!template) throw new NotFoundError('Template not found');
    res.json(template);
  });

  // With an Idempotency-Key a retry of a creation that was done gets its 201 again, not 409 "exists".
  // The key is kept in the template's enterprise (a shared template's: the default enterprise's).
  router.post('/admin/templates', admin, ...json, validate('admin-templates.create.json'), async (req, res) => {
    const { comments, ...content } = req.body as TemplateContent & { comments?: string };
    const scope = { enterpriseId: content.enterpriseId ?? DEFAULT_ENTERPRISE_ID, callerId: ADMIN_CALLER, route: 'POST /admin/templates' };
    const answer = await idempotent.run({ scope, key: idempotencyKeyOf(req), request: req.body }, async (claim) => {
      const created = await createTemplate(templates, content, comments, claim);
      const owner = created.enterpriseId === undefined ? '' : `?enterpriseId=${encodeURIComponent(created.enterpriseId)}`;
      return { status: 201, location: `/admin/templates/${encodeURIComponent(created.name)}${owner}`, body: created };
    });
    sendIdempotentAnswer(res, answer);
  });

  router.put('/admin/templates/:name', admin, ...json, validate('admin-templates.update.json'), async (req, res) => {
    const { comments, ...content } = req.body as Omit<TemplateContent, 'name' | 'enterpriseId'> & { comments?: string };
    res.json(await updateTemplate(templates, req.params.name as string, optionalEnterpriseQuery(req), content, comments));
  });

  router.delete('/admin/templates/:name', admin, async (req, res) => {
    await deleteTemplate(templates, req.params.name as string, optionalEnterpriseQuery(req));
    res.status(204).end();
  });

  return router;
}
