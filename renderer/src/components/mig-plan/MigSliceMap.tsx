// A MIG layout on the GPU's memory slices (8 on A100/H100): each instance spans its placement,
// with its profile and what it is for.
export interface SliceBlock {
  start: number;
  size: number;
  profile: string;
  /** The job in it, or "idle", "kept". */
  label: string;
  tone: 'new' | 'kept' | 'current';
}

export function MigSliceMap({ blocks, memorySlices, caption }: { blocks: readonly SliceBlock[]; memorySlices: number; caption: string }) {
  return (
    <figure className="slice-map">
      <figcaption className="stat-label">{caption}</figcaption>
      <div className="slice-map-grid" style={{ gridTemplateColumns: `repeat(${memorySlices}, 1fr)` }}>
        {Array.from({ length: memorySlices }, (_, i) => (
          <span key={`cell${i}`} className="mig-cell" style={{ gridColumn: i + 1, gridRow: 1 }} />
        ))}
        {blocks.map((b) => (
          <div
            key={`${b.start}-${b.profile}`}
            className={`slice-block slice-${b.tone}`}
            data-profile={b.profile}
            style={{ gridColumn: `${b.start + 1} / span ${b.size}`, gridRow: 1 }}
            title={`${b.profile} at memory slice ${b.start} (${b.size} slice${b.size === 1 ? '' : 's'}): ${b.label}`}
          >
            <span className="mig-profile">{b.profile}</span>
            <span className="slice-job">{b.label}</span>
          </div>
        ))}
        {blocks.length === 0 && <div className="mig-empty">no GPU instances</div>}
      </div>
      <div className="slice-map-axis" style={{ gridTemplateColumns: `repeat(${memorySlices}, 1fr)` }} aria-hidden="true">
        {Array.from({ length: memorySlices }, (_, i) => <span key={i}>{i}</span>)}
      </div>
    </figure>
  );
}
