import { runProcess } from '../../core/platform/lifecycle/run-process.js';
import { withMetricsEndpoint } from '../../core/platform/metrics/metrics-endpoint.js';
import { startNotificationWorker } from './notification-worker.js';

runProcess('worker-notifications', withMetricsEndpoint(startNotificationWorker));
