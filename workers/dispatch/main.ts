import { runProcess } from '../../core/platform/lifecycle/run-process.js';
import { withMetricsEndpoint } from '../../core/platform/metrics/metrics-endpoint.js';
import { startDispatchWorker } from './dispatch-worker.js';

runProcess('worker-dispatch', withMetricsEndpoint(startDispatchWorker));
