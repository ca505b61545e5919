// The names the command line gives simulated boxes, kept light (no driver, no addon): `--help`
// prints them without loading either.

/** The box `--simulate` opens when no scenario is named and no shell points at one. */
export const DEFAULT_SCENARIO = 'h100x2-mig';

/**
 * What `--simulate` without a scenario stands for: the box `gpushare sim env` pointed this shell at
 * ($GPUSHARE_FAKEGPU_STATE), else DEFAULT_SCENARIO's. Empty, so no scenario name can mean it.
 */
export const POINTED_BOX = '';

/** The scenario of a state file `SimulatedDriver.shared` named (sim-NAME.state), or 'custom'. */
export function scenarioOfStateFile(statePath: string): string {
  return /(?:^|\/)sim-([\w.-]+)\.state$/.exec(statePath)?.[1] ?? 'custom';
}
