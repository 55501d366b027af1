/** A small typed event emitter: browsers and React Native have no `node:events`. */
export class TypedEmitter<Events extends { [name: string]: unknown }> {
  private readonly listeners = new Map<keyof Events, Set<(payload: never) => void>>();

  on<Name extends keyof Events>(name: Name, listener: (payload: Events[Name]) => void): this {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as (payload: never) => void);
    return this;
  }

  off<Name extends keyof Events>(name: Name, listener: (payload: Events[Name]) => void): this {
    this.listeners.get(name)?.delete(listener as (payload: never) => void);
    return this;
  }

  once<Name extends keyof Events>(name: Name, listener: (payload: Events[Name]) => void): this {
    const wrapper = (payload: Events[Name]) => {
      this.off(name, wrapper);
      listener(payload);
    };
    return this.on(name, wrapper);
  }

  protected emit<Name extends keyof Events>(name: Name, payload: Events[Name]): void {
    // A listener that throws must not stop the others nor turn a delivered result into a failure.
    for (const listener of [...(this.listeners.get(name) ?? [])]) {
      try {
        (listener as (payload: Events[Name]) => void)(payload);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}
