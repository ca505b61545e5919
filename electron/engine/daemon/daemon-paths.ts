// Where the box daemon lives: one owner for these paths (the daemon, its installer, every client).
export const DAEMON_SOCKET = '/run/gpushare/engine.sock';
export const DAEMON_DB = '/var/lib/gpushare/usage.db';
export const DAEMON_CONFIG = '/etc/gpushare/config.json';
/** The admin's lab list (`gpushare lab`): the boxes everyone's hub reaches. */
export const ADMIN_LAB_FILE = '/etc/gpushare/lab.json';
/** The loader's box-wide preload list (`daemon install --preload-all`). */
export const LD_SO_PRELOAD = '/etc/ld.so.preload';
/** The systemd unit `gpushare daemon install` writes, and how it is started. */
export const UNIT_PATH = '/etc/systemd/system/gpushare.service';
export const START_COMMAND = 'systemctl daemon-reload && systemctl enable --now gpushare';

/** The box daemon's socket for clients; GPUSHARE_DAEMON_SOCKET points elsewhere (tests, a daemon started with --socket). */
export const daemonSocketPath = (env: NodeJS.ProcessEnv = process.env): string => env.GPUSHARE_DAEMON_SOCKET || DAEMON_SOCKET;
