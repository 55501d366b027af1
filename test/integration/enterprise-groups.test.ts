import { createClientWithToken } from '../support/auth-helpers.js';
import { adminRequest } from '../support/admin-requests.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { errorBody, sendJson, userBody } from '../support/users-helpers.js';

/** Groups that belong to one enterprise beside the shared ones: who may name them, and what a deletion counts. */
describe('groups of one enterprise', () => {
  let service: TestService;
  let acme: string;
  let globex: string;
  let initech: string;

  beforeAll(async () => {
    service = await startTestService('enterprise-groups');
    acme = (await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'grp-acme' })).accessToken;
    globex = (await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'grp-globex' })).accessToken;
    initech = (await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'grp-initech' })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  const admin = (method: string, path: string, body?: unknown) => adminRequest(service, method, path, body);
  const createGroup = async (body: Record<string, string>) => {
    const res = await admin('POST', '/admin/groups', body);
    expect(res.status).toBe(201);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const enroll = (token: string, userId: string, overrides: Record<string, unknown> = {}) =>
    sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, overrides));
  const patch = (token: string, userId: string, body: Record<string, unknown>) =>
    sendJson(`${service.url}/v1/users/${userId}`, 'PATCH', token, body);
  const missingGroup = (group: string, path: string) =>
    errorBody(409, 'Invalid data.', `The group name : ${group} does not exist in the system.`, path);
  const listed = async (token: string, group: string) => {
    const res = await fetch(`${service.url}/v1/users?group=${group}`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { userId: string }[] | { users: { userId: string }[] };
    return (Array.isArray(body) ? body : body.users).map((u) => u.userId).sort();
  };

  test('when two enterprises each create their own group of one name, then each is shown with its enterpriseId and description beside the shared one, and listed per owner', async () => {
    expect(await createGroup({ name: 'g-retail', description: 'Shared' })).toEqual({
      name: 'g-retail',
      description: 'Shared',
      createdAt: expect.any(String) as unknown,
    });
    expect(await createGroup({ name: 'g-retail', description: 'Acme retail', enterpriseId: 'grp-acme' })).toMatchObject({
      name: 'g-retail',
      description: 'Acme retail',
      enterpriseId: 'grp-acme',
    });
    await createGroup({ name: 'g-retail', description: 'Globex retail', enterpriseId: 'grp-globex' });
    const again = await admin('POST', '/admin/groups', { name: 'g-retail', enterpriseId: 'grp-acme' });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual(errorBody(409, 'Conflict', 'Group g-retail already exists', '/admin/groups'));

    expect(await (await admin('GET', '/admin/groups/g-retail?enterpriseId=grp-globex')).json()).toMatchObject({
      description: 'Globex retail',
      enterpriseId: 'grp-globex',
    });
    const shared = (await (await admin('GET', '/admin/groups/g-retail')).json()) as Record<string, unknown>;
    expect(shared).toMatchObject({ description: 'Shared' });
    expect(shared).not.toHaveProperty('enterpriseId');
    expect((await admin('GET', '/admin/groups/g-retail?enterpriseId=grp-initech')).status).toBe(404);
    const bad = await admin('GET', '/admin/groups/g-retail?enterpriseId=bad%20id!');
    expect(bad.status).toBe(422);

    const acmeList = (await (await admin('GET', '/admin/groups?enterpriseId=grp-acme')).json()) as Record<string, unknown>[];
    expect(acmeList.map((g) => [g.name, g.enterpriseId])).toEqual([['g-retail', 'grp-acme']]);
    // Without ?enterpriseId=, every group: the shared one and each enterprise's own.
    const everyList = (await (await admin('GET', '/admin/groups')).json()) as Record<string, unknown>[];
    expect(everyList.filter((g) => g.name === 'g-retail').map((g) => [g.description, g.enterpriseId])).toEqual([
      ['Shared', undefined],
      ['Acme retail', 'grp-acme'],
      ['Globex retail', 'grp-globex'],
    ]);
  });

  test('when a group is created, then Location names it with its owner, as for clients and templates, and reads it back', async () => {
    const shared = await admin('POST', '/admin/groups', { name: 'loc retail' });
    expect(shared.status).toBe(201);
    expect(shared.headers.get('location')).toBe('/admin/groups/loc%20retail');
    const own = await admin('POST', '/admin/groups', { name: 'loc retail', enterpriseId: 'grp-loc' });
    expect(own.headers.get('location')).toBe('/admin/groups/loc%20retail?enterpriseId=grp-loc');
    expect(await (await admin('GET', own.headers.get('location') as string)).json()).toMatchObject({
      name: 'loc retail',
      enterpriseId: 'grp-loc',
    });
  });

  test('when groups of one name belong to several owners and a page ends among them, then following the links reads every group once, in order', async () => {
    await createGroup({ name: 'span-a', enterpriseId: 'grp-span-1' });
    await createGroup({ name: 'span-a' });
    await createGroup({ name: 'span-a', enterpriseId: 'grp-span-2' });
    await createGroup({ name: 'span-b', enterpriseId: 'grp-span-1' });
    const everyGroup = ((await (await admin('GET', '/admin/groups')).json()) as Record<string, unknown>[]).map(
      (g) => `${String(g.name)}/${String(g.enterpriseId ?? '')}`,
    );
    const span = everyGroup.filter((g) => g.startsWith('span-'));
    expect(span).toEqual(['span-a/grp-span-1', 'span-a/', 'span-a/grp-span-2', 'span-b/grp-span-1']);

    const paged: string[] = [];
    let next: string | undefined = '/admin/groups?limit=2';
    while (next !== undefined) {
      const res = await admin('GET', next);
      expect(res.status).toBe(200);
      paged.push(...((await res.json()) as Record<string, unknown>[]).map((g) => `${String(g.name)}/${String(g.enterpriseId ?? '')}`));
      next = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    }
    expect(paged).toEqual(everyGroup);
  });

  test("when an enterprise's own groups span pages, then the next page's link keeps its enterpriseId", async () => {
    for (const name of ['page-a', 'page-b', 'page-c']) await createGroup({ name, enterpriseId: 'grp-pages' });
    await createGroup({ name: 'page-b2' });
    const first = await admin('GET', '/admin/groups?enterpriseId=grp-pages&limit=2');
    expect(((await first.json()) as { name: string }[]).map((g) => g.name)).toEqual(['page-a', 'page-b']);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1] ?? '';
    expect(next).toContain('enterpriseId=grp-pages');
    expect(((await (await admin('GET', next)).json()) as { name: string }[]).map((g) => g.name)).toEqual(['page-c']);
  });

  test("when users enroll naming their enterprise's own group, a shared one, or another enterprise's own, then the first two are accepted and the last is a group that does not exist", async () => {
    await createGroup({ name: 'g-shared' });
    await createGroup({ name: 'g-acme-only', enterpriseId: 'grp-acme' });
    expect((await enroll(acme, 'e-own', { primaryGroup: 'g-acme-only' })).status).toBe(201);
    expect((await enroll(globex, 'e-shared', { primaryGroup: 'g-shared' })).status).toBe(201);
    const other = await enroll(globex, 'e-other', { primaryGroup: 'g-shared', secondaryGroups: 'g-acme-only' });
    expect(other.status).toBe(409);
    // The same answer as a name no enterprise has: another enterprise's group names stay its own.
    expect(await other.json()).toEqual(missingGroup('g-acme-only', '/v1/users'));
    expect(await (await enroll(globex, 'e-none', { primaryGroup: 'g-nobody' })).json()).toEqual(missingGroup('g-nobody', '/v1/users'));
    expect((await fetch(`${service.url}/v1/users/e-other`, { headers: { authorization: `Bearer ${globex}` } })).status).toBe(404);
  });

  test("when a user is patched into groups, then the enterprise's own and shared ones are accepted and another enterprise's own is refused, leaving the user as it was", async () => {
    await createGroup({ name: 'p-shared' });
    await createGroup({ name: 'p-globex', enterpriseId: 'grp-globex' });
    await createGroup({ name: 'p-acme', enterpriseId: 'grp-acme' });
    expect((await enroll(acme, 'p-user', { primaryGroup: 'p-shared' })).status).toBe(201);
    const refused = await patch(acme, 'p-user', { secondaryGroups: 'p-globex' });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual(missingGroup('p-globex', '/v1/users/p-user'));
    expect((await patch(acme, 'p-user', { primaryGroup: 'p-acme', secondaryGroups: 'p-shared' })).status).toBe(200);
    const user = (await (await fetch(`${service.url}/v1/users/p-user`, { headers: { authorization: `Bearer ${acme}` } })).json()) as Record<
      string,
      unknown
    >;
    expect(user).toMatchObject({ primaryGroup: 'p-acme' });
    expect(await listed(acme, 'p-acme')).toEqual(['p-user']);
  });

  test("when an enterprise's own group and a shared one share a name, then deleting its own counts only its users, and deleting the shared one counts only the users of enterprises without their own", async () => {
    await createGroup({ name: 'd-retail' });
    await createGroup({ name: 'd-retail', enterpriseId: 'grp-acme' });
    await createGroup({ name: 'd-retail', enterpriseId: 'grp-globex' });
    // acme's and globex's users name their own d-retail; initech's the shared one.
    expect((await enroll(acme, 'd-acme-1', { primaryGroup: 'd-retail' })).status).toBe(201);
    expect((await enroll(acme, 'd-acme-2', { primaryGroup: 'd-retail' })).status).toBe(201);
    expect((await enroll(initech, 'd-initech', { primaryGroup: 'd-retail' })).status).toBe(201);
    expect(await listed(acme, 'd-retail')).toEqual(['d-acme-1', 'd-acme-2']);

    const acmeInUse = await admin('DELETE', '/admin/groups/d-retail?enterpriseId=grp-acme');
    expect(await acmeInUse.json()).toEqual(errorBody(409, 'Conflict', 'Group d-retail is in use by 2 users', '/admin/groups/d-retail'));
    const sharedInUse = await admin('DELETE', '/admin/groups/d-retail');
    expect(await sharedInUse.json()).toEqual(errorBody(409, 'Conflict', 'Group d-retail is in use by 1 user', '/admin/groups/d-retail'));
    // globex's own has no users: it goes, whatever the other owners' groups of the name hold.
    expect((await admin('DELETE', '/admin/groups/d-retail?enterpriseId=grp-globex')).status).toBe(204);
    expect((await admin('GET', '/admin/groups/d-retail?enterpriseId=grp-globex')).status).toBe(404);
    expect((await admin('GET', '/admin/groups/d-retail?enterpriseId=grp-acme')).status).toBe(200);

    // Once initech's user leaves, the shared one goes although acme's users name d-retail (their own).
    expect(
      (await fetch(`${service.url}/v1/users/d-initech`, { method: 'DELETE', headers: { authorization: `Bearer ${initech}` } })).status,
    ).toBe(204);
    expect((await admin('DELETE', '/admin/groups/d-retail')).status).toBe(204);
    expect((await admin('GET', '/admin/groups/d-retail')).status).toBe(404);
    expect((await admin('GET', '/admin/groups/d-retail?enterpriseId=grp-acme')).status).toBe(200);
    // globex's name now means nothing: its own and the shared one are gone.
    expect(await (await enroll(globex, 'd-globex', { primaryGroup: 'd-retail' })).json()).toEqual(missingGroup('d-retail', '/v1/users'));
    expect((await enroll(acme, 'd-acme-3', { primaryGroup: 'd-retail' })).status).toBe(201);
  });

  test("when an enterprise's own group is deleted, then its users' name means the shared group of the name from then on", async () => {
    await createGroup({ name: 'f-retail' });
    await createGroup({ name: 'f-retail', enterpriseId: 'grp-initech' });
    expect((await admin('DELETE', '/admin/groups/f-retail?enterpriseId=grp-initech')).status).toBe(204);
    expect((await enroll(initech, 'f-user', { primaryGroup: 'f-retail' })).status).toBe(201);
    const inUse = await admin('DELETE', '/admin/groups/f-retail');
    expect(await inUse.json()).toEqual(errorBody(409, 'Conflict', 'Group f-retail is in use by 1 user', '/admin/groups/f-retail'));
  });

  test("when POST /admin/groups is retried with one Idempotency-Key, then the enterprise's group is answered again, and the same key for another owner is a separate request", async () => {
    const post = (body: Record<string, string>, key: string) =>
      sendJson(`${service.url}/admin/groups`, 'POST', service.config.adminToken, body, { 'idempotency-key': key });
    const first = await post({ name: 'i-retail', enterpriseId: 'grp-acme' }, 'grp-key-1');
    expect(first.status).toBe(201);
    const retried = await post({ name: 'i-retail', enterpriseId: 'grp-acme' }, 'grp-key-1');
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(await retried.json()).toEqual(await first.json());
    // The key is kept per owner: the shared group's request with the same key is its own.
    const shared = await post({ name: 'i-retail' }, 'grp-key-1');
    expect(shared.status).toBe(201);
    expect(await shared.json()).not.toHaveProperty('enterpriseId');
  });

  test('when the enterpriseId of a new group is not an enterprise id, then 422 and nothing is created', async () => {
    const res = await admin('POST', '/admin/groups', { name: 'v-retail', enterpriseId: 'bad id!' });
    expect(res.status).toBe(422);
    expect((await admin('GET', '/admin/groups/v-retail')).status).toBe(404);
  });
});
