// Desktop notifications for contention, quotas, out-of-memory and finished jobs, coalesced.
import { Notification } from 'electron';
import type { Engine } from '../engine/engine.js';
import { NotificationCoalescer } from './notification-coalescer.js';

export function notifyOnAlerts(engine: Engine, iconPath: string, onClick: () => void): () => void {
  const coalescer = new NotificationCoalescer();
  return engine.events.on('alert', (alert) => {
    const notice = coalescer.offer(alert);
    if (!notice || !Notification.isSupported()) return;
    const notification = new Notification({ title: notice.title, body: notice.body, icon: iconPath, urgency: alert.severity === 'error' ? 'critical' : 'normal' });
    notification.on('click', onClick);
    notification.show();
  });
}
