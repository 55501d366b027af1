import { runProcess } from '../../core/lifecycle/run-process.js';
import { withMetricsEndpoint } from '../../core/metrics/metrics-endpoint.js';
import { startEnrollmentWorker } from './enrollment-worker.js';

runProcess('worker-enrollment', withMetricsEndpoint(startEnrollmentWorker));
