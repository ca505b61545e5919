// Every job and GPU process: sortable by any column, filtered by owner, GPU and user.
import { memo, useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { JobView } from '../../../shared/jobs.js';
import { processColor } from '../colors.js';
import { processesAsJobs } from '../data/board-jobs.js';
import { formatBytes, formatPercent, shortCommand } from '../format.js';
import { highlight, uiStore, type SortKey } from '../stores/ui-store.js';
import { useBoardJobs, useGpus, useUi } from '../stores/hooks.js';
import { TableFilters } from './TableFilters.js';

/** Rows drawn until the person asks for all: a thousand rows a second is not readable anyway. */
const ROW_LIMIT = 100;

const PRIORITY_ORDER = { high: 0, normal: 1, 'best-effort': 2 } as const;

const COLUMNS: ReadonlyArray<{ key: SortKey; title: string; numeric?: boolean }> = [
  { key: 'user', title: 'User' },
  { key: 'command', title: 'Command' },
  { key: 'gpu', title: 'GPU', numeric: true },
  { key: 'sm', title: 'SM %', numeric: true },
  { key: 'memory', title: 'Memory', numeric: true },
  { key: 'quota', title: 'Quota', numeric: true },
  { key: 'priority', title: 'Priority' },
  { key: 'state', title: 'State' },
];

const sortValue = (job: JobView, key: SortKey): string | number => {
  switch (key) {
    case 'user': return job.owner;
    case 'command': return job.argv.join(' ');
    case 'gpu': return job.gpu ?? -1;
    case 'sm': return job.smPercent ?? -1;
    case 'memory': return job.usedMemory ?? -1;
    case 'quota': return job.memoryQuotaBytes ?? Number.MAX_SAFE_INTEGER;
    case 'priority': return PRIORITY_ORDER[job.priority];
    case 'state': return job.state;
  }
};

const leaveRow = (): void => highlight(null);

function ProcessRowView({ job: j, highlighted }: { job: JobView; highlighted: boolean }) {
  return (
    <tr data-job={j.id} data-pid={j.pid ?? undefined} className={highlighted ? 'highlighted' : undefined} onMouseEnter={() => highlight(j.id)} onMouseLeave={leaveRow}>
      <td>
        <span className="swatch" style={{ background: j.pid !== null ? processColor(j.pid) : 'transparent' }} />
        {j.id}
      </td>
      <td>{j.owner}</td>
      <td className="command" title={j.argv.join(' ')}>{shortCommand(j.argv, null)}</td>
      <td className="num">{j.gpu ?? '–'}</td>
      <td className="num">{formatPercent(j.smPercent)}</td>
      <td className="num">{formatBytes(j.usedMemory)}</td>
      <td className="num">{j.memoryQuotaBytes === null ? '–' : formatBytes(j.memoryQuotaBytes)}</td>
      <td><span className={`priority priority-${j.priority}`}>{j.priority}</span></td>
      <td><span className={`state state-${j.state}`}>{j.state}</span></td>
    </tr>
  );
}

const sameArgv = (a: readonly string[], b: readonly string[]): boolean => a === b || (a.length === b.length && a.every((x, i) => x === b[i]));

/** Re-render a row only when a cell it shows changed (jobs arrive as new objects every tick). */
const sameRow = (a: { job: JobView; highlighted: boolean }, b: { job: JobView; highlighted: boolean }): boolean =>
  a.highlighted === b.highlighted && a.job.id === b.job.id && a.job.pid === b.job.pid && a.job.owner === b.job.owner && a.job.gpu === b.job.gpu &&
  formatPercent(a.job.smPercent) === formatPercent(b.job.smPercent) && formatBytes(a.job.usedMemory) === formatBytes(b.job.usedMemory) &&
  a.job.memoryQuotaBytes === b.job.memoryQuotaBytes && a.job.priority === b.job.priority && a.job.state === b.job.state && sameArgv(a.job.argv, b.job.argv);

const ProcessRow = memo(ProcessRowView, sameRow);

export function ProcessTable() {
  const jobs = useBoardJobs();
  const snapshot = useGpus((s) => s.snapshot);
  const { me, ownerFilter, gpuFilter, userFilter, sortKey, sortDescending, highlighted } = useUi(
    useShallow((s) => ({ me: s.me, ownerFilter: s.ownerFilter, gpuFilter: s.gpuFilter, userFilter: s.userFilter, sortKey: s.sortKey, sortDescending: s.sortDescending, highlighted: s.highlighted })),
  );
  const rows = useMemo(() => {
    const covered = new Set(jobs.map((j) => j.pid));
    const all = [...jobs, ...processesAsJobs(snapshot).filter((p) => !covered.has(p.pid))];
    const shown = all.filter(
      (j) => (ownerFilter === 'all' || j.owner === me) && (gpuFilter === null || j.gpu === gpuFilter) && (userFilter === null || j.owner === userFilter),
    );
    const direction = sortDescending ? -1 : 1;
    return shown.sort((a, b) => {
      const x = sortValue(a, sortKey);
      const y = sortValue(b, sortKey);
      return (x < y ? -1 : x > y ? 1 : a.id.localeCompare(b.id)) * direction;
    });
  }, [jobs, snapshot, me, ownerFilter, gpuFilter, userFilter, sortKey, sortDescending]);
  const [showAll, setShowAll] = useState(false);
  const drawn = showAll ? rows : rows.slice(0, ROW_LIMIT);
  const users = useMemo(() => [...new Set(jobs.map((j) => j.owner))].sort(), [jobs]);
  const sortBy = (key: SortKey): void => uiStore.setState((s) => ({ sortKey: key, sortDescending: s.sortKey === key ? !s.sortDescending : key !== 'user' && key !== 'command' }));
  return (
    <section className="panel process-panel" aria-label="Processes and jobs">
      <header className="panel-head">
        <h2>Processes and jobs</h2>
        <span className="muted">{rows.length} shown</span>
        <TableFilters users={users} gpus={snapshot?.gpus.map((g) => g.index) ?? []} />
      </header>
      <table className="process-table">
        <thead>
          <tr>
            <th>ID</th>
            {COLUMNS.map((c) => (
              <th key={c.key} className={c.numeric ? 'num' : undefined} aria-sort={sortKey === c.key ? (sortDescending ? 'descending' : 'ascending') : 'none'}>
                <button type="button" onClick={() => sortBy(c.key)}>
                  {c.title}
                  {sortKey === c.key ? (sortDescending ? ' ▾' : ' ▴') : ''}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {drawn.map((j, i) => (
            // keyed by position: the order follows live numbers, and rewriting a row's cells is cheaper than moving it
            <ProcessRow key={i} job={j} highlighted={highlighted === j.id} />
          ))}
          {rows.length === 0 && (
            <tr>
              <td colSpan={COLUMNS.length + 1} className="empty-row">No processes match.</td>
            </tr>
          )}
        </tbody>
      </table>
      {rows.length > ROW_LIMIT && (
        <button type="button" className="show-all" onClick={() => setShowAll(!showAll)}>
          {showAll ? `Show the first ${ROW_LIMIT}` : `Show all ${rows.length} rows`}
        </button>
      )}
    </section>
  );
}
