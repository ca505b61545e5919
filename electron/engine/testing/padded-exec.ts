// Test fixture: a command whose argument list or environment a shell pads to megabytes, past what Node's own exec
// may pass (its stack limit allows 2 MB), as any user's shell with a raised stack limit can (the kernel allows 6 MB).
// What a careless or hostile process shows the engine in /proc/PID/cmdline and environ.

export interface Padding {
  /** About this many bytes of extra arguments after the command's own (in pieces of 131,000: the kernel's bound on one). */
  argBytes?: number;
  /** About this many bytes of extra environment (GPST_PAD_i=…), before `envAfter`. */
  envBytes?: number;
  /** The byte the padding is made of: 'x', or a control character (JSON writes \u0001 as six bytes). */
  fill?: string;
  /** Variables set after the padding: the last entries of /proc/PID/environ. */
  envAfter?: Record<string, string>;
}

const PIECE = 131_000;

const SCRIPT = `
ulimit -s unlimited 2>/dev/null || ulimit -s "$(ulimit -Hs)"
pad=$(head -c ${PIECE} /dev/zero | tr '\\0' "$GPST_FILL")
a=(); for ((i = 0; i < GPST_ARGS; i++)); do a+=("$pad"); done
e=(); for ((i = 0; i < GPST_ENVS; i++)); do e+=("GPST_PAD_$i=$pad"); done
unset GPST_FILL GPST_ARGS GPST_ENVS
exec env "\${e[@]}" "$@" "\${a[@]}"`;

/** argv for spawn (bash first) and the variables it needs beside the command's own environment. */
export function paddedExec(command: readonly string[], padding: Padding): { argv: string[]; env: Record<string, string> } {
  const fill = padding.fill ?? 'x';
  if (fill.length !== 1 || fill === '\0') throw new Error('the padding is one non-NUL byte');
  const after = Object.entries(padding.envAfter ?? {}).map(([name, value]) => `${name}=${value}`);
  if (command.some((arg, i) => i === 0 && arg.includes('='))) throw new Error('env would take the command for a variable');
  return {
    argv: ['bash', '-c', SCRIPT, 'padded', ...after, ...command],
    env: {
      GPST_FILL: `\\${fill.charCodeAt(0).toString(8).padStart(3, '0')}`,
      GPST_ARGS: String(Math.ceil((padding.argBytes ?? 0) / (PIECE + 1))),
      GPST_ENVS: String(Math.ceil((padding.envBytes ?? 0) / (PIECE + 12))),
    },
  };
}
