// `npm run admin -- <resource> <action> [options]`: manages clients, groups and sign-in locks straight through
// the core repositories, so it works without the API running. Prints JSON on stdout.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Connection } from 'mongoose';
import { CLIENT_SCOPES, findClient, listClients, type ClientScope } from '../core/clients/clients.repository.js';
import { registerClient, removeClient, updateClient } from '../core/clients/clients.service.js';
import { connectMongo } from '../core/db/mongo-connection.js';
import { createActivityRepository } from '../core/activity/activity.repository.js';
import { DEFAULT_ENTERPRISE_ID } from '../core/enterprises/enterprise-id.js';
import { AppError } from '../core/errors/app-error.js';
import { createGroup, listGroups } from '../core/groups/groups.repository.js';
import { projectRoot } from '../core/project-root.js';
import { createSignInFailuresRepository } from '../core/sign-in/sign-in-failures.repository.js';
import { unlockSignIn } from '../core/sign-in/sign-in-unlock.js';
import { createUsersRepository } from '../core/users/users.repository.js';

const USAGE = `usage: npm run admin -- <command>
  clients create --name <name> --scopes otp,users,notifications [--enterprise <enterpriseId>] [--allowed-ips 127.0.0.1/32,::1/128] [--redirect-uris https://a/cb] [--web-origins https://app.example] [--public] [--third-party]
  clients update <clientId> [--redirect-uris https://a/cb,com.example.app:/cb] [--web-origins https://app.example]  (a given list replaces the old one; "" empties it)
  clients list
  clients get <clientId>
  clients delete <clientId>
  groups create <name> [--description <text>]
  groups list
  users unlock-sign-in <userId> [--enterprise <enterpriseId>] [--comments <text>]
MongoDB: MONGODB_URI, else the local server started by \`npm start\` (.local/mongo.json).`;

class UsageError extends Error {}

/** MONGODB_URI, or the database `npm start` uses on the local server it recorded. */
function mongoUri(): string {
  if (process.env.MONGODB_URI) return process.env.MONGODB_URI;
  const record = join(projectRoot, '.local', 'mongo.json');
  if (!existsSync(record)) throw new UsageError('MONGODB_URI is not set and no local MongoDB was started by `npm start`');
  return `${(JSON.parse(readFileSync(record, 'utf8')) as { url: string }).url}/svc-identity`;
}

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function clientJson(c: Awaited<ReturnType<typeof listClients>>[number]) {
  return {
    client_id: c.clientId,
    enterpriseId: c.enterpriseId,
    name: c.name,
    scopes: c.scopes,
    allowedIps: c.allowedIps,
    redirectUris: c.redirectUris,
    webOrigins: c.webOrigins,
    public: c.isPublic,
    firstParty: c.firstParty,
    createdAt: c.createdAt.toISOString(),
  };
}

async function run(mongo: Connection, args: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      enterprise: { type: 'string' },
      scopes: { type: 'string' },
      'allowed-ips': { type: 'string' },
      'redirect-uris': { type: 'string' },
      'web-origins': { type: 'string' },
      public: { type: 'boolean' },
      'third-party': { type: 'boolean' },
      description: { type: 'string' },
      comments: { type: 'string' },
    },
  });
  const [resource, action, arg] = positionals;
  const command = `${resource ?? ''} ${action ?? ''}`;
  switch (command) {
    case 'clients create': {
      if (!values.name) throw new UsageError('--name is required');
      const scopes = list(values.scopes);
      const unknown = scopes.filter((s) => !(CLIENT_SCOPES as readonly string[]).includes(s));
      if (unknown.length > 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ')} (known: ${CLIENT_SCOPES.join(', ')})`);
      const { client, clientSecret } = await registerClient(mongo, {
        name: values.name,
        ...(values.enterprise === undefined ? {} : { enterpriseId: values.enterprise }),
        scopes: scopes as ClientScope[],
        allowedIps: list(values['allowed-ips']),
        redirectUris: list(values['redirect-uris']),
        webOrigins: list(values['web-origins']),
        public: values.public === true,
        firstParty: values['third-party'] !== true,
      });
      return { ...clientJson(client), ...(clientSecret === undefined ? {} : { client_secret: clientSecret }) };
    }
    case 'clients update': {
      if (!arg) throw new UsageError('client id is required');
      if (values['redirect-uris'] === undefined && values['web-origins'] === undefined)
        throw new UsageError('give --redirect-uris and/or --web-origins');
      const client = await updateClient(mongo, arg, {
        ...(values['redirect-uris'] === undefined ? {} : { redirectUris: list(values['redirect-uris']) }),
        ...(values['web-origins'] === undefined ? {} : { webOrigins: list(values['web-origins']) }),
      });
      return clientJson(client);
    }
    case 'clients list':
      return (await listClients(mongo)).map(clientJson);
    case 'clients get': {
      const client = arg ? await findClient(mongo, arg) : null;
      if (!client) throw new UsageError(`client ${arg ?? '(missing id)'} not found`);
      return clientJson(client);
    }
    case 'clients delete':
      if (!arg) throw new UsageError('client id is required');
      await removeClient(mongo, arg);
      return { deleted: arg };
    case 'groups create': {
      if (!arg) throw new UsageError('group name is required');
      const group = await createGroup(mongo, { name: arg, ...(values.description ? { description: values.description } : {}) });
      return { name: group.name, description: group.description, createdAt: group.createdAt.toISOString() };
    }
    case 'groups list':
      return (await listGroups(mongo)).map((g) => ({ name: g.name, description: g.description, createdAt: g.createdAt.toISOString() }));
    case 'users unlock-sign-in': {
      if (!arg) throw new UsageError('user id is required');
      const ref = { enterpriseId: values.enterprise ?? DEFAULT_ENTERPRISE_ID, userId: arg };
      const deps = {
        users: createUsersRepository(mongo),
        failures: createSignInFailuresRepository(mongo),
        activity: createActivityRepository(mongo),
      };
      const { wasLocked } = await unlockSignIn(deps, ref, values.comments?.slice(0, 1000));
      return { ...ref, wasLocked };
    }
    default:
      throw new UsageError(USAGE);
  }
}

async function main(): Promise<number> {
  let mongo: Connection | undefined;
  try {
    const args = process.argv.slice(2);
    if (args.includes('--help') || args.includes('-h') || args[0] === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (args.length === 0) throw new UsageError(USAGE);
    mongo = await connectMongo(mongoUri());
    const result = await run(mongo, args);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    const message = err instanceof UsageError || err instanceof AppError || err instanceof TypeError ? err.message : String(err);
    process.stderr.write(`${message}\n`);
    return err instanceof UsageError || err instanceof AppError || err instanceof TypeError ? 2 : 1;
  } finally {
    await mongo?.close();
  }
}

process.exitCode = await main();
