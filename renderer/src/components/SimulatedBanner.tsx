// Never let simulated GPUs pass for real ones.
import { useGpus } from '../stores/hooks.js';

export function SimulatedBanner() {
  const driver = useGpus((s) => s.snapshot?.driver ?? null);
  if (!driver?.simulated) return null;
  return (
    <div className="simulated-banner" role="status">
      <b>Simulated GPUs</b> — no NVIDIA driver is in use; these GPUs and processes come from the simulated driver
      {driver.scenario ? ` (scenario ${driver.scenario})` : ''}. Nothing here is real hardware.
    </div>
  );
}
