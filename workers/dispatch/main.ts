import { runProcess } from '../../core/lifecycle/run-process.js';
import { startDispatchWorker } from './dispatch-worker.js';

runProcess('worker-dispatch', startDispatchWorker);
