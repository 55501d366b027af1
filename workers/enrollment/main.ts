import { runProcess } from '../../core/lifecycle/run-process.js';
import { startEnrollmentWorker } from './enrollment-worker.js';

runProcess('worker-enrollment', startEnrollmentWorker);
