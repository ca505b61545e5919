// The lab policy: read it (everyone), replace it (administrators; the engine checks it whole and refuses naming the key).
import type { LabPolicyInput } from '../../../shared/lab-policy.js';
import { labPolicyStore } from '../stores/lab-policy-store.js';
import { showNotice } from '../stores/ui-store.js';
import { engineApi } from './engine-api.js';

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
let latestRequest = 0;

export async function loadLabPolicy(): Promise<void> {
  const request = ++latestRequest;
  labPolicyStore.setState({ loading: true });
  try {
    const status = await engineApi().call('policy.get', {});
    if (request === latestRequest) labPolicyStore.setState({ status, loading: false, error: null });
  } catch (error) {
    if (request === latestRequest) labPolicyStore.setState({ loading: false, error: messageOf(error) });
  }
}

export function editLabPolicy(): void {
  const { status } = labPolicyStore.getState();
  if (status) labPolicyStore.setState({ draft: JSON.stringify(status.policy, null, 2), saveError: null });
}

export function cancelLabPolicyEdit(): void {
  labPolicyStore.setState({ draft: null, saveError: null });
}

/** Send the draft; on success the view shows the policy the engine now applies. */
export async function saveLabPolicy(): Promise<void> {
  const { draft } = labPolicyStore.getState();
  if (draft === null) return;
  let policy: unknown;
  try {
    policy = JSON.parse(draft);
  } catch (error) {
    labPolicyStore.setState({ saveError: `Not valid JSON: ${messageOf(error)}` });
    return;
  }
  labPolicyStore.setState({ saving: true, saveError: null });
  try {
    // as written: the engine checks the whole policy and names the key it refuses
    const status = await engineApi().call('policy.set', { policy: policy as LabPolicyInput });
    ++latestRequest; // an older policy.get answer must not replace this one
    labPolicyStore.setState({ status, draft: null, saving: false, error: null });
    showNotice('The lab policy was changed: it applies to queued jobs now; running jobs keep running.', 'info');
  } catch (error) {
    labPolicyStore.setState({ saving: false, saveError: messageOf(error) });
  }
}
