// A client's latest snapshot, kept from whole `snapshot` events and `snapshot.delta` events (snapshot-delta.ts).
// A delta from another snapshot than the one held is refused, and the whole one is asked for (snapshot.latest).
import type { Snapshot } from './snapshot.js';
import { applySnapshotDelta, type SnapshotDelta } from './snapshot-delta.js';

export interface SnapshotFollower {
  whole(snapshot: Snapshot): void;
  delta(delta: SnapshotDelta): void;
  /** The connection is new: what was held says nothing about its engine. */
  reset(): void;
}

/** Each whole snapshot, taken or rebuilt, goes to `publish`; `fetchLatest` asks the engine for its latest when a delta does not fit. */
export function followSnapshots(fetchLatest: () => Promise<Snapshot | null>, publish: (snapshot: Snapshot) => void): SnapshotFollower {
  let held: Snapshot | null = null;
  let fetching = false;
  let generation = 0; // a fetch answered after a reset is about the connection before
  const take = (snapshot: Snapshot): void => {
    held = snapshot;
    publish(snapshot);
  };
  const refetch = (): void => {
    if (fetching) return;
    fetching = true;
    const asked = generation;
    fetchLatest().then(
      (latest) => {
        if (asked !== generation) return;
        fetching = false;
        if (latest && (!held || latest.seq > held.seq)) take(latest);
      },
      () => {
        if (asked === generation) fetching = false; // the next delta asks again
      },
    );
  };
  return {
    whole: take,
    delta(delta) {
      if (held && delta.baseSeq === held.seq) {
        let next: Snapshot;
        try {
          next = applySnapshotDelta(held, delta);
        } catch {
          return refetch(); // it names rows this snapshot lacks
        }
        return take(next);
      }
      if (held && delta.seq <= held.seq) return; // older than what is held: the whole one came first
      refetch();
    },
    reset() {
      held = null;
      fetching = false;
      generation++;
    },
  };
}
