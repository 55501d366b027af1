/**
 * The scopes an enterprise token grants now: those it was issued with that its client still has.
 * A scope removed from a client is taken from its existing tokens (the bearer check and
 * introspection both answer by this); one added comes with the client's next token.
 */
export function currentTokenScopes(tokenScope: unknown, clientScopes: readonly string[]): string[] {
  if (typeof tokenScope !== 'string') return [];
  return tokenScope.split(' ').filter((scope) => scope !== '' && clientScopes.includes(scope));
}
