import { createRequire } from 'node:module';

/**
 * ioredis builds every pipeline (auto-pipelined commands, `pipeline()`, `multi()`) by copying each
 * script method defined on the client, and its Buffer twin, onto the new object. BullMQ defines
 * 64 scripts on every client it uses, so each pipeline gets about 130 own properties: about 21 µs
 * of CPU per `pipeline()` on Node 24, an object graph that outlives young collections and is
 * promoted to the old generation, where it brings major collections sooner. This replaces the
 * constructor with one that puts those methods once on a prototype shared by the client's
 * pipelines (about 2.4 µs), with the sha-to-script map the library builds beside them. The
 * pipeline's own state is set exactly as the library's constructor sets it.
 *
 * It is applied only to the ioredis version it was checked against; any other version keeps the
 * library's own constructor (correct, only slower), and a test fails on an upgrade so that the
 * check is made again.
 */
export const LEAN_PIPELINES_IOREDIS_VERSION = '6.0.0';

interface ScriptHolder {
  scriptsSet: Record<string, unknown>;
  addedBuiltinSet: Set<string>;
  constructor: { name: string };
  isCluster?: boolean;
  options: unknown;
  [method: string]: unknown;
}

interface PipelineModule {
  default: (new (redis: ScriptHolder) => object) & { prototype: object };
}

interface CommanderModule {
  default: { prototype: Record<string, (...args: unknown[]) => unknown> };
}

const require = createRequire(import.meta.url);
let applied: boolean | undefined;
let libraryConstructor: PipelineModule['default'] | undefined;

/** The library's own constructor once replaced, so that a test can compare what both build. */
export const libraryPipelineConstructor = (): PipelineModule['default'] | undefined => libraryConstructor;

/** Whether pipelines share their client's script methods (true once applied to the checked version). */
export function leanRedisPipelines(): boolean {
  if (applied !== undefined) return applied;
  const { version } = require('ioredis/package.json') as { version: string };
  applied = version === LEAN_PIPELINES_IOREDIS_VERSION;
  if (applied) replacePipelineConstructor();
  return applied;
}

function replacePipelineConstructor(): void {
  const pipelineModule = require('ioredis/built/Pipeline.js') as PipelineModule;
  const commander = require('ioredis/built/utils/Commander.js') as CommanderModule;
  const libraryPipeline = pipelineModule.default;
  libraryConstructor = libraryPipeline;

  const methodsByClient = new WeakMap<ScriptHolder, Record<string, unknown>>();

  /** Puts the client's script and built-in command methods, and its sha-to-script map, on `shared`. */
  const shareMethods = (redis: ScriptHolder, shared: Record<string, unknown>): void => {
    const shaToScript: Record<string, unknown> = {};
    for (const script of Object.values(redis.scriptsSet) as { sha: string }[]) shaToScript[script.sha] = script;
    shared._shaToScript = shaToScript;
    for (const name of [...Object.keys(redis.scriptsSet), ...redis.addedBuiltinSet]) {
      shared[name] = redis[name];
      shared[`${name}Buffer`] = redis[`${name}Buffer`];
    }
  };

  // A script or built-in command added later must reach the pipelines already made as well as
  // later ones: the client's automatic pipeline of this turn may hold other requests' commands when
  // a script is defined on its first use, and gets that script's call next. (The library's own
  // constructor copies methods once, so its pipelines miss it: the call failed and the pipeline's
  // answer then threw an uncaught TypeError.) They all share this one object.
  for (const name of ['defineCommand', 'addBuiltinCommand'] as const) {
    const original = commander.default.prototype[name];
    commander.default.prototype[name] = function (this: ScriptHolder, ...args: unknown[]) {
      const result = original.apply(this, args);
      const shared = methodsByClient.get(this);
      if (shared !== undefined) shareMethods(this, shared);
      return result;
    };
  }

  const methodsOf = (redis: ScriptHolder): object => {
    let methods = methodsByClient.get(redis);
    if (methods === undefined) {
      methods = Object.create(libraryPipeline.prototype) as Record<string, unknown>;
      shareMethods(redis, methods);
      methodsByClient.set(redis, methods);
    }
    return methods;
  };

  // Called with `new` by ioredis; returning an object makes it the result of `new`.
  function LeanPipeline(redis: ScriptHolder): object {
    const pipeline = Object.create(methodsOf(redis)) as Record<string, unknown> & { _queue: unknown[] };
    // The state the library's Commander and Pipeline constructors leave (Commander's empty
    // `options` is replaced by the client's at once, so it is set only once here).
    pipeline.scriptsSet = {};
    pipeline.addedBuiltinSet = new Set<string>();
    pipeline.redis = redis;
    pipeline.isPipeline = true;
    pipeline.replyPending = 0;
    pipeline._queue = [];
    pipeline._result = [];
    pipeline._transactions = 0;
    pipeline.isCluster = redis.constructor.name === 'Cluster' || redis.isCluster;
    pipeline.options = redis.options;
    pipeline.promise = new Promise((resolve, reject) => {
      pipeline.resolve = resolve;
      pipeline.reject = reject;
    });
    Object.defineProperty(pipeline, 'length', { get: () => pipeline._queue.length });
    return pipeline;
  }
  LeanPipeline.prototype = libraryPipeline.prototype;
  pipelineModule.default = LeanPipeline as unknown as PipelineModule['default'];
}
