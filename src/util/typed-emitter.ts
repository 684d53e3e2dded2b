/** A small typed event emitter (the SM's and the SA client's events). */

type Listener<T> = (payload: T) => void;

/** A small typed event emitter. A listener that throws does not stop the others or the SM. */
export class TypedEmitter<E extends object> {
  private readonly listeners = new Map<keyof E, Set<Listener<never>>>();
  /** Listener errors (they are also handed to `onListenerError`). */
  listenerErrors = 0;
  onListenerError?: (event: keyof E, e: unknown) => void;

  on<K extends keyof E>(event: K, fn: Listener<E[K]>): () => void {
    let s = this.listeners.get(event);
    if (!s) this.listeners.set(event, (s = new Set()));
    s.add(fn as Listener<never>);
    return () => this.off(event, fn);
  }

  off<K extends keyof E>(event: K, fn: Listener<E[K]>): void {
    this.listeners.get(event)?.delete(fn as Listener<never>);
  }

  once<K extends keyof E>(event: K, fn: Listener<E[K]>): () => void {
    const off = this.on(event, (p) => {
      off();
      fn(p);
    });
    return off;
  }

  /** The next event of this name (that `filter` accepts). */
  next<K extends keyof E>(event: K, filter: (p: E[K]) => boolean = () => true): Promise<E[K]> {
    return new Promise((resolve) => {
      const off = this.on(event, (p) => {
        if (!filter(p)) return;
        off();
        resolve(p);
      });
    });
  }

  listenerCount(event: keyof E): number {
    return this.listeners.get(event)?.size ?? 0;
  }

  emit<K extends keyof E>(event: K, payload: E[K]): void {
    const s = this.listeners.get(event);
    if (!s) return;
    for (const fn of [...s]) {
      try {
        (fn as Listener<E[K]>)(payload);
      } catch (e) {
        this.listenerErrors++;
        this.onListenerError?.(event, e);
      }
    }
  }
}
