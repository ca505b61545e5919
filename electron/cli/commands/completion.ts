// `gpushare completion bash|zsh`: a completion script generated from the command table, so it
// offers exactly the commands, subcommands and options the dispatcher knows.
import { UsageError } from '../args.js';
import type { CliCommand } from '../command-table.js';
import { completionUsage } from '../usage.js';

const SHELLS = ['bash', 'zsh'] as const;

export async function completionCommand(argv: string[], commands: readonly CliCommand[]): Promise<number> {
  if (argv.length !== 1 || !(SHELLS as readonly string[]).includes(argv[0])) {
    throw new UsageError(`Which shell? bash or zsh${argv.length ? `, got "${argv.join(' ')}"` : ''}.\n${completionUsage}`);
  }
  process.stdout.write(argv[0] === 'bash' ? bashCompletion(commands) : zshCompletion(commands));
  return 0;
}

/** Long options in a usage text ("--gpu", "--json", …), always with --help. */
export function optionsIn(usage: string): string[] {
  return [...new Set([...(usage.match(/--[a-z][a-z-]*/g) ?? []), '--help'])].sort();
}

/** The words to offer: at the command (depth 1), after a command (depth 2), after a subcommand (depth 3). */
interface Offers {
  top: string[];
  /** command → words offered right after it (its subcommands and options). */
  second: Map<string, string[]>;
  /** "command sub" → options offered after the subcommand. */
  third: Map<string, string[]>;
}

function offers(commands: readonly CliCommand[]): Offers {
  const second = new Map<string, string[]>();
  const third = new Map<string, string[]>();
  for (const command of commands) {
    const subs = Object.keys(command.subcommands ?? {});
    second.set(command.name, [...subs, ...optionsIn(command.usage)]);
    for (const sub of subs) third.set(`${command.name} ${sub}`, optionsIn(command.subcommands![sub]));
  }
  return { top: [...commands.map((c) => c.name), 'help', '--help', '--version'], second, third };
}

// Every word is [a-z0-9-]: safe inside single quotes in both shells.
const words = (list: string[]): string => `'${list.join(' ')}'`;

export function bashCompletion(commands: readonly CliCommand[]): string {
  const { top, second, third } = offers(commands);
  return `# gpushare completion for bash: source <(gpushare completion bash)
_gpushare() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd=\${COMP_WORDS[1]} sub=\${COMP_WORDS[2]} offer=
  if [ "$COMP_CWORD" -eq 1 ]; then
    offer=${words(top)}
  elif [ "$COMP_CWORD" -eq 2 ] || [ "$cmd" = help ]; then
    case "$cmd" in
${[...second].map(([name, list]) => `      ${name}) offer=${words(list)} ;;`).join('\n')}
      help) offer=${words(commands.map((c) => c.name))} ;;
    esac
  else
    case "$cmd $sub" in
${[...third].map(([key, list]) => `      '${key}') offer=${words(list)} ;;`).join('\n')}
      *) case "$cmd" in
${[...second].map(([name, list]) => `          ${name}) offer=${words(list.filter((w) => w.startsWith('-')))} ;;`).join('\n')}
         esac ;;
    esac
  fi
  COMPREPLY=($(compgen -W "$offer" -- "$cur"))
}
complete -o default -F _gpushare gpushare
`;
}

export function zshCompletion(commands: readonly CliCommand[]): string {
  const { top, second, third } = offers(commands);
  return `#compdef gpushare
# gpushare completion for zsh: source <(gpushare completion zsh) after compinit
_gpushare() {
  local -a offer
  if (( CURRENT == 2 )); then
    offer=(${top.join(' ')})
  elif (( CURRENT == 3 )) || [[ $words[2] == help ]]; then
    case $words[2] in
${[...second].map(([name, list]) => `      ${name}) offer=(${list.join(' ')}) ;;`).join('\n')}
      help) offer=(${commands.map((c) => c.name).join(' ')}) ;;
    esac
  else
    case "$words[2] $words[3]" in
${[...third].map(([key, list]) => `      '${key}') offer=(${list.join(' ')}) ;;`).join('\n')}
      *) case $words[2] in
${[...second].map(([name, list]) => `          ${name}) offer=(${list.filter((w) => w.startsWith('-')).join(' ')}) ;;`).join('\n')}
         esac ;;
    esac
  fi
  compadd -a offer
  # paths for --db, --config, -o and the command after run's "--"
  if (( CURRENT > 2 )) && [[ $PREFIX != -* ]]; then _files; fi
}
compdef _gpushare gpushare
`;
}
