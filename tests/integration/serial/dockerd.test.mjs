// dockerd.test.mjs -- a restart of Docker itself, under talkback:
//   a chat's sandbox, stopped by the daemon's restart, resumes on the next
//   call with its files, and the notice says it was stopped not by talkback;
//   a chat idle-stopped by the reaper before the restart resumes too, with
//   the idle reason; calls made while Docker is down end with a clear error
//   instead of hanging, and work again once it is back.
// It stops and starts the machine's dockerd, so tests/run runs it last and
// alone (tests/integration/serial/).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';

import { Talkback, BUILD, withLogs, connect, run, runOk, docker, waitFor, setLastCall } from '../harness.mjs';

const execFileP = promisify(execFile);
const tb = new Talkback({ name: 'dockerd' });

async function dockerUp() {
  try {
    await execFileP('docker', ['info'], { timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

async function dockerdPid() {
  const { stdout } = await execFileP('pidof', ['dockerd']).catch(() => ({ stdout: '' }));
  return stdout.trim().split(/\s+/).filter(Boolean).map(Number);
}

/** Stop the machine's dockerd and start it again as deploy/setup does. */
async function restartDockerd() {
  for (const pid of await dockerdPid()) process.kill(pid, 'SIGTERM');
  await waitFor(async () => (await dockerdPid()).length === 0, { timeoutMs: 60000, what: 'dockerd to stop' });
  const log = fs.openSync('/var/log/talkback-dockerd.log', 'a');
  const child = spawn('dockerd', [], { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  await waitFor(dockerUp, { timeoutMs: 60000, intervalMs: 500, what: 'dockerd to answer again' });
}

before(async () => {
  await tb.start();
});

after(async () => {
  if (!(await dockerUp())) await restartDockerd();
  await tb.cleanup();
});

test('sandboxes resume after a restart of dockerd, and the notice says so', withLogs(tb, async () => {
  const a = tb.chat('restart');
  const b = tb.chat('idle');
  const ca = await connect(tb, { conv: a });
  const cb = await connect(tb, { conv: b });
  await runOk(ca, 'echo before-restart > /work/a.txt');
  await runOk(cb, 'echo idle-before > /work/b.txt');
  await setLastCall(tb, b, new Date(Date.now() - 2 * 3600 * 1000));
  const { stdout } = await execFileP(path.join(BUILD, 'talkback-reaper'),
    ['--once', '--reaper_prefix', b], { env: tb.env({}), timeout: 60000 });
  assert.match(stdout, /1 stopped/);

  await restartDockerd();

  const ra = await run(ca, 'cat /work/a.txt');
  assert.equal(ra.isError, false, ra.text);
  assert.match(ra.text, /^\[Resumed this chat's sandbox, stopped \d+ (seconds?|minutes?) ago \(not by talkback: most likely a restart of Docker or of the host\): its files and installs are as they were, but nothing it ran is running now\. Start servers and background jobs again\.\]\n\$ cat \/work\/a\.txt\nbefore-restart\n$/);
  const rb = await run(cb, 'cat /work/b.txt');
  assert.match(rb.text, /^\[Resumed this chat's sandbox, stopped \d+ (seconds?|minutes?) ago \(idle for over 60 minutes\)/);
  assert.match(rb.text, /\nidle-before\n$/);
  await ca.close();
  await cb.close();
}));

test('while dockerd is down, a call ends with a clear error; then works again', withLogs(tb, async () => {
  const conv = tb.chat('down');
  const c = await connect(tb, { conv });
  await runOk(c, 'echo up > /work/u.txt');
  for (const pid of await dockerdPid()) process.kill(pid, 'SIGTERM');
  await waitFor(async () => (await dockerdPid()).length === 0, { timeoutMs: 60000, what: 'dockerd to stop' });
  try {
    const r = await run(c, 'cat /work/u.txt', { callTimeout: 120000 });
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, /talkback/);
  } finally {
    await restartDockerd();
  }
  const again = await run(c, 'cat /work/u.txt');
  assert.equal(again.isError, false, again.text);
  assert.match(again.text, /\nup\n$/);
  await c.close();
}));
