// A gauge family with many labelled series (one per GPU process, one per job), written straight to
// exposition text. prom-client's registry hashes and re-escapes every sample on each scrape; for
// 8 GPUs × 64 processes that alone took ~10 ms, twice the budget (DESIGN §7), so these families
// build their lines once per scrape and join them after prom-client's own metrics.

export class GaugeFamily {
  private lines: string[] = [];
  private readonly header: string;

  constructor(
    readonly name: string,
    readonly help: string,
  ) {
    this.header = `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} gauge`;
  }

  /** Start a scrape: no series until set again (a departed process's series is gone). */
  reset(): void {
    this.lines = [];
  }

  /** One series, its labels written by labelText (families with the same labels share the text); a value the driver could not tell (null) is left out. */
  set(labels: string, value: number | null): void {
    if (value !== null && Number.isFinite(value)) this.lines.push(`${this.name}{${labels}} ${value}`);
  }

  /** HELP, TYPE and the series, as both the Prometheus text format and OpenMetrics write a gauge. */
  text(): string {
    return this.lines.length === 0 ? this.header : `${this.header}\n${this.lines.join('\n')}`;
  }
}

/** `a="x",b="y"`: the labels in `names`' order, values escaped. */
export function labelText<L extends string>(names: readonly L[], labels: Readonly<Record<L, string>>): string {
  let text = '';
  for (let i = 0; i < names.length; i++) text += `${i === 0 ? '' : ','}${names[i]}="${escapeLabelValue(labels[names[i]])}"`;
  return text;
}

const NEEDS_ESCAPE = /[\\"\n]/;

function escapeLabelValue(value: string): string {
  return NEEDS_ESCAPE.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value;
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
