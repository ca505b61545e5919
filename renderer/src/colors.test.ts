// Process colours: neighbours on one GPU (its card, its timeline, the table's rows for it)
// must be told apart at a glance, so each GPU's processes get hues far apart on the wheel.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { noteProcesses, processColor, processRgb } from './colors.js';

/** Hue and lightness of what processColor assigned (`hsl(H S% L%)`). */
const hsl = (pid: number): { hue: number; lightness: number } => {
  const match = /^hsl\((\d+(?:\.\d+)?) [\d.]+% ([\d.]+)%\)$/.exec(processColor(pid));
  assert.ok(match, `processColor(${pid}) is an hsl() colour: ${processColor(pid)}`);
  return { hue: Number(match[1]), lightness: Number(match[2]) };
};
const hueDistance = (a: number, b: number): number => Math.min(Math.abs(a - b), 360 - Math.abs(a - b));
/** The smallest hue distance between any two of these processes. */
const closestHues = (pids: number[]): { distance: number; pair: string } => {
  let closest = { distance: 360, pair: '' };
  for (let i = 0; i < pids.length; i++) {
    for (let k = i + 1; k < pids.length; k++) {
      const distance = hueDistance(hsl(pids[i]).hue, hsl(pids[k]).hue);
      if (distance < closest.distance) closest = { distance, pair: `${pids[i]} ${processColor(pids[i])} and ${pids[k]} ${processColor(pids[k])}` };
    }
  }
  return closest;
};
const onGpu = (gpuIndex: number, pids: number[]) => pids.map((pid) => ({ pid, gpuIndex }));

test('pids that a hash of the pid put on near hues (13 apart: 12° with the golden angle) get far-apart hues on one GPU', () => {
  const pids = [4100, 4113, 4126];
  noteProcesses(onGpu(0, pids));
  const { distance, pair } = closestHues(pids);
  assert.ok(distance >= 60, `three processes on one GPU are at least 60° apart in hue; closest: ${pair} (${distance}°)`);
});

test('up to twelve processes on one GPU all get different hues, at least 20° apart, arriving one per tick or at once', () => {
  const oneByOne = Array.from({ length: 12 }, (_, i) => 20_000 + i * 7);
  for (let i = 0; i < oneByOne.length; i++) noteProcesses(onGpu(1, oneByOne.slice(0, i + 1)));
  const atOnce = Array.from({ length: 12 }, (_, i) => 30_000 + i * 13);
  noteProcesses(onGpu(2, atOnce));
  for (const pids of [oneByOne, atOnce]) {
    const { distance, pair } = closestHues(pids);
    assert.ok(distance >= 20, `closest hues on one GPU: ${pair} (${distance}°)`);
  }
  const firstFour = closestHues(oneByOne.slice(0, 4));
  assert.ok(firstFour.distance >= 60, `the first four are at least 60° apart: ${firstFour.pair} (${firstFour.distance}°)`);
});

test('a GPU with more processes than hues: no two of its first 36 share a colour (hue or lightness differs)', () => {
  const pids = Array.from({ length: 36 }, (_, i) => 40_000 + i * 3);
  noteProcesses(onGpu(3, pids));
  const colors = pids.map((pid) => processColor(pid));
  assert.equal(new Set(colors).size, 36, `distinct colours: ${colors.join(', ')}`);
});

test('a colour stays with its process from tick to tick, and a newcomer does not take the hue of one that left moments ago (still on the timeline)', () => {
  const stay = [50_000, 50_013];
  noteProcesses(onGpu(4, stay));
  const before = stay.map((pid) => processColor(pid));
  for (let i = 0; i < 5; i++) noteProcesses(onGpu(4, stay));
  assert.deepEqual(stay.map((pid) => processColor(pid)), before);
  noteProcesses(onGpu(4, [50_000])); // 50_013 left
  noteProcesses(onGpu(4, [50_000, 50_026]));
  const { distance, pair } = closestHues([50_000, 50_013, 50_026]);
  assert.ok(distance >= 60, `newcomer beside a recent leaver: ${pair} (${distance}°)`);
});

test('processRgb is processColor in 0–255 channels', () => {
  noteProcesses(onGpu(5, [60_000]));
  const { hue, lightness } = hsl(60_000);
  const [r, g, b] = processRgb(60_000);
  const max = Math.max(r, g, b) / 255, min = Math.min(r, g, b) / 255;
  assert.ok(Math.abs((max + min) / 2 - lightness / 100) < 0.01, `lightness ${lightness}% from rgb ${r},${g},${b}`);
  const h = max === r / 255 ? ((g - b) / 255 / (max - min)) * 60 : max === g / 255 ? (2 + (b - r) / 255 / (max - min)) * 60 : (4 + (r - g) / 255 / (max - min)) * 60;
  assert.ok(hueDistance((h + 360) % 360, hue) < 2, `hue ${hue} from rgb ${r},${g},${b}`);
});
