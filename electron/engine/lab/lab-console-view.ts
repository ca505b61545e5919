// The Lab view's update, built box by box: a box whose snapshot, jobs and connection are the same
// objects as last time (the hub replaces them when they change) keeps its row and its people, so
// an update after two of twenty boxes changed costs two boxes' work, not twenty. The result is what
// labView and personTotals give for the whole lab, each row as the view shows it (labConsoleRow;
// lab-console-view.test.ts checks it).
import { labView, personTotals, type LabBox, type LabSnapshot, type LabView, type PersonTotal } from '../../../shared/lab.js';
import { labConsoleRow, type LabConsoleRow, type LabConsoleState } from '../../../shared/lab-console.js';

interface BoxPart {
  from: Pick<LabBox, 'snapshot' | 'jobs' | 'connection' | 'reach' | 'updatedAt'>;
  row: LabConsoleRow;
  totals: LabView['totals'];
  people: PersonTotal[];
}

export class LabConsoleView {
  private readonly parts = new Map<string, BoxPart>();

  update(lab: LabSnapshot): LabConsoleState {
    const parts = lab.boxes.map((box) => this.part(box, lab.takenAt));
    for (const name of this.parts.keys()) if (!lab.boxes.some((b) => b.name === name)) this.parts.delete(name);
    const totals: LabView['totals'] = { boxes: 0, connected: 0, gpus: 0, processes: 0, memoryUsed: 0, memoryTotal: 0 };
    for (const { totals: t } of parts) for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += t[key];
    return {
      takenAt: lab.takenAt,
      view: { boxes: parts.map((p) => p.row), totals },
      people: mergePeople(parts.map((p) => p.people)),
      sampledAt: Object.fromEntries(lab.boxes.map((b) => [b.name, b.snapshot?.takenAt ?? null])),
    };
  }

  private part(box: LabBox, takenAt: number): BoxPart {
    const kept = this.parts.get(box.name);
    const same = kept && kept.from.snapshot === box.snapshot && kept.from.jobs === box.jobs && kept.from.connection === box.connection && kept.from.reach === box.reach && kept.from.updatedAt === box.updatedAt;
    // a box that is not connected says "next try in N s": its line is written anew each time
    if (same && box.connection.state === 'connected') return kept;
    const one: LabSnapshot = { takenAt, boxes: [box] };
    const view = labView(one);
    const part: BoxPart = { from: box, row: labConsoleRow(view.boxes[0]), totals: view.totals, people: personTotals(one) };
    this.parts.set(box.name, part);
    return part;
  }
}

/** Each box's people as one list, as personTotals orders it: GPUs count per box (a GPU is one box's). */
function mergePeople(perBox: PersonTotal[][]): PersonTotal[] {
  const people = new Map<string, PersonTotal>();
  for (const list of perBox) {
    for (const p of list) {
      const m = people.get(p.user);
      if (!m) {
        people.set(p.user, { ...p, boxes: [...p.boxes] });
        continue;
      }
      for (const box of p.boxes) if (!m.boxes.includes(box)) m.boxes.push(box);
      m.gpus += p.gpus;
      m.processes += p.processes;
      m.memoryBytes += p.memoryBytes;
      m.smPercent += p.smPercent;
      m.runningJobs += p.runningJobs;
      m.queuedJobs += p.queuedJobs;
    }
  }
  return [...people.values()].sort((a, b) => b.memoryBytes - a.memoryBytes || b.processes - a.processes || a.user.localeCompare(b.user));
}
