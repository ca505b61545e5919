// Desktop notifications for this user's jobs and the GPUs they use (contention, quotas,
// out-of-memory, lost GPUs, finished jobs), coalesced; a burst ends with one summary notice.
import { Notification } from 'electron';
import type { EngineView } from './engine-view.js';
import { NotificationCoalescer, type DesktopNotice } from './notification-coalescer.js';

export function showNotice(notice: DesktopNotice, iconPath: string, onClick: () => void, critical = false): void {
  if (!Notification.isSupported()) return;
  const notification = new Notification({ title: notice.title, body: notice.body, icon: iconPath, urgency: critical ? 'critical' : 'normal' });
  notification.on('click', onClick);
  notification.show();
}

export function notifyOnAlerts(view: EngineView, iconPath: string, onClick: () => void): () => void {
  const coalescer = new NotificationCoalescer({ concerns: view.concerns });
  let timer: NodeJS.Timeout | null = null;
  // one timer at a time, for when the held alerts' summary is due
  const scheduleSummary = (): void => {
    const due = coalescer.summaryDueAt();
    if (due === null || timer) return;
    timer = setTimeout(() => {
      timer = null;
      const summary = coalescer.summary(Date.now());
      if (summary) showNotice(summary, iconPath, onClick);
      scheduleSummary();
    }, Math.max(0, due - Date.now()));
  };
  const off = view.onAlert((alert) => {
    const notice = coalescer.offer(alert, Date.now());
    if (notice) showNotice(notice, iconPath, onClick, alert.severity === 'error');
    scheduleSummary();
  });
  return () => {
    off();
    if (timer) clearTimeout(timer);
  };
}
