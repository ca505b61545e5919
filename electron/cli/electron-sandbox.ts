// Can Electron start Chromium's sandbox here? Asked by the launcher before Electron runs, because a
// zygote that cannot sandbox itself aborts before the app can print a word. Chromium on Linux needs
// one of two things: unprivileged user namespaces (its namespace sandbox), or chrome-sandbox
// installed setuid root (the SUID helper it falls back to); and it refuses to run as root at all.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What the machine says, read once by sandboxFacts (tests pass their own). */
export interface SandboxFacts {
  uid: number;
  /** <electron dist>/chrome-sandbox as stat sees it; null when it is missing. */
  chromeSandbox: { path: string; uid: number; mode: number } | null;
  /** /proc/sys/kernel/unprivileged_userns_clone (Debian's switch); null where the kernel has no such file. */
  unprivilegedUsernsClone: number | null;
  /** /proc/sys/user/max_user_namespaces; null when unreadable. */
  maxUserNamespaces: number | null;
  /** /proc/sys/kernel/apparmor_restrict_unprivileged_userns (Ubuntu 23.10+); null where absent. */
  apparmorRestrictsUserns: number | null;
  /** The user passed --no-sandbox themselves. */
  noSandboxAsked: boolean;
}

export type SandboxVerdict =
  | { kind: 'ok'; how: 'user-namespaces' | 'setuid-helper' }
  /** Electron runs, unsandboxed, because the user asked: say what that costs. */
  | { kind: 'unsandboxed'; warning: string }
  /** Electron would abort: what is wrong and what to do, in a few sentences. */
  | { kind: 'cannot'; problem: string };

const NO_SANDBOX_COST = 'the console page then runs without Chromium\'s sandbox, so a flaw in it would have all of your rights on this machine';

export function sandboxVerdict(facts: SandboxFacts): SandboxVerdict {
  if (facts.noSandboxAsked) return { kind: 'unsandboxed', warning: `gpushare start: --no-sandbox: ${NO_SANDBOX_COST}.` };
  if (facts.uid === 0) {
    return {
      kind: 'cannot',
      problem:
        'The desktop app cannot run as root: Chromium refuses to start its sandbox for root. ' +
        `Run gpushare start as your own user (the box daemon is the part that runs as root), or pass --no-sandbox knowing that ${NO_SANDBOX_COST.replace('your', 'root\'s')}.`,
    };
  }
  const blocked = usernsBlocked(facts);
  if (blocked === null) return { kind: 'ok', how: 'user-namespaces' };
  const helper = facts.chromeSandbox;
  if (helper && helper.uid === 0 && (helper.mode & 0o4755) === 0o4755 && (helper.mode & 0o022) === 0) return { kind: 'ok', how: 'setuid-helper' };
  const helperState = !helper
    ? 'and chrome-sandbox is missing from the Electron distribution (reinstall it: rm -rf node_modules/electron/dist, then npm start fetches it again)'
    : `and ${helper.path} is not setuid root (owner uid ${helper.uid}, mode ${(helper.mode & 0o7777).toString(8).padStart(4, '0')}; it must be root's with mode 4755)`;
  const fixHelper = helper ? `sudo chown root:root ${helper.path} && sudo chmod 4755 ${helper.path}` : null;
  return {
    kind: 'cannot',
    problem:
      `Electron cannot start Chromium's sandbox here: ${blocked.why}, ${helperState}. ` +
      `Either ${fixHelper ? `make the helper setuid root: ${fixHelper}` : 'reinstall Electron'}; or ${blocked.fix}. ` +
      `gpushare start --browser opens the console in your browser instead; --no-sandbox would run it anyway, but ${NO_SANDBOX_COST}.`,
  };
}

/** Why unprivileged user namespaces cannot be had, and the sysctl that allows them; null when they can. */
function usernsBlocked(facts: SandboxFacts): { why: string; fix: string } | null {
  if (facts.unprivilegedUsernsClone === 0) {
    return { why: 'unprivileged user namespaces are off (kernel.unprivileged_userns_clone = 0)', fix: 'allow them: sudo sysctl -w kernel.unprivileged_userns_clone=1' };
  }
  if (facts.maxUserNamespaces === 0) {
    return { why: 'user namespaces are off (user.max_user_namespaces = 0)', fix: 'allow them: sudo sysctl -w user.max_user_namespaces=15000' };
  }
  if (facts.apparmorRestrictsUserns === 1) {
    return {
      why: 'AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)',
      fix: 'give Electron an AppArmor profile with "userns," or lift the restriction: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0',
    };
  }
  return null;
}

/** The facts for the Electron executable about to run, read from stat and /proc. */
export function sandboxFacts(executable: string, argv: readonly string[], procRoot = '/proc'): SandboxFacts {
  const helperPath = join(dirname(executable), 'chrome-sandbox');
  let chromeSandbox: SandboxFacts['chromeSandbox'] = null;
  try {
    const info = statSync(helperPath);
    chromeSandbox = { path: helperPath, uid: info.uid, mode: info.mode };
  } catch {
    chromeSandbox = null;
  }
  return {
    uid: process.getuid?.() ?? 0,
    chromeSandbox,
    unprivilegedUsernsClone: readNumber(join(procRoot, 'sys', 'kernel', 'unprivileged_userns_clone')),
    maxUserNamespaces: readNumber(join(procRoot, 'sys', 'user', 'max_user_namespaces')),
    apparmorRestrictsUserns: readNumber(join(procRoot, 'sys', 'kernel', 'apparmor_restrict_unprivileged_userns')),
    noSandboxAsked: argv.includes('--no-sandbox'),
  };
}

function readNumber(path: string): number | null {
  try {
    const value = Number(readFileSync(path, 'utf8').trim());
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}
