// Who hears a store's status change (its trouble begins, changes, ends): one listener's failure never stops the others.
export class StatusListeners<S> {
  private readonly listeners = new Set<(status: S) => void>();

  constructor(private readonly what: string) {}

  /** Returns the unsubscribe. */
  add(listener: (status: S) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(status: S): void {
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch (error) {
        console.error(`gpushare: a ${this.what} status listener failed:`, error);
      }
    }
  }
}
