import type Provider from 'oidc-provider';

/** What the authorization server tells about the interaction a page belongs to. */
export interface InteractionDetails {
  uid: string;
  exp: number;
  prompt: { name: string; details: Record<string, unknown> };
  params: Record<string, unknown>;
  session?: { accountId?: string };
  grantId?: string;
}

/** Grants what the consent prompt found missing; undefined when the sign-in is gone. */
export async function grantConsent(provider: Provider, interaction: InteractionDetails, clientId: string): Promise<string | undefined> {
  const accountId = interaction.session?.accountId;
  if (!accountId) return undefined;
  const grant = interaction.grantId ? await provider.Grant.find(interaction.grantId) : new provider.Grant({ accountId, clientId });
  if (!grant) return undefined;
  const details = interaction.prompt.details;
  const oidcScopes = (details.missingOIDCScope as string[] | undefined) ?? [];
  if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
  const claims = (details.missingOIDCClaims as string[] | undefined) ?? [];
  if (claims.length > 0) grant.addOIDCClaims(claims);
  for (const [indicator, scopes] of Object.entries((details.missingResourceScopes as Record<string, string[]> | undefined) ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  return grant.save();
}

/** The scopes the consent page asks for (scope-labels.ts gives the words the person reads). */
export function scopesAsked(interaction: InteractionDetails): string[] {
  const oidc = (interaction.prompt.details.missingOIDCScope as string[] | undefined) ?? [];
  const resource = Object.values((interaction.prompt.details.missingResourceScopes as Record<string, string[]> | undefined) ?? {}).flat();
  return [...new Set([...oidc, ...resource])];
}
