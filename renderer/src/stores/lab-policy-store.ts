// The Lab policy view: the engine's last answer to policy.get, and an administrator's draft.
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { LabPolicyStatus } from '../../../shared/lab-policy.js';

export interface LabPolicyState {
  status: LabPolicyStatus | null;
  loading: boolean;
  error: string | null;
  /** The policy as an administrator edits it (JSON, as in the daemon's config); null: not editing. */
  draft: string | null;
  saving: boolean;
  /** Why the last save was refused (the engine names the key), or null. */
  saveError: string | null;
}

export const labPolicyStore = createStore<LabPolicyState>(() => ({ status: null, loading: false, error: null, draft: null, saving: false, saveError: null }));

export const useLabPolicy = <T,>(select: (s: LabPolicyState) => T): T => useStore(labPolicyStore, select);
