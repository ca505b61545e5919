// Desktop notifications for contention, quotas, out-of-memory, lost GPUs and finished jobs, coalesced;
// a burst ends with one summary notice.
import { Notification } from 'electron';
import type { Engine } from '../engine/engine.js';
import { NotificationCoalescer, type DesktopNotice } from './notification-coalescer.js';

export function notifyOnAlerts(engine: Engine, iconPath: string, onClick: () => void): () => void {
  const coalescer = new NotificationCoalescer();
  let timer: NodeJS.Timeout | null = null;
  const show = (notice: DesktopNotice, critical: boolean): void => {
    if (!Notification.isSupported()) return;
    const notification = new Notification({ title: notice.title, body: notice.body, icon: iconPath, urgency: critical ? 'critical' : 'normal' });
    notification.on('click', onClick);
    notification.show();
  };
  // one timer at a time, for when the held alerts' summary is due
  const scheduleSummary = (): void => {
    const due = coalescer.summaryDueAt();
    if (due === null || timer) return;
    timer = setTimeout(() => {
      timer = null;
      const summary = coalescer.summary(Date.now());
      if (summary) show(summary, false);
      scheduleSummary();
    }, Math.max(0, due - Date.now()));
  };
  const off = engine.events.on('alert', (alert) => {
    const notice = coalescer.offer(alert, Date.now());
    if (notice) show(notice, alert.severity === 'error');
    scheduleSummary();
  });
  return () => {
    off();
    if (timer) clearTimeout(timer);
  };
}
