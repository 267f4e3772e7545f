// tiers.test.mjs -- the paused tier, against a real dockerd:
//   a sandbox idle past idle_pause is paused by the reaper's sweep (the
//     sandbox manager pauses it: Docker reports it paused), talkbackctl
//     shows it paused, /metrics counts it under state="paused"; a call
//     unpauses it with its background server still answering, and the
//     result says it was paused, once
//   a call in flight is never paused
//   paused and then idle past idle_stop: stopped, the resume says idle
//   max_paused: past it the least recently used paused sandbox is stopped,
//     and its chat is told why
//   at max_running_per_user a paused sandbox makes room like a running one
// The reaper runs as `talkback-reaper --once --reaper_prefix <this file's
// chats>`, with the chats' last-call records set back in time.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';

import {
  BUILD, Talkback, withLogs, connect, run, runOk, containersOf, docker, randomTag, setLastCall, waitFor,
} from './harness.mjs';

const execFileP = promisify(execFile);
const REAPER = path.join(BUILD, 'talkback-reaper');
const CTL = path.join(BUILD, 'talkbackctl');
const net = `talkback-it-tiers-${randomTag()}`;
const HOST = `it-tiers-${process.pid}`;
const tb = new Talkback({ name: 'tiers', env: { TALKBACK_NETWORK: net, TALKBACK_HOST_NAME: HOST } });

before(async () => { await tb.start(); });
after(async () => {
  await tb.cleanup();
  await docker('network', 'rm', net).catch(() => {});
});

async function reap(scope, ...args) {
  const { stdout, stderr } = await execFileP(REAPER, ['--once', '--reaper_prefix', tb.prefix + scope, ...args],
    { env: tb.env({}), timeout: 120000 });
  return `${stdout}${stderr}`;
}

async function state(conv) {
  const ids = await containersOf(conv);
  if (ids.length === 0) return 'gone';
  return (await docker('inspect', '-f', '{{.State.Status}}', ids[0].id)).trim();
}

const minutesAgo = (m) => new Date(Date.now() - m * 60000);

const PAUSED = /^\[This chat's sandbox was paused for (\d+ seconds?|1 minute) \(no calls for over 5 minutes\) and runs again: its files and the programs it left running \(servers, background jobs\) are as they were\.\]\n\$ /;

test('idle past idle_pause: paused; ctl and /metrics say so; a call unpauses it, its server still answering',
  withLogs(tb, async () => {
    const conv = tb.chat('pause');
    const c = await connect(tb, { conv, user: 'user-tiers' });
    await runOk(c, 'echo kept > /work/f');
    await runOk(c, 'cd /tmp && setsid nohup python3 -m http.server 8123 >/tmp/srv.log 2>&1 & ' +
      'for i in $(seq 50); do curl -s -o /dev/null localhost:8123/ && break; sleep 0.1; done; echo up');
    // Used just now: left alone.
    assert.doesNotMatch(await reap('pause-'), /pause talkback-/);
    assert.equal(await state(conv), 'running');

    await setLastCall(tb, conv, minutesAgo(10));
    const out = await reap('pause-');
    assert.match(out, /pause talkback-.* \(idle: last call ended 10 minutes ago, over the 300-second pause limit\)/);
    assert.match(out, /1 paused/);
    assert.equal(await state(conv), 'paused');

    const { stdout } = await execFileP(CTL, ['--json', 'sandboxes'], { env: tb.env({}), timeout: 60000 });
    assert.equal(JSON.parse(stdout).find((s) => s.conversation === conv)?.state, 'paused', stdout);
    await waitFor(async () => {
      const r = await fetch(`http://127.0.0.1:${tb.port}/metrics`);
      const text = await r.text();
      return text.includes(`talkback_sandboxes{state="paused",host="${HOST}"} 1\n`);
    }, { what: 'talkback_sandboxes{state="paused"} 1', timeoutMs: 15000, intervalMs: 500 });

    const r = await run(c, 'curl -s localhost:8123/ | head -c 15; echo; cat /work/f');
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, PAUSED);
    assert.match(r.text, /<!DOCTYPE HTML>\nkept\n$/i);
    assert.equal(await state(conv), 'running');
    // Told once.
    assert.equal((await run(c, 'true')).text, '$ true\n');
    await c.close();
  }));

test('a call in flight is never paused', withLogs(tb, async () => {
  const conv = tb.chat('busy');
  const c = await connect(tb, { conv });
  await runOk(c, 'true');
  const slow = run(c, 'sleep 15; echo done');
  await new Promise((res) => setTimeout(res, 1500));
  await setLastCall(tb, conv, minutesAgo(10));
  const out = await reap('busy-');
  assert.match(out, /keep talkback-.* \(its stamp is old, but 1 call\(s\) of it are running\)/);
  assert.doesNotMatch(out, /1 paused/);
  assert.equal(await state(conv), 'running');
  const r = await slow;
  assert.equal(r.text, '$ sleep 15; echo done\ndone\n');
  await c.close();
}));

test('paused, then idle past idle_stop: stopped, and the resume says idle', withLogs(tb, async () => {
  const conv = tb.chat('stop');
  const c = await connect(tb, { conv });
  await runOk(c, 'echo kept > /work/f');
  await setLastCall(tb, conv, minutesAgo(10));
  assert.match(await reap('stop-'), /1 paused/);
  assert.equal(await state(conv), 'paused');
  await setLastCall(tb, conv, minutesAgo(120));
  const out = await reap('stop-');
  assert.match(out, /stop talkback-.* \(idle, paused: last call ended 2 hours ago, over the 60-minute limit\)/);
  assert.equal(await state(conv), 'exited');
  const r = await run(c, 'cat /work/f');
  assert.match(r.text, /^\[Resumed this chat's sandbox, stopped (\d+ seconds?|1 minute) ago \(idle for over 60 minutes\): its files and installs are as they were/);
  assert.match(r.text, /\nkept\n$/);
  await c.close();
}));

test('max_paused: past it the least recently used paused sandbox is stopped, and its chat told why',
  withLogs(tb, async () => {
    const convs = [tb.chat('cap-a'), tb.chat('cap-b'), tb.chat('cap-c')];
    const clients = await Promise.all(convs.map((conv) => connect(tb, { conv })));
    for (const c of clients) await runOk(c, 'true');
    await setLastCall(tb, convs[0], minutesAgo(30));
    await setLastCall(tb, convs[1], minutesAgo(20));
    await setLastCall(tb, convs[2], minutesAgo(10));
    const out = await reap('cap-', '--max_paused', '2');
    assert.match(out, /3 paused/);
    assert.match(out, new RegExp(`stop talkback-${convs[0]}-[0-9a-f]{16} \\(paused: more than 2 paused sandboxes, this one unused for 30 minutes\\)`));
    assert.equal(await state(convs[0]), 'exited');
    assert.equal(await state(convs[1]), 'paused');
    assert.equal(await state(convs[2]), 'paused');
    const r = await run(clients[0], 'true');
    assert.match(r.text, /^\[Resumed this chat's sandbox, stopped (\d+ seconds?|1 minute) ago \(idle and paused, then stopped as the least recently used of more than 2 paused sandboxes, setting `max_paused`\): its files and installs are as they were/);
    assert.match((await run(clients[1], 'true')).text, PAUSED);
    await Promise.all(clients.map((c) => c.close()));
  }));

test('a paused sandbox makes room at a cap: stopped, kept, and its chat told why', async () => {
  const n2 = `talkback-it-tiers-${randomTag()}`;
  const t = new Talkback({ name: 'tiers-room', env: {
    TALKBACK_NETWORK: n2, TALKBACK_HOST_NAME: `${HOST}-room`, TALKBACK_MAX_RUNNING_PER_USER: '1',
  } });
  await t.start();
  try {
    await withLogs(t, async () => {
      const [p1, p2] = [t.chat('room-1'), t.chat('room-2')];
      const c1 = await connect(t, { conv: p1, user: 'user-room' });
      const c2 = await connect(t, { conv: p2, user: 'user-room' });
      await runOk(c1, 'echo kept > /work/f');
      await setLastCall(t, p1, minutesAgo(10));
      const { stdout } = await execFileP(REAPER, ['--once', '--reaper_prefix', t.prefix + 'room-'],
        { env: t.env({}), timeout: 120000 });
      assert.match(stdout, /1 paused/);
      assert.equal(await state(p1), 'paused');
      // Her second chat, at her cap of one: the paused one is stopped.
      assert.equal(await runOk(c2, 'echo two'), 'two\n');
      assert.equal(await state(p1), 'exited');
      const r = await run(c1, 'cat /work/f');
      assert.match(r.text, /^\[Resumed this chat's sandbox, stopped (\d+ seconds?|1 minute) ago \(to make room for another chat of this user: one user may have 1 running at once, setting `max_running_per_user`, and this one was the least recently used\): its files and installs are as they were/);
      assert.match(r.text, /\nkept\n$/);
      await Promise.all([c1.close(), c2.close()]);
    })();
  } finally {
    await t.cleanup();
    await docker('network', 'rm', n2).catch(() => {});
  }
});
