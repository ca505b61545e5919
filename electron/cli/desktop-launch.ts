// Whether `gpushare start` can open the desktop app, in the order the checks cost: a display, then
// Electron's binary (fetched when missing), then Chromium's sandbox. Each "no" is said in one
// sentence, and the browser console opens instead.
import { ensureElectron, fallbackSentence, type FetchOutcome } from './electron-fetch.js';
import { sandboxVerdict, type SandboxFacts } from './electron-sandbox.js';

export interface DesktopLaunchDeps {
  env: NodeJS.ProcessEnv;
  find(): string | null;
  fetch(): Promise<FetchOutcome>;
  sandboxFacts(executable: string): SandboxFacts;
  say(line: string): void;
}

/** The Electron executable to run the desktop app with; null (having said why) where the browser console opens instead. */
export async function desktopElectron(deps: DesktopLaunchDeps): Promise<string | null> {
  if (!deps.env.DISPLAY && !deps.env.WAYLAND_DISPLAY) {
    deps.say('There is no display here (neither DISPLAY nor WAYLAND_DISPLAY is set), so gpushare opens the browser console instead.');
    return null;
  }
  const found = await ensureElectron(deps);
  if (found.executable === null) {
    deps.say(fallbackSentence(found.why));
    return null;
  }
  // checked before it runs: a zygote that cannot sandbox itself aborts before the app can say why
  const sandbox = sandboxVerdict(deps.sandboxFacts(found.executable));
  if (sandbox.kind === 'cannot') {
    deps.say(`${sandbox.problem} The browser console opens now instead.`);
    return null;
  }
  if (sandbox.kind === 'unsandboxed') deps.say(sandbox.warning);
  return found.executable;
}
