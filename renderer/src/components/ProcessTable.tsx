// Every job and GPU process: sortable by any column, filtered by owner, GPU and user.
// The rows scroll inside a fixed box and only those in view are drawn, so a box with
// hundreds of processes costs a screenful of rows per update.
import { Fragment, memo, useMemo } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { cutMark, cutSentence, unlistedSentence } from '../../../shared/command-line.js';
import { PRIORITY_RANK, type JobView } from '../../../shared/jobs.js';
import { describeContext } from '../../../shared/process-context.js';
import type { GpuProcessView } from '../../../shared/snapshot.js';
import { processColor } from '../colors.js';
import { processesAsJobs } from '../data/board-jobs.js';
import { formatBytes, formatPercent, shortCommand, shownBytes } from '../format.js';
import { highlight, uiStore, type SortKey } from '../stores/ui-store.js';
import { useBoardJobs, useGpus, useUi } from '../stores/hooks.js';
import { TableFilters } from './TableFilters.js';
import { fitsWidth, pageFont } from './text-fit.js';
import { useElementWidth } from './use-element-width.js';
import { useVirtualRows } from './use-virtual-rows.js';

/** Must match `.process-table td` height in styles.css: the scroll math counts on it. */
const ROW_HEIGHT = 24;
/** Rows in view at most; the box shrinks to fit fewer. */
const VISIBLE_ROWS = 20;

/** Fixed widths (the command takes the rest): live numbers never make the table relay out. */
const COLUMNS: ReadonlyArray<{ key: SortKey; title: string; numeric?: boolean; width?: number }> = [
  { key: 'user', title: 'User', width: 90 },
  { key: 'command', title: 'Command' },
  { key: 'gpu', title: 'GPU', numeric: true, width: 56 },
  { key: 'sm', title: 'SM %', numeric: true, width: 70 },
  { key: 'memory', title: 'Memory', numeric: true, width: 96 },
  { key: 'quota', title: 'Quota', numeric: true, width: 96 },
  { key: 'priority', title: 'Priority', width: 100 },
  { key: 'state', title: 'State', width: 96 },
];
const ID_WIDTH = 96;
/** Where a process runs (container, Slurm job, kernel, unit, ssh), after the command; not sortable. */
const WHERE_WIDTH = 170;
/** A cell's horizontal padding (`.process-table td`): its text has the column less this. */
const CELL_PADDING = 16;
/** `.process-table td.command`'s font; the Where column's is the page's at 12px. */
const COMMAND_FONT = '12px ui-monospace, "DejaVu Sans Mono", monospace';
let whereFont: string | null = null;

const sortValue = (job: JobView, key: SortKey): string | number => {
  switch (key) {
    case 'user': return job.owner;
    case 'command': return job.argv.join(' ');
    case 'gpu': return job.gpu ?? -1;
    case 'sm': return job.smPercent === null ? -1 : Math.round(job.smPercent);
    case 'memory': return shownBytes(job.usedMemory);
    case 'quota': return job.memoryQuotaBytes ?? Number.MAX_SAFE_INTEGER;
    case 'priority': return PRIORITY_RANK[job.priority];
    case 'state': return job.state;
  }
};

const leaveRow = (): void => highlight(null);

/** A Command or Where cell: clipped with an ellipsis only when its text overflows (the full text is its tooltip either way). */
const cellClass = (name: string, text: string, font: string, room: number): string => (fitsWidth(text, font, room) ? name : `${name} clipped`);

function ProcessRowView({ job: j, highlighted, index, where, cut, commandRoom, whereRoom }: RowProps) {
  // a command line the engine shows only the start of says so first, where a clipped cell still shows it
  const command = cutMark(cut) + shortCommand(j.argv, null);
  const fullCommand = cut ? `${j.argv.join(' ')}\n\n${cutSentence(cut)}` : j.argv.join(' ');
  const shownWhere = where || '–';
  return (
    <tr aria-rowindex={index + 2} data-job={j.id} data-pid={j.pid ?? undefined} className={highlighted ? 'highlighted' : undefined} onMouseEnter={() => highlight(j.id)} onMouseLeave={leaveRow}>
      <td>
        <span className="swatch" style={{ background: j.pid !== null ? processColor(j.pid) : 'transparent' }} />
        {j.id}
      </td>
      <td>{j.owner}</td>
      <td className={cellClass('command', command, COMMAND_FONT, commandRoom)} title={fullCommand}>{command}</td>
      <td className={cellClass('where', shownWhere, (whereFont ??= pageFont(12)), whereRoom)} title={where}>{shownWhere}</td>
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

/** Stands in for the rows scrolled out of view, so the scroll bar tells the whole length. */
const Spacer = ({ height }: { height: number }) => (
  <tr className="spacer" aria-hidden>
    <td colSpan={COLUMNS.length + 2} style={{ height }} />
  </tr>
);

type RowProps = { job: JobView; highlighted: boolean; index: number; where: string; cut: GpuProcessView['argvCut']; commandRoom: number; whereRoom: number };
/** Re-render a row only when a cell it shows changed (jobs arrive as new objects every tick). */
const sameRow = (a: RowProps, b: RowProps): boolean =>
  a.index === b.index && a.highlighted === b.highlighted && a.where === b.where && a.cut?.bytes === b.cut?.bytes && a.commandRoom === b.commandRoom && a.whereRoom === b.whereRoom && a.job.id === b.job.id && a.job.pid === b.job.pid && a.job.owner === b.job.owner && a.job.gpu === b.job.gpu &&
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
      (j) => (ownerFilter === 'all' || j.owner === me) && (gpuFilter === null || (j.gpus?.length ? j.gpus : [j.gpu]).includes(gpuFilter)) && (userFilter === null || j.owner === userFilter),
    );
    const direction = sortDescending ? -1 : 1;
    // each row's key computed once, not once per comparison
    const keyed = shown.map((job) => ({ job, key: sortValue(job, sortKey) }));
    keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.job.id < b.job.id ? -1 : a.job.id > b.job.id ? 1 : 0) * direction);
    return keyed.map((k) => k.job);
  }, [jobs, snapshot, me, ownerFilter, gpuFilter, userFilter, sortKey, sortDescending]);
  const { first, end, padTop, padBottom, onScroll } = useVirtualRows(rows.length, ROW_HEIGHT, VISIBLE_ROWS * ROW_HEIGHT);
  // an explicit height lets the box be strictly contained: its updates never relay out the page
  const boxHeight = ROW_HEIGHT * (1 + Math.max(1, Math.min(VISIBLE_ROWS, rows.length)));
  const users = useMemo(() => [...new Set(jobs.map((j) => j.owner))].sort(), [jobs]);
  const whereByPid = useMemo(() => new Map((snapshot?.processes ?? []).map((p) => [p.pid, describeContext(p.context)])), [snapshot]);
  const cutByPid = useMemo(() => new Map((snapshot?.processes ?? []).filter((p) => p.argvCut).map((p) => [p.pid, p.argvCut])), [snapshot]);
  const unlisted = (snapshot?.gpus ?? []).map(unlistedSentence).filter((line) => line !== null);
  // the room the Command and Where columns give their text, measured on their headers
  const [commandHead, commandWidth] = useElementWidth<HTMLTableCellElement>();
  const [whereHead, whereWidth] = useElementWidth<HTMLTableCellElement>();
  const commandRoom = Math.max(0, commandWidth - CELL_PADDING);
  const whereRoom = Math.max(0, whereWidth - CELL_PADDING);
  const sortBy = (key: SortKey): void => uiStore.setState((s) => ({ sortKey: key, sortDescending: s.sortKey === key ? !s.sortDescending : key !== 'user' && key !== 'command' }));
  return (
    <section className="panel process-panel" aria-label="Processes and jobs">
      <header className="panel-head">
        <h2>Processes and jobs</h2>
        <span className="muted">{rows.length} shown</span>
        <TableFilters users={users} gpus={snapshot?.gpus.map((g) => g.index) ?? []} />
      </header>
      <div className="process-scroll" style={{ height: boxHeight }} onScroll={onScroll}>
        <table className="process-table" aria-rowcount={rows.length + 1}>
          <colgroup>
            <col style={{ width: ID_WIDTH }} />
            {COLUMNS.map((c) => (
              <Fragment key={c.key}>
                <col style={c.width ? { width: c.width } : undefined} />
                {c.key === 'command' && <col style={{ width: WHERE_WIDTH }} />}
              </Fragment>
            ))}
          </colgroup>
          <thead>
            <tr>
              <th>ID</th>
              {COLUMNS.map((c) => (
                <Fragment key={c.key}>
                  <th ref={c.key === 'command' ? commandHead : undefined} className={c.numeric ? 'num' : undefined} aria-sort={sortKey === c.key ? (sortDescending ? 'descending' : 'ascending') : 'none'}>
                    <button type="button" onClick={() => sortBy(c.key)}>
                      {c.title}
                      {sortKey === c.key ? (sortDescending ? ' ▾' : ' ▴') : ''}
                    </button>
                  </th>
                  {c.key === 'command' && <th ref={whereHead} className="where">Where</th>}
                </Fragment>
              ))}
            </tr>
          </thead>
          <tbody>
            {padTop > 0 && <Spacer height={padTop} />}
            {rows.slice(first, end).map((j, i) => (
              <ProcessRow key={j.id} index={first + i} job={j} highlighted={highlighted === j.id} where={j.pid === null ? '' : (whereByPid.get(j.pid) ?? '')} cut={j.pid === null ? null : (cutByPid.get(j.pid) ?? null)} commandRoom={commandRoom} whereRoom={whereRoom} />
            ))}
            {padBottom > 0 && <Spacer height={padBottom} />}
            {rows.length === 0 && (
              <tr>
                <td colSpan={COLUMNS.length + 2} className="empty-row">No processes match.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {unlisted.map((line) => (
        <p key={line} className="muted unlisted-processes">{line}</p>
      ))}
    </section>
  );
}
