// bench/lab's hub: the console host of `gpushare start --lab` (the hub, its lab sessions and the
// console on loopback) over COUNT boxes' sockets in DIR, in a process of its own so that its CPU is
// measured alone. Run: node lab-hub.js DIR COUNT; prints the Lab view's URL once every box answered.
import { join } from 'node:path';
import { parseLabList } from '../shared/lab.js';
import { labConsoleHref } from '../shared/lab-console.js';
import { labConsoleSessions } from '../electron/engine/lab/lab-console-sessions.js';
import { LabHub } from '../electron/engine/lab/lab-hub.js';
import { serveConsoleOnLoopback } from '../electron/engine/server/web-server.js';

const [dir, count] = [process.argv[2], Number(process.argv[3])];
const specs = parseLabList({ boxes: Array.from({ length: count }, (_, i) => ({ name: `box${i + 1}`, socket: join(dir, `box${i + 1}.sock`) })) });
const hub = new LabHub(specs, { socketDir: join(dir, 'lab') });
hub.start();
await hub.settled(60_000);
const web = await serveConsoleOnLoopback(labConsoleSessions(hub));
const connected = hub.snapshot().boxes.filter((b) => b.connection.state === 'connected').length;
process.stdout.write(`${labConsoleHref(web.url, null)} ${connected}\n`);
