import { runProcess } from '../../core/lifecycle/run-process.js';
import { withMetricsEndpoint } from '../../core/metrics/metrics-endpoint.js';
import { startDispatchWorker } from './dispatch-worker.js';

runProcess('worker-dispatch', withMetricsEndpoint(startDispatchWorker));
