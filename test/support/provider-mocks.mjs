// Stoplight Prism mocks generated from the vendors' own OpenAPI files, so the real twilio and
// @sendgrid/mail SDKs are exercised against a server that validates every request they send.
import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
// CI clones the repository with shared/ beside it; worktrees here have /work/shared beside them.
// PROVIDER_SPECS_DIR points elsewhere when the repository is not checked out beside ../shared.
const specsDir = process.env.PROVIDER_SPECS_DIR ?? resolve(repoRoot, '..', 'shared', 'provider-specs');
const prismBin = join(repoRoot, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js');

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

function canConnect(port) {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

async function startPrism(specFile, label) {
  const spec = join(specsDir, specFile);
  if (!existsSync(spec)) throw new Error(`Provider spec not found: ${spec} (expected ../shared beside the repository)`);
  const port = await freePort();
  // Output goes to a file, not a pipe: a pipe nobody drains would eventually block Prism.
  const logFile = join(tmpdir(), `svc-identity-prism-${label}-${process.pid}.log`);
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, [prismBin, 'mock', '-h', '127.0.0.1', '-p', String(port), spec], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const deadline = Date.now() + 90000;
  while (!(await canConnect(port))) {
    if (child.exitCode !== null) throw new Error(`Prism (${label}) exited with ${child.exitCode}; see ${logFile}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`Prism (${label}) did not listen within 90 s; see ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  // The teardown kills it by pid; nothing here should keep Jest's process alive.
  child.unref();
  return { url: `http://127.0.0.1:${port}`, pid: child.pid };
}

export async function startProviderMocks() {
  const [twilio, sendgrid] = await Promise.all([startPrism('twilio_api_v2010.json', 'twilio'), startPrism('tsg_mail_v3.json', 'sendgrid')]);
  return { twilio, sendgrid };
}
