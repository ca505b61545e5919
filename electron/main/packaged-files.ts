// Every file the installed app opens at run time, relative to its package root, and whether it must
// be a real file outside app.asar (dlopen, exec, LD_PRELOAD by another process). The packaging test
// holds electron-builder.yml to this list; the deb's systemd unit is rendered from the daemon's template.
import { renderUnit } from '../cli/commands/daemon-install.js';
import { TRAY_ICON_SIZES } from './tray-icons.js';

export interface RuntimeFile {
  /** Relative to the package root, with forward slashes. */
  path: string;
  /** Must be unpacked from the asar (asarUnpack), found through outsideAsar(). */
  unpacked: boolean;
  /** Who opens it. */
  by: string;
}

const packed = (path: string, by: string): RuntimeFile => ({ path, unpacked: false, by });
const unpacked = (path: string, by: string): RuntimeFile => ({ path, unpacked: true, by });

export function runtimeFiles(): RuntimeFile[] {
  return [
    packed('package.json', 'packageRoot() and the CLI\'s --version'),
    packed('dist/electron/main/index.js', 'Electron (package.json main)'),
    packed('dist/electron/preload/preload.cjs', 'the window\'s preload'),
    packed('dist/electron/engine/lab/hub-process-entry.js', 'the Lab view\'s hub (utilityProcess.fork)'),
    packed('dist/renderer/index.html', 'app://console/ (serveRenderer)'),
    packed('electron/cli/gpushare.js', 'the personal engine and the gpushare command on PATH'),
    packed('dist/electron/cli/main.js', 'electron/cli/gpushare.js'),
    packed('assets/icons/256x256.png', 'the window and notification icon'),
    ...(['ok', 'contention', 'alert'] as const).flatMap((state) => TRAY_ICON_SIZES.map((size) => packed(`assets/tray/${state}-${size}.png`, 'the tray'))),
    packed('assets/systemd/gpushare.service', 'gpushare daemon install'),
    unpacked('assets/jupyter/gpushare-kernel.py', 'Jupyter kernels from gpushare jupyter install-kernel (python3 runs it)'),
    unpacked('native/nvml/build/Release/gpushare_nvml.node', 'the engine (dlopen of the NVML addon)'),
    unpacked('native/preload/build/libgpushare-preload.so', 'managed jobs (LD_PRELOAD)'),
    unpacked('native/spawn/build/gpushare-spawn', "the box daemon, starting each user's job as them (exec)"),
    unpacked('native/fakegpu/build/fakegpu', 'the simulated driver (exec)'),
    unpacked('native/fakegpu/build/fakejob', 'the demo\'s simulated jobs (exec)'),
    unpacked('native/fakegpu/build/libnvidia-ml.so.1', 'the simulated driver (dlopen by the addon and jobs)'),
    unpacked('native/fakegpu/build/libcuda.so.1', 'simulated jobs (dlopen)'),
  ];
}

export const INSTALL_DIR = '/opt/gpushare';
export const PACKAGED_APP = `${INSTALL_DIR}/resources/app.asar`;
/** electron-builder.yml's linux.executableName: the packaged Electron. */
export const DESKTOP_EXECUTABLE = `${INSTALL_DIR}/gpushare-desktop`;

/** The box daemon's unit in the deb: the template filled as `gpushare daemon install` would, on the packaged Electron as Node. */
export function packagedUnit(template: string): string {
  const unit = renderUnit(template, { node: DESKTOP_EXECUTABLE, cli: `${PACKAGED_APP}/electron/cli/gpushare.js`, readme: `${PACKAGED_APP}/README.md` });
  return unit.replace(/^(ExecStart=.*)$/m, (line) => `${line}\nEnvironment=ELECTRON_RUN_AS_NODE=1`);
}
