// A stand-in nvidia-cuda-mps-control for the real MPS backend's tests, in a directory the test owns:
// `-d` records its environment (started()) and shows a control daemon, pid 4242, in the test's /proc;
// a command on stdin is recorded as "CMD via PIPE_DIR". `quit` takes the daemon out of /proc at once,
// or, with quitLeavesDaemon, leaves it there for the test to remove, as a real control daemon can still
// run after quit returned.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MpsControlStandIn {
  program: string;
  proc: string;
  /** What it was asked, in order: "-d", then "quit via /pipe/dir" and the like. */
  commands(): string[];
  /** The CUDA_* environment its last `-d` ran with, one sorted NAME=value line each. */
  started(): string;
  /** Its last `-d`'s whole environment (what its shell adds included). */
  environment(): Map<string, string>;
}

export function mpsControlStandIn(dir: string, options: { quitLeavesDaemon?: boolean } = {}): MpsControlStandIn {
  const proc = join(dir, 'proc');
  mkdirSync(proc, { recursive: true });
  const program = join(dir, 'nvidia-cuda-mps-control');
  writeFileSync(
    program,
    `#!/bin/sh
if [ "$1" = "-d" ]; then
  echo "-d" >> "${dir}/commands"
  env | grep -E '^CUDA_(VISIBLE_DEVICES|MPS_PIPE_DIRECTORY|MPS_LOG_DIRECTORY)=' | sort > "${dir}/started"
  env > "${dir}/environment"
  mkdir -p "${proc}/4242"
  printf 'nvidia-cuda-mps-control\\0-d\\0' > "${proc}/4242/cmdline"
  echo '4242 (nvidia-cuda-mps) S 1 4242' > "${proc}/4242/stat"
  printf 'CUDA_VISIBLE_DEVICES=%s\\0CUDA_MPS_PIPE_DIRECTORY=%s\\0' "$CUDA_VISIBLE_DEVICES" "$CUDA_MPS_PIPE_DIRECTORY" > "${proc}/4242/environ"
  exit 0
fi
read cmd
echo "$cmd via $CUDA_MPS_PIPE_DIRECTORY" >> "${dir}/commands"
${options.quitLeavesDaemon ? '' : `[ "$cmd" = quit ] && rm -rf "${proc}/4242"`}
exit 0
`,
  );
  chmodSync(program, 0o755);
  return {
    program,
    proc,
    commands: () => readFileSync(join(dir, 'commands'), 'utf8').trim().split('\n'),
    started: () => readFileSync(join(dir, 'started'), 'utf8'),
    environment: () => new Map(readFileSync(join(dir, 'environment'), 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])),
  };
}
