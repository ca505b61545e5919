// policy.get and policy.set: everyone may read the lab policy and where they stand under it;
// only an administrator may replace it (checked whole by the API schema, kept, then applied).
import { DEFAULT_LAB_POLICY, parseLabPolicy, type LabPolicyStatus } from '../../../../shared/lab-policy.js';
import { ApiError } from '../../api/api-error.js';
import type { Caller, Dispatcher } from '../../api/dispatcher.js';
import { administrators, mayChangeBox, type BoxRights } from '../../api/rights.js';
import type { Scheduler } from '../scheduler.js';

export function registerPolicyCommands(dispatcher: Dispatcher, scheduler: Scheduler, rights: BoxRights): void {
  const status = (caller: Caller): LabPolicyStatus => {
    const lab = scheduler.lab;
    const who = { mayChange: mayChangeBox(caller, rights), administrators: administrators(rights) };
    if (!lab) return personalStatus(caller, who);
    return lab.status(caller, scheduler.table.live().map((r) => r.view), who);
  };

  dispatcher.register('policy.get', (_params, caller) => status(caller));

  dispatcher.register('policy.set', async ({ policy }, caller) => {
    const lab = scheduler.lab;
    if (!lab) throw new ApiError('unsupported', 'This is a personal engine: a lab policy belongs to the box daemon (`gpushare daemon`), which schedules every user of the box.');
    try {
      await lab.set(parseLabPolicy(policy, 'params.policy')); // defaults filled in, as checked by the API schema
    } catch (error) {
      throw new ApiError('unsupported', `The lab policy was not changed: it could not be kept (${error instanceof Error ? error.message : String(error)}).`);
    }
    scheduler.requestEvaluation(); // queued jobs a limit held back may start now, or the order changed
    return status(caller);
  });
}

/** A personal engine enforces no lab policy: the defaults, nothing limited, no usage ranking. */
function personalStatus(caller: Caller, who: { mayChange: boolean; administrators: string }): LabPolicyStatus {
  return {
    enforced: false,
    policy: structuredClone(DEFAULT_LAB_POLICY),
    mayChange: false,
    administrators: who.administrators,
    you: { user: caller.user, groups: [], limits: {}, using: { gpus: 0, memoryBytes: 0, highPriorityJobs: 0 }, highPriorityGpuHoursToday: 0 },
    fairShare: [],
    usageAsOf: null,
  };
}
