// hostops.test.mjs -- the sandbox manager's operations on its host, which
// the gateway's routing and talkbackctl use, against the real dockerd:
//   - locate says whether this host holds a chat's container, and its state;
//   - list prints one tab-separated line per sandbox (conversation, user,
//     host, state, idle seconds, disk bytes);
//   - drain and undrain keep their flag in state_dir;
//   - stop keeps the chat's files, rm removes them (and the chat is told);
//   - a request naming another host reaches no worker;
//   - a spare of the warm pool a chat claimed (renamed, its chat in a claim
//     record, no conversation label) is that chat's sandbox for locate,
//     list, stop and rm, and spares nobody claimed are not listed.
// These operations are no MCP tools: they are reached with
// talkback-hubcall, which binds the hub while the gateway is stopped.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  Talkback, BUILD, withLogs, connect, run, runOk, containersOf, containerIdFromInside, docker, waitFor, sparesOf,
} from './harness.mjs';

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

test('a claimed spare is its chat\'s sandbox for locate, list, stop and rm; unclaimed spares are not listed',
  withLogs(tb, async () => {
    let spares = [];
    await waitFor(async () => {
      spares = (await sparesOf(tb)).filter((x) => x.state === 'running').map((x) => x.id);
      return spares.length >= 1;
    }, { timeoutMs: 60000, what: 'a running spare' });
    const conv = tb.chat('claimed');
    const c = await connect(tb, { conv, user: USER });
    let id;
    try {
      id = await containerIdFromInside(c);
      await runOk(c, 'echo kept > /work/mark.txt');
    } finally {
      await c.close();
    }
    assert.ok(spares.includes(id), `the chat got one of the spares ${spares} (got ${id})`);
    const labels = JSON.parse(await docker('inspect', '--format', '{{json .Config.Labels}}', id));
    assert.equal(labels['talkback.conversation'], undefined, 'a claimed spare has no conversation label');
    // The pool makes the next spare: list must leave it out.
    await waitFor(async () => (await sparesOf(tb)).some((x) => x.state === 'running'),
      { timeoutMs: 60000, what: 'a new running spare' });
    await withoutGateway(async () => {
      let r = await hubcall('locate', conv);
      assert.equal(r.data.found, true, JSON.stringify(r));
      assert.equal(r.data.state, 'running');

      r = await hubcall('list', '', [`@${HOST}`]);
      assert.equal(r.is_error, false, r.text);
      const lines = r.text.split('\n').filter(Boolean);
      const line = lines.find((l) => l.startsWith(`${conv}\t`));
      assert.ok(line, `no line for ${conv} in:\n${r.text}`);
      assert.deepEqual(line.split('\t').slice(0, 4), [conv, USER, HOST, 'running']);
      for (const l of lines) assert.notEqual(l.split('\t')[0], '', `a spare nobody claimed is listed:\n${r.text}`);

      r = await hubcall('stop', conv);
      assert.equal(r.is_error, false, r.text);
      assert.match(r.text, /files are kept/);
      assert.equal((await hubcall('locate', conv)).data.state, 'exited');

      r = await hubcall('rm', conv);
      assert.equal(r.is_error, false, r.text);
      assert.match(r.text, /with all its files/);
      assert.equal((await hubcall('locate', conv)).data.found, false);
    });
    assert.deepEqual(await containersOf(conv), []);
    assert.ok(!fs.existsSync(path.join(tb.stateDir, `${id}.claim`)), 'rm drops the claim record');
  }));
