// The line `gpushare enrol --shell bash|zsh` prints (and --install appends to the rc file): it loads the
// preload library into every program of the user's sessions, once however often the rc file is read.
// A program that never touches the CUDA driver does not notice it; one that does enrols at its first call.

export const ENROL_SHELLS = ['bash', 'zsh'] as const;
export type EnrolShell = (typeof ENROL_SHELLS)[number];

/** The marker that says the line is gpushare's (so --install adds it once). */
export const SHELL_LINE_MARK = '# gpushare enrol';

/** The rc file each shell reads for interactive sessions, under the home directory. */
export const RC_FILES: Record<EnrolShell, string> = { bash: '.bashrc', zsh: '.zshrc' };

const quoted = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** The line for `shell` (the same text works in bash and zsh): LD_PRELOAD gains the library unless it has it. */
export function shellLine(shell: EnrolShell, library: string): string {
  if (!ENROL_SHELLS.includes(shell)) throw new Error(`gpushare enrol --shell: ${JSON.stringify(shell)} is not one of ${ENROL_SHELLS.join(', ')}`);
  if (/[\s:]/.test(library)) throw new Error(`The preload library's path ${JSON.stringify(library)} holds a space or a colon, which LD_PRELOAD cannot carry.`);
  const lib = quoted(library);
  return `case ":$LD_PRELOAD:" in *:${lib}:*) ;; *) export LD_PRELOAD=${lib}"\${LD_PRELOAD:+:$LD_PRELOAD}" ;; esac ${SHELL_LINE_MARK} (${shell})`;
}
