import { runProcess } from '../../core/lifecycle/run-process.js';
import { withMetricsEndpoint } from '../../core/metrics/metrics-endpoint.js';
import { startNotificationWorker } from './notification-worker.js';

runProcess('worker-notifications', withMetricsEndpoint(startNotificationWorker));
