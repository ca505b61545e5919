// bench/desktop-lab's hub: the desktop app's main-process side of the Lab view (electron/main/lab-windows.ts:
// the hub, and the relay of WINDOWS windows: 0, or Lab windows, or one box's console), over COUNT boxes'
// sockets in DIR, in a process of its own so its CPU is measured alone. Each message to a window is
// structured-cloned, as Electron's IPC does. Run: node lab-desktop-hub.js DIR COUNT lab|box|none;
// prints "ready N" once every box answered and the window is open, then each second the messages relayed and the ms spent cloning them.
import { join } from 'node:path';
import { parseLabList } from '../shared/lab.js';
import { LAB_EVENT } from '../shared/lab-console.js';
import { LabHub } from '../electron/engine/lab/lab-hub.js';
import { desktopLab } from '../electron/main/lab-windows.js';

const [dir, count, window] = [process.argv[2], Number(process.argv[3]), process.argv[4]];
const boxes = parseLabList({ boxes: Array.from({ length: count }, (_, i) => ({ name: `box${i + 1}`, socket: join(dir, `box${i + 1}.sock`) })) });
let hub: LabHub | null = null;
const lab = desktopLab({
  readList: () => ({ boxes, files: [], looked: { admin: '', own: '' } }),
  openHub: (list) => (hub = new LabHub(list, { socketDir: join(dir, 'desktop-lab') })),
});
let relayed = 0;
let cloneMs = 0;
// with no window, the hub starts as the first Lab window would start it, and the window closes at once
const relay = lab.openRelay(new URLSearchParams(window === 'box' ? 'box=box1' : 'lab=1'), (message) => {
  const t0 = performance.now();
  structuredClone(message);
  cloneMs += performance.now() - t0;
  relayed++;
});
relay.receive({ kind: 'subscribe', events: [window === 'box' ? 'snapshot' : LAB_EVENT] });
if (window === 'none') relay.close();
await hub!.settled(60_000);
const connected = hub!.snapshot().boxes.filter((b) => b.connection.state === 'connected').length;
process.stdout.write(`ready ${connected}\n`);
setInterval(() => process.stdout.write(`${relayed} ${cloneMs.toFixed(1)}\n`), 1000);
