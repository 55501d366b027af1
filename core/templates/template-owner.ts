/**
 * Whether a template may carry a message for an enterprise: its own templates and the shared ones,
 * never another enterprise's. A template another enterprise owns is answered exactly as a name
 * that does not exist, so its name, branding and wording stay that enterprise's.
 */
export function templateServes(template: { enterpriseId?: string }, enterpriseId: string): boolean {
  return template.enterpriseId === undefined || template.enterpriseId === enterpriseId;
}
