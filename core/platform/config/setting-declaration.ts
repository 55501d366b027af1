// The shape of one line of the settings table (settings.ts) and the types derived from it.

/** The environment as a setting's derived default sees it: strings, defaults of the plain keys filled in. */
export type RawEnvironment = Readonly<Record<string, string | undefined>>;

/** Where a setting is listed in docs/configuration.md and `.env.example`. */
export type SettingSection =
  | 'runtime'
  | 'stores'
  | 'secrets'
  | 'workers'
  | 'push'
  | 'providers'
  | 'limits'
  | 'sign-in-limits'
  | 'activation-limits'
  | 'sign-in'
  | 'enrollment';

interface CommonDeclaration {
  readonly section: SettingSection;
  /** The meaning, as the docs table and `.env.example` show it (Markdown; links relative to docs/). */
  readonly doc: string;
  /** Used when the variable is unset or empty; a function derives it from other variables. */
  readonly default?: string | number | ((env: RawEnvironment) => string);
  /** How the docs describe a default that is not a plain value (derived, or computed later). */
  readonly defaultText?: string;
  /** Value written into `.env.example` instead of the default (a realistic production value). */
  readonly example?: string;
  /** The process does not start without it. */
  readonly required?: true;
  /** The process does not start without it when NODE_ENV=production (a secret with no safe default). */
  readonly requiredInProduction?: true;
  /**
   * No process of the service starts without it, in any mode (tests and tools that only read a
   * configuration may go without): a key every role digests or seals with.
   */
  readonly requiredToRun?: true;
  /** Never logged or printed; `npm start` generates the secrets it needs. */
  readonly secret?: true;
  /** Checks beyond the schema; each returned problem is reported after `KEY: `. */
  readonly check?: (value: string) => string[];
}

export interface IntegerDeclaration extends CommonDeclaration {
  readonly kind: 'integer';
  readonly min?: number;
  readonly max?: number;
}

export interface StringDeclaration extends CommonDeclaration {
  readonly kind: 'string';
  /** JSON Schema pattern; `format` says in words what it accepts (the error message). */
  readonly pattern?: string;
  readonly format?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
}

export interface EnumDeclaration extends CommonDeclaration {
  readonly kind: 'enum';
  readonly values: readonly string[];
}

/** `on` or `off`, read as a boolean. */
export interface SwitchDeclaration extends CommonDeclaration {
  readonly kind: 'switch';
}

export type SettingDeclaration = IntegerDeclaration | StringDeclaration | EnumDeclaration | SwitchDeclaration;

/** The value a declaration yields once read and validated. */
type ValueOf<D> = D extends { kind: 'integer' }
  ? number
  : D extends { kind: 'switch' }
    ? boolean
    : D extends { kind: 'enum'; values: readonly (infer V)[] }
      ? V
      : string;

/** Present whenever the process runs: required, or given a default. */
type AlwaysSet<D> = D extends { required: true } ? true : D extends { default: unknown } ? true : false;

/** The typed values of a table of declarations, keyed by variable name. */
export type SettingValues<T extends Record<string, SettingDeclaration>> = {
  readonly [K in keyof T]: AlwaysSet<T[K]> extends true ? ValueOf<T[K]> : ValueOf<T[K]> | undefined;
};
