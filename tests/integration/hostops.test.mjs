// hostops.test.mjs -- the sandbox manager's operations on its host, which
// the gateway's routing and talkbackctl use, against the real dockerd:
//   - locate says whether this host holds a chat's container, and its state;
//   - list prints one tab-separated line per sandbox (conversation, user,
//     host, state, idle seconds, disk bytes);
//   - drain and undrain keep their flag in state_dir;
//   - stop keeps the chat's files, rm removes them (and the chat is told);
//   - a request naming another host reaches no worker.
// These operations are no MCP tools: they are reached with
// talkback-hubcall, which binds the hub while the gateway is stopped.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Talkback, BUILD, withLogs, connect, run, runOk, containersOf } from './harness.mjs';

const HUBCALL = path.join(BUILD, 'talkback-hubcall');
const HOST = 'hostops-alpha';
const USER = 'user-hostops';
const tb = new Talkback({ name: 'hostops', env: { TALKBACK_HOST_NAME: HOST } });

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

/** One request to the sandbox manager (conv may be ''; '@H' in extra names a host). */
function hubcall(op, conv, extra = []) {
  const argv = ['sandbox', op, conv, USER, ...extra, '--worker_wait_ms', '2000'];
  return new Promise((resolve, reject) => {
    execFile(HUBCALL, argv, { env: tb.env({}), timeout: 60000 }, (err, stdout, stderr) => {
      if (err && err.code !== 1) reject(new Error(`talkback-hubcall ${argv.join(' ')}: ${err.message}\n${stderr}`));
      else resolve(err ? null : JSON.parse(stdout));
    });
  });
}

async function withoutGateway(fn) {
  await tb.stopGateway();
  try {
    return await fn();
  } finally {
    await tb.startGateway();
    await tb.waitReady(30000);
  }
}

test('locate, list, drain, stop and rm on one host', withLogs(tb, async () => {
  const conv = tb.chat('ops');
  const c = await connect(tb, { conv, user: USER });
  try {
    await runOk(c, 'echo kept > /work/mark.txt');
  } finally {
    await c.close();
  }
  const [made] = await containersOf(conv);
  assert.ok(made, 'the chat has a container');
  await withoutGateway(async () => {
    let r = await hubcall('locate', conv);
    assert.equal(r.status, 0);
    assert.equal(r.data.found, true, JSON.stringify(r));
    assert.equal(r.data.state, 'running');
    r = await hubcall('locate', tb.chat('never'));
    assert.equal(r.data.found, false, JSON.stringify(r));

    r = await hubcall('list', '', [`@${HOST}`]);
    assert.equal(r.is_error, false, r.text);
    const line = r.text.split('\n').find((l) => l.startsWith(`${conv}\t`));
    assert.ok(line, `no line for ${conv} in:\n${r.text}`);
    const [lc, lu, lh, ls, idle, disk] = line.split('\t');
    assert.deepEqual([lc, lu, lh, ls], [conv, USER, HOST, 'running']);
    assert.match(idle, /^\d+$/);
    assert.match(disk, /^\d+$/);

    const flag = path.join(tb.stateDir, 'draining');
    r = await hubcall('drain', '', [`@${HOST}`]);
    assert.equal(r.is_error, false, r.text);
    assert.match(r.text, new RegExp(`host ${HOST} is draining`));
    assert.ok(fs.existsSync(flag), 'the draining flag is in state_dir');
    r = await hubcall('undrain', '', [`@${HOST}`]);
    assert.equal(r.is_error, false, r.text);
    assert.ok(!fs.existsSync(flag), 'undrain removes the flag');

    // A request naming a host with no manager finds no worker.
    assert.equal((await hubcall('list', '', ['@no-such-host'])).status, 1);

    r = await hubcall('stop', conv);
    assert.equal(r.is_error, false, r.text);
    assert.match(r.text, /files are kept/);
    r = await hubcall('locate', conv);
    assert.equal(r.data.found, true);
    assert.equal(r.data.state, 'exited');
  });

  // Stopped, the chat starts again with its files, and is told who stopped it.
  const c2 = await connect(tb, { conv, user: USER });
  try {
    const r = await run(c2, 'cat /work/mark.txt');
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /^\[Resumed this chat's sandbox, stopped .* \(by the operator\)/, r.text);
    assert.match(r.text, /\nkept\n$/, r.text);
  } finally {
    await c2.close();
  }

  await withoutGateway(async () => {
    const r = await hubcall('rm', conv);
    assert.equal(r.is_error, false, r.text);
    assert.match(r.text, /with all its files/);
    assert.equal((await hubcall('locate', conv)).data.found, false);
  });
  assert.deepEqual(await containersOf(conv), []);
  const c3 = await connect(tb, { conv, user: USER });
  try {
    const r = await run(c3, 'cat /work/mark.txt');
    assert.match(r.text, /removed|No such file/, r.text);
  } finally {
    await c3.close();
  }
}));
