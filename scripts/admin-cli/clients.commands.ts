import { rotateClientSecret } from '../../core/clients/client-secret-rotation.js';
import { toClientResponse } from '../../core/clients/client-view.js';
import { CLIENT_SCOPES, type ClientScope } from '../../core/clients/clients.repository.js';
import {
  registerClient,
  removeClient,
  rotateClientCallbackSecret,
  updateClient,
  type RegisterClientInput,
  type UpdateClientInput,
} from '../../core/clients/clients.service.js';
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import {
  checkAgainstSchema,
  clientSecretGraceSeconds,
  comments,
  serviceSealingKey,
  list,
  required,
  UsageError,
  type CliOptions,
  type Command,
} from './cli-support.js';

/** Names a scope the service does not know, listing the known ones (friendlier than the schema's `scopes[0]`). */
function scopesOption(value: string | undefined): ClientScope[] {
  const scopes = list(value);
  const unknown = scopes.filter((s) => !(CLIENT_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ')} (known: ${CLIENT_SCOPES.join(', ')})`);
  return scopes as ClientScope[];
}

/** `--test` / `--no-test`: undefined when neither is given; both at once is a mistake. */
function testOption(options: CliOptions): boolean | undefined {
  if (options.test === true && options['no-test'] === true) throw new UsageError('give --test or --no-test, not both');
  if (options.test === true) return true;
  return options['no-test'] === true ? false : undefined;
}

/** `alice:123456,bob:654321` → the API's testCodes; the code is what follows the first colon. */
function testCodesOption(value: string): { userId: string; code: string }[] {
  return list(value).map((pair) => {
    const at = pair.indexOf(':');
    if (at <= 0 || at === pair.length - 1) throw new UsageError(`--test-codes: '${pair}' is not userId:code`);
    return { userId: pair.slice(0, at), code: pair.slice(at + 1) };
  });
}

/** The PATCH body the options describe: only the options given, an empty string empties a list. */
function patchOf(options: CliOptions): UpdateClientInput {
  const test = testOption(options);
  return {
    ...(test === undefined ? {} : { test }),
    ...(options['test-codes'] === undefined ? {} : { testCodes: testCodesOption(options['test-codes']) }),
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.scopes === undefined ? {} : { scopes: scopesOption(options.scopes) }),
    ...(options['allowed-ips'] === undefined ? {} : { allowedIps: list(options['allowed-ips']) }),
    ...(options['redirect-uris'] === undefined ? {} : { redirectUris: list(options['redirect-uris']) }),
    ...(options['web-origins'] === undefined ? {} : { webOrigins: list(options['web-origins']) }),
  };
}

const create: Command = async ({ services, options }) => {
  const input: RegisterClientInput = {
    name: required(options.name, '--name'),
    ...(options.enterprise === undefined ? {} : { enterpriseId: options.enterprise }),
    scopes: scopesOption(options.scopes),
    allowedIps: list(options['allowed-ips']),
    redirectUris: list(options['redirect-uris']),
    webOrigins: list(options['web-origins']),
    public: options.public === true,
    firstParty: options['third-party'] !== true,
    ...(options.test === true ? { test: true } : {}),
    ...(options['test-codes'] === undefined ? {} : { testCodes: testCodesOption(options['test-codes']) }),
  };
  checkAgainstSchema('admin-clients.create.json', input);
  // Every confidential client gets a callback secret, as through the admin API.
  const key = input.public ? undefined : await serviceSealingKey(services);
  const { client, clientSecret, callbackSecret } = await registerClient(services.clients, input, {
    comments: comments(options),
    ...(key ? { encryptionKey: key } : {}),
  });
  return {
    ...toClientResponse(client),
    ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
    ...(callbackSecret === undefined ? {} : { callback_secret: callbackSecret }),
  };
};

const patch: Command = async ({ services, arg, options }) => {
  const clientId = required(arg, 'client id');
  const input = patchOf(options);
  if (Object.keys(input).length === 0)
    throw new UsageError(
      'give at least one of --name, --scopes, --allowed-ips, --redirect-uris, --web-origins, --test, --no-test, --test-codes',
    );
  checkAgainstSchema('admin-clients.update.json', input);
  return toClientResponse(await updateClient(services.clients, clientId, input, comments(options)));
};

const show: Command = async ({ services, arg }) => {
  const client = await services.clients.clients.findClient(required(arg, 'client id'));
  if (!client) throw new NotFoundError('Client not found');
  return toClientResponse(client);
};

export const clientCommands: Record<string, Command> = {
  'clients create': create,
  'clients list': async ({ services }) => (await services.clients.clients.listClients()).map(toClientResponse),
  'clients show': show,
  'clients get': show,
  'clients patch': patch,
  'clients update': patch,
  'clients rotate-secret': async ({ services, arg, options }) => {
    const clientId = required(arg, 'client id');
    const rotated = await rotateClientSecret(services.clients, clientId, {
      graceSeconds: clientSecretGraceSeconds(),
      comments: comments(options),
    });
    return {
      client_id: clientId,
      client_secret: rotated.clientSecret,
      previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null,
    };
  },
  'clients rotate-callback-secret': async ({ services, arg, options }) => {
    const clientId = required(arg, 'client id');
    const secret = await rotateClientCallbackSecret(services.clients, clientId, {
      encryptionKey: await serviceSealingKey(services),
      comments: comments(options),
    });
    return { client_id: clientId, callback_secret: secret };
  },
  'clients delete': async ({ services, arg, options }) => {
    const clientId = required(arg, 'client id');
    await removeClient(services.clients, clientId, comments(options));
    return { deleted: clientId };
  },
};
