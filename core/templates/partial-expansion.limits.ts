import type Handlebars from 'handlebars';

/**
 * Partial calls one rendering of a template's HTML may make, its layout and inline partials
 * included. Inline partials that each call the one below twice double the work with every
 * level: 40 levels are 2^40 calls, which would hold the event loop for days. Message templates
 * make a handful; a list of rows, one partial call each, fits well within this.
 */
export const MAX_PARTIAL_CALLS = 1000;

/**
 * Characters one rendering may produce. Each partial's output is counted when it is produced
 * (so text nested in several partials counts more than once), which stops a rendering before it
 * builds a string larger than this, not only after.
 */
export const MAX_RENDERED_CHARACTERS = 1_000_000;

type HandlebarsEnv = ReturnType<typeof Handlebars.create>;
type InvokePartial = (this: unknown, partial: unknown, context: unknown, options: unknown) => unknown;

/** A rendering went past one of the limits above; the renderer reports it as invalid HTML (422). */
export class ExpansionLimitError extends Error {}

interface Budget {
  calls: number;
  characters: number;
}

// Renderings are synchronous, so one budget at a time is enough: the one running now.
let running: Budget | undefined;

/**
 * Makes every partial call of this Handlebars instance count against the budget of the
 * rendering under way (renderWithinLimits). Only this instance's runtime is replaced: Handlebars
 * reads `env.VM` on each call for such overrides, and the global instance keeps its own.
 */
export function countPartialCalls(env: HandlebarsEnv): void {
  const vm = env.VM as unknown as { invokePartial: InvokePartial };
  const invokePartial = vm.invokePartial;
  (env as unknown as { VM: unknown }).VM = {
    ...vm,
    invokePartial(this: unknown, partial: unknown, context: unknown, options: unknown) {
      const budget = running;
      if (budget && ++budget.calls > MAX_PARTIAL_CALLS)
        throw new ExpansionLimitError(`partials are called more than ${MAX_PARTIAL_CALLS} times`);
      const result = invokePartial.call(this, partial, context, options);
      if (budget && typeof result === 'string') spend(budget, result.length);
      return result;
    },
  };
}

/** Runs one rendering within MAX_PARTIAL_CALLS and MAX_RENDERED_CHARACTERS; throws ExpansionLimitError past either. */
export function renderWithinLimits(render: () => string): string {
  const outer = running;
  const budget = { calls: 0, characters: 0 };
  running = budget;
  try {
    const output = render();
    if (output.length > MAX_RENDERED_CHARACTERS) spend(budget, MAX_RENDERED_CHARACTERS + 1);
    return output;
  } finally {
    running = outer;
  }
}

function spend(budget: Budget, characters: number): void {
  budget.characters += characters;
  if (budget.characters > MAX_RENDERED_CHARACTERS)
    throw new ExpansionLimitError(`it renders to more than ${MAX_RENDERED_CHARACTERS} characters with its partials`);
}
