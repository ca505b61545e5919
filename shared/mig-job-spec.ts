// Job needs written as MEMORY[:SMSHARE][@PRIORITY], e.g. "20G:0.3@high", "10GiB:25%", "512M@best-effort":
// read the same by `gpushare mig`, the engine's mig.apply and the console's Plan MIG view (before it asks).
import { parseByteSize } from './byte-size.js';
import { PRIORITIES, type Priority } from './jobs.js';

/** What a job spec asks of a MIG slice (the planner's MigJobNeed). */
export interface JobSpecNeed {
  id: string;
  memoryBytes: number;
  /** Fraction 0..1 of the whole GPU's SMs. */
  smShare?: number;
  priority?: Priority;
}

/** A job spec that cannot be read; the message names the spec and what is wrong with it. */
export class JobSpecError extends Error {}

export const JOB_SPEC_HELP =
  'MEMORY[:SMSHARE][@PRIORITY]: memory like 20G (20 GiB, as everywhere in gpushare: 20GB and 20GiB too; profile names are nominal, an H100 1g.10gb holds 9.75G); ' +
  'SMSHARE a fraction 0-1 or a percent 1-100% of the GPU\'s SMs; PRIORITY high, normal or best-effort';


/** One job need from its spec; its id is job1, job2, … by position (index from 0). */
export function parseJobSpec(spec: string, index: number): JobSpecNeed {
  const text = spec.trim();
  const bad = (what: string) => new JobSpecError(`Job ${index + 1} "${text}": ${what}.`);
  if (text === '') throw bad(`is empty; write ${JOB_SPEC_HELP}`);

  const [needs, priorityText, ...moreAts] = text.split('@');
  if (moreAts.length > 0) throw bad('has more than one "@PRIORITY"');
  const [memoryText, shareText, ...moreColons] = needs.split(':');
  if (moreColons.length > 0) throw bad('has more than one ":SMSHARE"');

  const memory = /^\s*([+-]?\d+(?:\.\d+)?|[+-]?\.\d+)\s*([a-zA-Z]*)\s*$/.exec(memoryText);
  if (!memory) throw bad(`memory "${memoryText}" is not a number with a unit such as 20G or 512MiB (spec: ${JOB_SPEC_HELP})`);
  if (!/^([KMGT](i?B)?|B)?$/i.test(memory[2])) throw bad(`unknown memory unit "${memory[2]}" (use K, M, G or T, as in 512M or 20G, or KiB, MiB, GiB, TiB)`);
  if (memory[2] === '') throw bad(`memory "${memoryText.trim()}" needs a unit, like ${memoryText.trim()}G (GiB)`);
  if (!(Number(memory[1]) > 0)) throw bad(`memory must be more than 0, got ${memoryText.trim()}`);

  const job: JobSpecNeed = { id: `job${index + 1}`, memoryBytes: parseByteSize(memoryText) };
  if (shareText !== undefined) job.smShare = parseShare(shareText, bad);
  if (priorityText !== undefined) {
    const priority = priorityText.trim().toLowerCase() as Priority;
    if (!(PRIORITIES as readonly string[]).includes(priority)) throw bad(`unknown priority "${priorityText}" (use high, normal or best-effort)`);
    job.priority = priority;
  }
  return job;
}

function parseShare(text: string, bad: (what: string) => JobSpecError): number {
  const percent = /^\s*(.*?)\s*%\s*$/.exec(text);
  const number = percent ? percent[1] : text.trim();
  const value = /^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(number) ? Number(number) : NaN;
  if (Number.isNaN(value)) throw bad(`SM share "${text}" is not a number (a fraction 0-1 or a percent like 20%)`);
  if (percent) {
    if (value < 1 || value > 100) throw bad(`SM share must be 1-100%, got ${text.trim()}`);
    return value / 100;
  }
  if (value <= 0 || value > 1) throw bad(`SM share must be more than 0 and at most 1 (or 1-100%), got ${text.trim()}`);
  return value;
}

/** A comma-separated list of job specs, e.g. "30G,10G:0.2,20G@high". */
export function parseJobSpecs(list: string): JobSpecNeed[] {
  const specs = list.split(',');
  if (specs.every((s) => s.trim() === '')) throw new JobSpecError(`No jobs given; write them as ${JOB_SPEC_HELP}, separated by commas.`);
  return specs.map((spec, i) => parseJobSpec(spec, i));
}
