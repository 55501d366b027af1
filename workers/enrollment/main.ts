import { runProcess } from '../../core/platform/lifecycle/run-process.js';
import { withMetricsEndpoint } from '../../core/platform/metrics/metrics-endpoint.js';
import { startEnrollmentWorker } from './enrollment-worker.js';

runProcess('worker-enrollment', withMetricsEndpoint(startEnrollmentWorker));
