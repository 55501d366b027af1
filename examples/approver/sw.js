// The approver's service worker. A push from the service says only that an approval waits (it
// carries no subject, message or id), so the alert is generic; a click opens the app, which reads
// the approval itself, signed in.
self.addEventListener('push', (event) => {
  event.waitUntil(self.registration.showNotification('Approval waiting', { body: 'Open Approver to answer it.', tag: 'approval-waiting' }));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const open = windows.find((w) => w.url.startsWith(self.registration.scope));
      return open ? open.focus() : self.clients.openWindow(self.registration.scope);
    })(),
  );
});
