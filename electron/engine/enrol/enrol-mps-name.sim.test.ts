// Enrolment refuses the engine's own MPS processes (a server one of its control daemons started) but not a
// process that merely takes the name: another user's process called nvidia-cuda-mps-server (prctl, a symlink:
// /proc/PID/comm) enrols as that user's job, gated and counted like any other.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { parentWithChildren } from '../../testing/parent-with-children.js';
import { until } from '../../testing/until.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { mpsDirectories } from '../mps/mps-control.js';
import { RealMpsControl } from '../mps/real-mps-control.js';
import { socketSchedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import type { Enrolment } from './enrolment.js';

let driver: SimulatedDriver;
let nvml: NvmlBinding;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-enrol-mps-', (rig) => ({ driver, nvml } = rig));
const skip = process.getuid?.() === 0 ? false : 'needs root: the processes run as another user (nobody)';
const NOBODY = 65534;

/** A process of nobody's that names itself nvidia-cuda-mps-server (prctl PR_SET_NAME), under a parent named `argv0` with this MPS pipe. */
async function namedServer(t: TestContext, argv0: string, pipeDir: string): Promise<number> {
  const renameAndSleep = 'import ctypes, time; ctypes.CDLL(None).prctl(15, b"nvidia-cuda-mps-server", 0, 0, 0); time.sleep(60)';
  // its command line and its comm: the server's
  const script = `setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups bash -c 'exec -a nvidia-cuda-mps-server /usr/bin/python3 -c "$RENAME_AND_SLEEP"' & wait`;
  const env = { PATH: '/usr/bin:/bin', CUDA_MPS_PIPE_DIRECTORY: pipeDir, RENAME_AND_SLEEP: renameAndSleep };
  const children = parentWithChildren(t, argv0, script, { cwd: '/', env });
  // the kernel keeps 15 bytes of the name
  return until('the renamed process running as nobody', () => children().find((p) => readFileSync(`/proc/${p}/comm`, 'latin1') === 'nvidia-cuda-mps\n'), { tries: 300, intervalMs: 10 });
}

test("a user's process named nvidia-cuda-mps-server enrols as theirs; the server our own MPS control daemon started is refused as the engine's", { skip }, async (t) => {
  const name = 'enrol-mps';
  const open = mkdtempSync('/tmp/gpushare-enrol-mps-'); // every user can traverse it (not a private TMPDIR): nobody's job reaches its gate there
  chmodSync(open, 0o755);
  cleanups.push(() => rmSync(open, { recursive: true, force: true }));
  const runtimeDir = join(open, name, 'run');
  const me = userInfo();
  const mps = new RealMpsControl({ runtimeDir, identity: { uid: me.uid, user: me.username } }); // this box's own /proc
  const { r } = await socketSchedulerRig({ driver, nvml, dir: open }, name, { mps }, cleanups);
  const enrolment = r.engine.enroller as Enrolment;
  const ourPipe = mpsDirectories(runtimeDir, 0).pipeDir;
  const own = await namedServer(t, 'nvidia-cuda-mps-control', ourPipe); // what our `nvidia-cuda-mps-control -d` forks for a client of nobody's
  const forged = await namedServer(t, 'bash', ourPipe); // our pipe copied, its parent nobody's shell, no control daemon of ours

  const refused = enrolment.join({ pid: own, uid: NOBODY, gid: NOBODY });
  assert.deepEqual(refused.ok ? 'granted' : refused.code, 'engine', 'our own MPS server is never a job');
  const granted = enrolment.join({ pid: forged, uid: NOBODY, gid: NOBODY });
  assert.equal(granted.ok, true, `the forged server enrols: ${granted.ok ? '' : granted.message}`);
  const job = (await r.engine.call('jobs.list', {})).find((j) => j.id === (granted.ok ? granted.jobId : ''));
  assert.equal(job?.uid, NOBODY, "its job is its owner's");
  assert.ok(job?.enrolled, 'enrolled: gated and counted like any of their processes');
});
