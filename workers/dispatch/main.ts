import { runWorkerProcess } from '../worker-process.js';
import { startDispatchWorker } from './dispatch-worker.js';

runWorkerProcess('dispatch', startDispatchWorker);
