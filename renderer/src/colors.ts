// One stable colour per process, the same in every chart, bar and table row. Colours are
// assigned as processes appear, per GPU: a newcomer takes the hue farthest from those its
// GPU's other processes hold, so neighbours on a card, a timeline or the table differ
// (a hash of the pid put pids 13 apart 12° apart: three greens side by side).
export const OTHERS_COLOR = '#5b6475';

const SATURATION = 0.62;
/** Hues around the wheel, spaced wider where the eye tells fewer colours apart (the greens). */
const HUES = [0, 28, 50, 85, 130, 165, 190, 212, 236, 265, 295, 325] as const;
/** The usual lightness first; past twelve processes on one GPU, hues come again lighter, then darker. */
const LIGHTNESSES = [0.58, 0.74, 0.44] as const;
const PALETTE_SIZE = HUES.length * LIGHTNESSES.length;
/** A process that left keeps its colour this many ticks (the timeline's 10-minute window at 1 Hz): a newcomer must not look like it. */
const HELD_TICKS = 600;
/** Forgotten after this many ticks unseen (an hour: the timeline rings' length). */
const FORGET_TICKS = 3600;

interface Assigned {
  gpuIndex: number;
  slot: number;
  lastSeenTick: number;
}

const assigned = new Map<number, Assigned>();
/** Processes holding each slot, over all GPUs: ties go to the slot least used anywhere. */
const slotUse = new Array<number>(PALETTE_SIZE).fill(0);
let ticks = 0;

const hueOfSlot = (slot: number): number => HUES[slot % HUES.length];
const lightnessOfSlot = (slot: number): number => LIGHTNESSES[Math.floor(slot / HUES.length)];
const hueDistance = (a: number, b: number): number => Math.min(Math.abs(a - b), 360 - Math.abs(a - b));

/** Compares two slots' scores key by key: the lower wins. */
const lower = (a: readonly number[], b: readonly number[]): boolean => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
};

/** For a newcomer on a GPU holding `held`: the fewest holders, the usual lightness, the widest hue gap to its lightness's held slots, the least used anywhere. */
function pickSlot(held: readonly number[]): number {
  const holders = new Array<number>(PALETTE_SIZE).fill(0);
  for (const slot of held) holders[slot]++;
  let best = 0;
  let bestScore: number[] | null = null;
  for (let slot = 0; slot < PALETTE_SIZE; slot++) {
    const ring = Math.floor(slot / HUES.length);
    let gap = 360;
    for (const other of held) if (Math.floor(other / HUES.length) === ring) gap = Math.min(gap, hueDistance(hueOfSlot(slot), hueOfSlot(other)));
    const score = [holders[slot], ring, -gap, slotUse[slot]];
    if (!bestScore || lower(score, bestScore)) {
      best = slot;
      bestScore = score;
    }
  }
  return best;
}

/** Called with every tick's processes (live or from the engine's history): newcomers get their colours. */
export function noteProcesses(processes: ReadonlyArray<{ pid: number; gpuIndex: number }>): void {
  ticks++;
  const heldOn = new Map<number, number[]>();
  const held = (gpuIndex: number): number[] => {
    let slots = heldOn.get(gpuIndex);
    if (!slots) {
      slots = [];
      for (const a of assigned.values()) if (a.gpuIndex === gpuIndex && ticks - a.lastSeenTick <= HELD_TICKS) slots.push(a.slot);
      heldOn.set(gpuIndex, slots);
    }
    return slots;
  };
  for (const { pid, gpuIndex } of processes) {
    const known = assigned.get(pid);
    if (known) {
      known.lastSeenTick = ticks;
      continue;
    }
    const slots = held(gpuIndex);
    const slot = pickSlot(slots);
    slots.push(slot);
    slotUse[slot]++;
    assigned.set(pid, { gpuIndex, slot, lastSeenTick: ticks });
  }
  if (ticks % 60 === 0) {
    for (const [pid, a] of assigned) {
      if (ticks - a.lastSeenTick < FORGET_TICKS) continue;
      assigned.delete(pid);
      slotUse[a.slot]--;
    }
  }
}

/** A process not seen in a tick yet (a job card a moment before its first sample): a palette colour from its pid. */
const slotOf = (pid: number): number => assigned.get(pid)?.slot ?? pid % HUES.length;

const cssCache = new Array<string>(PALETTE_SIZE);
const rgbCache = new Array<readonly [number, number, number]>(PALETTE_SIZE);

export function processColor(pid: number): string {
  const slot = slotOf(pid);
  return (cssCache[slot] ??= `hsl(${hueOfSlot(slot)} ${SATURATION * 100}% ${Math.round(lightnessOfSlot(slot) * 100)}%)`);
}

/** processColor as 0–255 red, green, blue, for pixels drawn by hand. */
export function processRgb(pid: number): readonly [number, number, number] {
  const slot = slotOf(pid);
  let rgb = rgbCache[slot];
  if (!rgb) {
    const hue = hueOfSlot(slot);
    const lightness = lightnessOfSlot(slot);
    const a = SATURATION * Math.min(lightness, 1 - lightness);
    const channel = (n: number): number => {
      const k = (n + hue / 30) % 12;
      return Math.round(255 * (lightness - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
    };
    rgbCache[slot] = rgb = [channel(0), channel(8), channel(4)];
  }
  return rgb;
}
