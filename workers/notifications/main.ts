import { runProcess } from '../../core/lifecycle/run-process.js';
import { startNotificationWorker } from './notification-worker.js';

runProcess('worker-notifications', startNotificationWorker);
