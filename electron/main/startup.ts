// The desktop app's start-up, in order, over the Electron calls index.ts supplies: the single-instance
// lock before anything starts; the window (or an error dialog) before the engine answers; a failure to
// open the console, the engine or its driver shown in a dialog and the app quit, never left running
// invisible; the tray and notifications last, and only they may fail quietly.

export interface StartupShell<Link, View> {
  /** Electron's single-instance lock (false: another instance has it and shows its window). */
  requestSingleInstanceLock(): boolean;
  /** What must happen before ready: the app:// scheme, web-contents lockdown, second-instance, before-quit. */
  beforeReady(): void;
  whenReady(): Promise<void>;
  /** Permissions denied and app:// served; throws (saying what is missing) when the console cannot be shown. */
  prepareConsole(): void;
  /** Start finding or starting the engine (the window relays to it once it answers). */
  openEngine(): Promise<Link>;
  showWindow(): void;
  errorDialog(title: string, body: string): void;
  /** Quit now, without the quit sequence (there is nothing of ours to stop). */
  exit(code: number): void;
  /** Quit began meanwhile (before-quit stops whatever was started). */
  quitting(): boolean;
  /** The tray's and notifications' own connection. */
  openView(link: Link): Promise<View>;
  closeView(view: View): void;
  /** Tray (where there is a host) and notifications; also watches the link for a lost engine. */
  attachDesktop(link: Link, view: View): Promise<void>;
  log(line: string): void;
}

export type StartupOutcome =
  | 'second-instance'
  | 'no-console'
  | 'no-engine'
  | 'quit-while-starting'
  /** The window works; the tray and notifications do not (said on stderr). */
  | 'window-only'
  | 'running';

export async function startApp<Link, View>(shell: StartupShell<Link, View>): Promise<StartupOutcome> {
  if (!shell.requestSingleInstanceLock()) {
    shell.exit(0);
    return 'second-instance';
  }
  shell.beforeReady();
  await shell.whenReady();
  try {
    shell.prepareConsole();
  } catch (error) {
    return fail(shell, 'gpushare cannot show its console', error, 'no-console');
  }
  const linkReady = shell.openEngine();
  linkReady.catch(() => undefined); // awaited below, after the window is up
  shell.showWindow(); // it says "connecting…" while a personal engine starts
  let link: Link;
  try {
    link = await linkReady;
  } catch (error) {
    if (shell.quitting()) return 'quit-while-starting';
    return fail(shell, 'gpushare could not start its engine', error, 'no-engine');
  }
  if (shell.quitting()) return 'quit-while-starting';
  let view: View;
  try {
    view = await shell.openView(link);
  } catch (error) {
    shell.log(`gpushare: no tray or notifications this time: ${message(error)}`);
    return 'window-only';
  }
  if (shell.quitting()) {
    shell.closeView(view);
    return 'quit-while-starting';
  }
  await shell.attachDesktop(link, view);
  return 'running';
}

function fail<Outcome>(shell: StartupShell<unknown, unknown>, title: string, error: unknown, outcome: Outcome): Outcome {
  shell.errorDialog(title, message(error));
  shell.exit(1);
  return outcome;
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));
