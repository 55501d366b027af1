import { apiScopesOf, enterpriseOfClient, isFirstParty, toClientMetadata } from '../../../api/auth-server/oidc-adapter.js';
import { makeClientWithSecret } from '../../support/client-fixtures.js';

const base = makeClientWithSecret();

describe('client metadata for the authorization server', () => {
  test('when a confidential client has no redirect URI, then it only gets client_credentials and its enterprise scopes', () => {
    expect(toClientMetadata(base)).toMatchObject({
      grant_types: ['client_credentials'],
      response_types: [],
      scope: 'openid otp',
      token_endpoint_auth_method: 'client_secret_basic',
      api_scopes: ['otp'],
    });
  });

  test('when a confidential client has redirect URIs, then it also signs users in with refresh tokens and the user scopes', () => {
    const metadata = toClientMetadata({ ...base, redirectUris: ['https://a/cb'] });
    expect(metadata.grant_types).toEqual(['client_credentials', 'authorization_code', 'refresh_token']);
    expect(String(metadata.scope).split(' ').sort()).toEqual(['notifications', 'offline_access', 'openid', 'otp']);
  });

  test('when a client is public, then no secret, auth method none and no client_credentials', () => {
    const metadata = toClientMetadata({ ...base, isPublic: true, secretHash: null, redirectUris: ['https://a/cb'] });
    expect(metadata).toMatchObject({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });
    expect(metadata.client_secret).toBeUndefined();
  });

  test('when the provider hands the extra fields back, then first-party and API scopes read from them', () => {
    expect(isFirstParty({ first_party: false })).toBe(false);
    expect(isFirstParty({})).toBe(true);
    expect(apiScopesOf({ api_scopes: ['otp', 3] })).toEqual(['otp']);
    expect(apiScopesOf({})).toEqual([]);
  });

  test('when a client belongs to an enterprise, then its metadata carries it and sign-in reads it back', () => {
    expect(toClientMetadata(base).enterprise_id).toBe('acme');
    expect(enterpriseOfClient(toClientMetadata(base))).toBe('acme');
    expect(enterpriseOfClient({})).toBe('default');
  });
});
