import { runWorkerProcess } from '../worker-process.js';
import { startEnrollmentWorker } from './enrollment-worker.js';

runWorkerProcess('enrollment', startEnrollmentWorker);
