// Is there a tray to live in? Electron's Linux tray is a StatusNotifierItem, shown only where a
// StatusNotifierWatcher owns its name on the session bus (KDE, XFCE, Cinnamon, MATE, LXQt, Budgie,
// Ubuntu's GNOME with its AppIndicator extension; stock GNOME has none). Without one the icon is
// invisible, so closing the window must quit instead of leaving an app nobody can reach.
import { execFile } from 'node:child_process';

export const WATCHER_NAME = 'org.kde.StatusNotifierWatcher';

export interface TrayHostFacts {
  /** The session bus's answer to NameHasOwner(WATCHER_NAME); null when no bus tool could ask it. */
  watcherOwned: boolean | null;
  /** $XDG_CURRENT_DESKTOP, e.g. "KDE", "ubuntu:GNOME", "GNOME". */
  currentDesktop: string | undefined;
}

export interface TrayHostDecision {
  /** Show a tray icon, and keep running when the window closes. */
  tray: boolean;
  why: string;
}

// Desktops whose panel hosts StatusNotifierItems out of the box (asked only when the bus could not be).
const HOSTING_DESKTOPS = ['kde', 'xfce', 'x-cinnamon', 'cinnamon', 'mate', 'lxqt', 'budgie', 'unity', 'pantheon', 'deepin', 'ubuntu'];

export function trayHostDecision(facts: TrayHostFacts): TrayHostDecision {
  if (facts.watcherOwned === true) return { tray: true, why: `${WATCHER_NAME} is on the session bus` };
  if (facts.watcherOwned === false) return { tray: false, why: `no tray host on the session bus (nobody owns ${WATCHER_NAME}): closing the window quits` };
  const desktops = (facts.currentDesktop ?? '').toLowerCase().split(':').filter(Boolean);
  const hosting = desktops.find((d) => HOSTING_DESKTOPS.includes(d));
  if (hosting) return { tray: true, why: `the session bus could not be asked; ${facts.currentDesktop} hosts tray icons` };
  // unknown or stock GNOME: an invisible app is worse than one that quits with its window
  return { tray: false, why: `the session bus could not be asked and ${facts.currentDesktop ? `${facts.currentDesktop} may not host tray icons` : 'the desktop is unknown'}: closing the window quits` };
}

/** gdbus's "(true,)" or dbus-send's "boolean true"; null for anything else. */
export function parseNameHasOwner(output: string): boolean | null {
  const text = output.trim();
  if (/^\(true,?\)$/.test(text) || /\bboolean true\b/.test(text)) return true;
  if (/^\(false,?\)$/.test(text) || /\bboolean false\b/.test(text)) return false;
  return null;
}

const BUS_PROBES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['gdbus', ['call', '--session', '--dest', 'org.freedesktop.DBus', '--object-path', '/org/freedesktop/DBus', '--method', 'org.freedesktop.DBus.NameHasOwner', WATCHER_NAME]],
  ['dbus-send', ['--session', '--print-reply', '--dest=org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus.NameHasOwner', `string:${WATCHER_NAME}`]],
];

/** Asks the session bus with gdbus, else dbus-send (2 s each at most); null when neither answers. */
export async function askWatcherOwned(run = runTool): Promise<boolean | null> {
  for (const [tool, args] of BUS_PROBES) {
    const answer = parseNameHasOwner((await run(tool, args)) ?? '');
    if (answer !== null) return answer;
  }
  return null;
}

function runTool(tool: string, args: readonly string[]): Promise<string | null> {
  return new Promise((resolve) => execFile(tool, [...args], { timeout: 2000 }, (error, stdout) => resolve(error ? null : stdout)));
}
