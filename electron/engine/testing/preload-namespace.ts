// A private mount namespace whose /etc/ld.so.preload is a test file: /etc becomes an overlay of the real one
// (its upper layer in a temp dir), so this machine's /etc is never touched; the file is bind-mounted onto an
// empty stand-in there. Optionally the admin's kill switch (/etc/gpushare/preload-off) exists in it too.
import { spawnSync } from 'node:child_process';

const SCRIPT = `set -e
upper=$(mktemp -d "$GS_NS_WORK/upper.XXXXXX"); mkdir "$upper/u" "$upper/w"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$upper/u,workdir=$upper/w" /etc
: > /etc/ld.so.preload
mount --bind "$GS_NS_PRELOAD" /etc/ld.so.preload
if [ -n "$GS_NS_KILL_SWITCH" ]; then mkdir -p /etc/gpushare; : > /etc/gpushare/preload-off; fi
unset GS_NS_WORK GS_NS_PRELOAD GS_NS_KILL_SWITCH upper
exec "$@"`;

export interface PreloadNamespace {
  /** The file mounted as /etc/ld.so.preload. */
  preloadFile: string;
  /** A directory for the overlay's layers (left for the caller to remove). */
  work: string;
  killSwitch?: boolean;
}

/** The command line that runs argv in such a namespace, and the variables it needs (merge into the env). */
export function inPreloadNamespace(ns: PreloadNamespace, argv: string[]): { file: string; args: string[]; env: Record<string, string> } {
  return {
    file: 'unshare',
    args: ['-m', '--propagation', 'private', '/bin/sh', '-c', SCRIPT, 'sh', ...argv],
    env: { GS_NS_WORK: ns.work, GS_NS_PRELOAD: ns.preloadFile, GS_NS_KILL_SWITCH: ns.killSwitch ? '1' : '' },
  };
}

/** Why such a namespace cannot be made here, or null. */
export function preloadNamespaceUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'needs root: a private mount namespace and an overlay on /etc';
  if (spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status !== 0) return 'unshare -m is refused here';
  return null;
}
