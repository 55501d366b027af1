// `npm run admin -- <resource> <action> [options]`: manages clients, groups, templates, users and the
// outbox straight through the core services, so it works without the API running. Prints JSON on
// stdout; refusals go to stderr with exit code 2, in the admin API's words.
import { parseArgs } from 'node:util';
import type { Connection } from 'mongoose';
import { connectMongo } from '../core/platform/db/mongo-connection.js';
import { AppError } from '../core/platform/errors/app-error.js';
import { mongoUri, UsageError, type CliOptions, type Command } from './admin-cli/cli-support.js';
import { composeCli } from './admin-cli/cli-root.js';
import { clientCommands } from './admin-cli/clients.commands.js';
import { groupCommands } from './admin-cli/groups.commands.js';
import { outboxCommands } from './admin-cli/outbox.commands.js';
import { templateCommands } from './admin-cli/templates.commands.js';
import { signingKeyCommands } from './admin-cli/signing-keys.commands.js';
import { userCommands } from './admin-cli/users.commands.js';

const USAGE = `usage: npm run admin -- <command>
  clients create --name <name> --scopes otp,users,notifications [--enterprise <enterpriseId>] [--allowed-ips 127.0.0.1/32,::1/128] [--redirect-uris https://a/cb] [--web-origins https://app.example] [--public] [--third-party] [--test] [--test-codes alice:123456,bob:654321] [--comments <text>]
  clients list
  clients show <clientId>
  clients patch <clientId> [--name <name>] [--scopes otp,users] [--allowed-ips 10.0.0.0/8] [--redirect-uris https://a/cb] [--web-origins https://app.example] [--test | --no-test] [--test-codes alice:123456] [--comments <text>]
      (a list given replaces the old one; "" empties it; --test/--no-test sets/clears test mode)
  clients rotate-secret <clientId> [--comments <text>]
  clients rotate-callback-secret <clientId> [--comments <text>]
  clients delete <clientId> [--comments <text>]
  groups create <name> [--description <text>] [--enterprise <enterpriseId>]
  groups list [--enterprise <enterpriseId>]
  groups show <name> [--enterprise <enterpriseId>]
  groups delete <name> [--enterprise <enterpriseId>]
  templates list
  templates show <name>
  templates set <name> --file <template.json> [--comments <text>]   ({"channel","text","subject"?,"html"?}; creates or replaces)
  templates delete <name>
  users block <userId> [--enterprise <enterpriseId>] [--reason <text>]
  users unblock <userId> [--enterprise <enterpriseId>] [--reason <text>]
  users unlock-sign-in <userId> [--enterprise <enterpriseId>] [--comments <text>]
  outbox list [--to <address>] [--limit 1-100]
  signing-keys rotate [--retire-at-once] [--comments <text>]
      (run with the API's SIGNING_KEY_JWK, ACCESS_TOKEN_SIGNING_ALG, ACCESS_TOKEN_TTL_SECONDS, SIGNING_KEY_RELOAD_SECONDS and SIGN_IN_SESSION_TTL_SECONDS)
MongoDB: MONGODB_URI, else the local server started by \`npm start\` (.local/mongo.json).
Callback secrets and signing keys are sealed with OTP_ENCRYPTION_KEY, else the key \`npm start\` generated (.local/secrets.json).`;

const COMMANDS: Record<string, Command> = {
  ...clientCommands,
  ...groupCommands,
  ...templateCommands,
  ...userCommands,
  ...outboxCommands,
  ...signingKeyCommands,
};

function parse(args: string[]): { command: Command; arg: string | undefined; options: CliOptions } {
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
      test: { type: 'boolean' },
      'no-test': { type: 'boolean' },
      'test-codes': { type: 'string' },
      description: { type: 'string' },
      comments: { type: 'string' },
      reason: { type: 'string' },
      'retire-at-once': { type: 'boolean' },
      file: { type: 'string' },
      to: { type: 'string' },
      limit: { type: 'string' },
    },
  });
  const [resource, action, arg] = positionals;
  const name = [resource, action].filter(Boolean).join(' ');
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command: ${name}\n${USAGE}`);
  return { command, arg, options: values };
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
    // The command line is checked before connecting, so a typo answers at once.
    const { command, arg, options } = parse(args);
    mongo = await connectMongo(mongoUri());
    const result = await command({ services: composeCli(mongo), arg, options });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    // parseArgs throws TypeError for an unknown option or a missing option value.
    const refused = err instanceof UsageError || err instanceof AppError || err instanceof TypeError;
    process.stderr.write(`${refused ? err.message : String(err)}\n`);
    return refused ? 2 : 1;
  } finally {
    await mongo?.close();
  }
}

process.exitCode = await main();
