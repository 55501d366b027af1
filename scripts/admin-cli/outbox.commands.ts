import { ValidationError } from '../../core/platform/errors/app-error.js';
import { limitOption, type Command } from './cli-support.js';

export const outboxCommands: Record<string, Command> = {
  // What the outbox provider "sent", newest first, as `GET /admin/outbox?to=&limit=` shows it.
  'outbox list': async ({ services, options }) => {
    if (options.to === '') throw new ValidationError('[Invalid field to]');
    const messages = await services.outbox.listOutboxMessages({
      ...(options.to === undefined ? {} : { to: options.to }),
      limit: limitOption(options.limit, 20, 100),
    });
    return messages.map(({ id: _id, ...message }) => message);
  },
};
