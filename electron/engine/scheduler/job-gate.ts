// What the scheduler needs of the launch gate (electron/engine/control/launch-gate.ts):
// one slot per running managed job, through which its priority, pause and quota reach
// the preload library in the job. The scheduler never touches the gate file itself.
import type { Priority } from '../../../shared/jobs.js';

export interface GateSlotRequest {
  jobId: string;
  gpu: number;
  priority: Priority;
  quotaBytes: number | null;
}

export interface GateSlot {
  slot: number;
  /** LD_PRELOAD, GPUSHARE_GATE, GPUSHARE_GATE_SLOT, GPUSHARE_MEM_QUOTA, … for the job. */
  env: Record<string, string>;
}

export interface JobGate {
  allocateSlot(request: GateSlotRequest): GateSlot;
  /** The job's pid, once started (the gate uses it for liveness and reports). */
  setPid?(slot: number, pid: number): void;
  setPriority(slot: number, priority: Priority): void;
  setPaused(slot: number, paused: boolean): void;
  setQuota(slot: number, bytes: number | null): void;
  releaseSlot(slot: number): void;
  /** Engine shutdown: mark the gate closed so every job fails open. */
  close(): void;
}
