// Mine / all, by GPU, by user.
import { uiStore } from '../stores/ui-store.js';
import { useUi } from '../stores/hooks.js';

export function TableFilters({ users, gpus }: { users: string[]; gpus: number[] }) {
  const me = useUi((s) => s.me);
  const ownerFilter = useUi((s) => s.ownerFilter);
  const gpuFilter = useUi((s) => s.gpuFilter);
  const userFilter = useUi((s) => s.userFilter);
  return (
    <div className="filters">
      <div className="segmented" aria-label="Owner">
        <button type="button" className={ownerFilter === 'mine' ? 'on' : ''} aria-pressed={ownerFilter === 'mine'} disabled={!me} title={me ? `Only ${me}'s` : 'The engine did not say who you are'} onClick={() => uiStore.setState({ ownerFilter: 'mine' })}>
          Mine
        </button>
        <button type="button" className={ownerFilter === 'all' ? 'on' : ''} aria-pressed={ownerFilter === 'all'} onClick={() => uiStore.setState({ ownerFilter: 'all' })}>
          All
        </button>
      </div>
      <select aria-label="GPU filter" value={gpuFilter ?? ''} onChange={(e) => uiStore.setState({ gpuFilter: e.target.value === '' ? null : Number(e.target.value) })}>
        <option value="">all GPUs</option>
        {gpus.map((g) => (
          <option key={g} value={g}>GPU {g}</option>
        ))}
      </select>
      <select aria-label="User filter" value={userFilter ?? ''} onChange={(e) => uiStore.setState({ userFilter: e.target.value || null })}>
        <option value="">all users</option>
        {users.map((u) => (
          <option key={u} value={u}>{u}</option>
        ))}
      </select>
    </div>
  );
}
