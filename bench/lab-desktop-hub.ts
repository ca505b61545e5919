// bench/desktop-lab's app side: the desktop app's main-process part of the Lab view (electron/main/lab-windows.ts
// and lab-hub-child.ts, relaying bytes), the hub in a child process of its own (child_process.fork standing in
// for Electron's utilityProcess), over COUNT boxes' sockets in DIR; one window on it: none (the hub started by a
// Lab window that closed), a Lab window, or one box's console. Each message to a window is structured-cloned, as
// Electron's IPC does (the hub's lines are text: the window's preload parses them). Run: node lab-desktop-hub.js DIR COUNT lab|box|none; prints "ready N PID" once every box
// is connected (N of them) and the window is open, PID the hub's process; then each second the messages relayed
// and the ms spent cloning them.
import { join } from 'node:path';
import { parseLabList } from '../shared/lab.js';
import { LAB_EVENT, type LabConsoleUpdate } from '../shared/lab-console.js';
import type { HubChild } from '../electron/engine/lab/hub-process-protocol.js';
import { forkNodeHub } from '../electron/engine/lab/testing/node-hub-process.js';
import { desktopLab } from '../electron/main/lab-windows.js';
import type { ToWindowOrText } from '../electron/main/window-relay.js';
import { until } from '../electron/testing/until.js';

const [dir, count, window] = [process.argv[2], Number(process.argv[3]), process.argv[4]];
const boxes = parseLabList({ boxes: Array.from({ length: count }, (_, i) => ({ name: `box${i + 1}`, socket: join(dir, `box${i + 1}.sock`) })) });
let hub: HubChild | null = null;
const lab = desktopLab({
  readList: () => ({ boxes, files: [], looked: { admin: '', own: '' } }),
  forkHub: () => (hub = forkNodeHub()),
  hubOptions: { socketDir: join(dir, 'desktop-lab') },
});
let relayed = 0;
let cloneMs = 0;
let counting = false;
const toWindow = (message: ToWindowOrText): void => {
  if (!counting) return;
  const t0 = performance.now();
  structuredClone(message);
  cloneMs += performance.now() - t0;
  relayed++;
};
// the hub starts as the first Lab window would start it; that window tells when every box is connected
let connected = 0;
const labWindow = lab.openRelay(new URLSearchParams('lab=1'), (message) => {
  // the bench reads the lab's lines (as a preload would) only until every box is connected, so its reading costs nothing measured
  if (!counting && typeof message === 'string' && message.includes(`"event":"${LAB_EVENT}"`)) connected = (JSON.parse(message) as { data: LabConsoleUpdate }).data.totals.connected;
  toWindow(message);
});
labWindow.receive({ kind: 'subscribe', events: [LAB_EVENT] });
await until('every box connected', () => connected === count, { timeoutMs: 60_000 }).catch(() => undefined);
if (window !== 'lab') labWindow.close();
if (window === 'box') lab.openRelay(new URLSearchParams('box=box1'), toWindow).receive({ kind: 'subscribe', events: ['snapshot'] });
counting = true;
process.stdout.write(`ready ${connected} ${hub!.pid}\n`);
setInterval(() => process.stdout.write(`${relayed} ${cloneMs.toFixed(1)}\n`), 1000);
