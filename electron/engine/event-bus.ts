// A typed publish/subscribe for the engine's events; a failing listener never stops the others.
export class EventBus<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<(data: never) => void>>();

  on<E extends keyof Events>(event: E, listener: (data: Events[E]) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as (data: never) => void);
    return () => set.delete(listener as (data: never) => void);
  }

  emit<E extends keyof Events>(event: E, data: Events[E]): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        (listener as (data: Events[E]) => void)(data);
      } catch (error) {
        console.error(`gpushare: a listener of "${String(event)}" failed:`, error);
      }
    }
  }
}
