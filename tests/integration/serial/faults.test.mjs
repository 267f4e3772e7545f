// faults.test.mjs -- bad input and faults, each case a clear result with
// every process alive (or restarted by its supervisor, here the harness),
// no sandbox or file lost, and no chat seeing another's files:
//   malformed JSON-RPC, wrong argument types, a 10 MiB body, invalid UTF-8
//   in arguments and in program output, NUL bytes, 1 GiB of output, forged
//   and unsubstituted conversation ids, a user-id mismatch, a fork bomb, a
//   memory bomb, disk fill, an infinite loop, a process that ignores
//   SIGTERM, a timed-out command whose children setsid, double-fork and
//   clear their environment, a fork bomb left running by a command that
//   ended, a forged frame header in the agent's stdout, the running caps, a
//   forged last-call stamp, a write past the disk cap, kill -9 of each
//   talkback process under a 20-chat load, and a dockerd restart under load.
// It ends with one line of figures: "faults: N cases tried, N held".
// It restarts the machine's dockerd, so tests/run runs it alone, last.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';

import { Talkback, BUILD, withLogs, connect, run, runOk, post, call, waitFor } from '../harness.mjs';

const execFileP = promisify(execFile);
const tb = new Talkback({ name: 'faults', judges: 1 });
const results = [];

/** One case: name, and a function that throws when the case did not hold. */
async function attempt(name, fn) {
  try {
    await fn();
    results.push({ name, held: true });
  } catch (e) {
    results.push({ name, held: false, why: e.message.split('\n')[0] });
    throw e;
  }
}

/** Everything still answers: the gateway, the sandbox manager, a known chat's files. */
async function healthy(client, marker) {
  await tb.waitReady(60000);
  // After a restart of Docker the sandbox comes back with a resume notice
  // first; the file must be there either way.
  const r = await run(client, 'cat /work/marker.txt', { timeout: 60 });
  assert.equal(r.isError, false, r.text);
  assert.ok(r.text.endsWith(`$ cat /work/marker.txt\n${marker}\n`), r.text);
}

let home;
let homeConv;
const MARK = `mark-${Date.now()}`;

before(async () => {
  await tb.start();
  homeConv = tb.chat('home');
  home = await connect(tb, { conv: homeConv, user: 'owner' });
  await runOk(home, `echo ${MARK} > /work/marker.txt`);
});

after(async () => {
  const held = results.filter((r) => r.held).length;
  for (const r of results.filter((x) => !x.held)) process.stdout.write(`faults: did not hold: ${r.name}: ${r.why}\n`);
  process.stdout.write(`faults: ${results.length} cases tried, ${held} held\n`);
  await home?.close().catch(() => {});
  await tb.cleanup();
});

const rpc = (method, params, id = 1) => ({ jsonrpc: '2.0', id, method, params });
const headers = (conv, user) => ({ 'X-Conversation-Id': conv, ...(user ? { 'X-User-Id': user } : {}) });

test('protocol-level bad input', withLogs(tb, async () => {
  await attempt('malformed JSON -> -32700', async () => {
    const r = await post(tb, null, { raw: '{"jsonrpc":"2.0",', accept: 'application/json' });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32700);
  });
  await attempt('a JSON array -> -32600', async () => {
    const r = await post(tb, null, { raw: '[1,2]', accept: 'application/json' });
    assert.equal(r.json.error.code, -32600);
  });
  await attempt('wrong argument types -> isError naming the argument', async () => {
    const r = await post(tb, rpc('tools/call', { name: 'run', arguments: { command: 42 } }),
      { headers: headers(tb.chat('types')), accept: 'application/json' });
    assert.equal(r.json.result.isError, true);
    assert.match(r.json.result.content[0].text, /`command`/);
  });
  await attempt('10 MiB body -> 413', async () => {
    const r = await post(tb, rpc('ping', { pad: 'a'.repeat(10 << 20) }), { accept: 'application/json' });
    assert.equal(r.status, 413);
  });
  await attempt('invalid UTF-8 in arguments', async () => {
    const raw = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run","arguments":{"command":"echo \xff'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}}}'),
    ]);
    const r = await post(tb, null, { raw, headers: headers(tb.chat('utf8')), accept: 'application/json' });
    assert.ok(r.status === 400 || (r.json && r.json.result), `status ${r.status}`);
  });
  await attempt('NUL bytes in a written file arrive, and in a command are refused', async () => {
    const c = await connect(tb, { conv: tb.chat('nul') });
    const w = await call(c, 'write_file', { path: 'nul.bin', content: 'a\u0000b' });
    assert.equal(w.isError, false, w.text);
    assert.equal(await runOk(c, 'od -An -c nul.bin | tr -s " "'), ' a \\0 b\n');
    const r = await run(c, 'echo a\u0000b');
    assert.equal(r.isError, true);
    await c.close();
  });
  await attempt('forged and unsubstituted ids are refused', async () => {
    for (const id of ['{{LIBRECHAT_BODY_CONVERSATIONID}}', '../../etc', 'undefined', 'x'.repeat(200)]) {
      const r = await post(tb, rpc('tools/call', { name: 'run', arguments: { command: 'true' } }),
        { headers: headers(id), accept: 'application/json' });
      assert.equal(r.json.result.isError, true, id);
      assert.match(r.json.result.content[0].text, /talkback refused this call/);
    }
  });
  await attempt('user-id mismatch is refused', async () => {
    const r = await post(tb, rpc('tools/call', { name: 'run', arguments: { command: 'cat /work/marker.txt' } }),
      { headers: headers(homeConv, 'intruder'), accept: 'application/json' });
    assert.equal(r.json.result.isError, true);
    assert.doesNotMatch(r.json.result.content[0].text, new RegExp(MARK));
  });
  await healthy(home, MARK);
}));

test('hostile programs', withLogs(tb, async () => {
  const c = await connect(tb, { conv: tb.chat('hostile') });
  await attempt('invalid UTF-8 in program output', async () => {
    const r = await run(c, "printf 'ok \\xff\\xfe end\\n'");
    assert.match(r.text, /ok .* end/);
  });
  await attempt('1 GiB of output is cut, not kept', async () => {
    const r = await run(c, 'head -c 1073741824 /dev/zero | tr "\\0" y', { timeout: 300, callTimeout: 400000 });
    assert.ok(r.text.length < 80 * 1024, `${r.text.length} chars`);
    assert.match(r.text, /bytes cut from the middle of the output/);
  });
  await attempt('fork bomb is contained', async () => {
    const r = await call(c, 'run_code', { language: 'bash', code: ':(){ :|:& };:\n', timeout: 5 },
      { timeout: 120000 });
    assert.match(r.text, /\noutput:/);
    await waitFor(async () => !(await run(c, 'echo alive', { timeout: 20 })).isError,
      { timeoutMs: 90000, intervalMs: 2000, what: 'the sandbox to answer after the fork bomb' });
  });
  await attempt('memory bomb is killed at the limit', async () => {
    const r = await run(c, 'python3 -c "x = bytearray(2 << 30)"', { timeout: 60 });
    assert.equal(r.isError, true);
    assert.match(r.text, /exit code (137|1)\]|MemoryError|Killed/);
  });
  await attempt('disk fill ends with an error, the sandbox still works', async () => {
    const r = await run(c, 'dd if=/dev/zero of=/work/fill bs=1M count=300 status=none; echo done; rm -f /work/fill',
      { timeout: 120 });
    assert.match(r.text, /done/);
    await runOk(c, 'true');
  });
  await attempt('infinite loop times out', async () => {
    const r = await run(c, 'while :; do :; done', { timeout: 2 });
    assert.match(r.text, /\[timed out after 2 s/);
  });
  await attempt('a process that ignores SIGTERM is killed on timeout', async () => {
    const r = await run(c, 'trap "" TERM; sleep 1000', { timeout: 2 });
    assert.match(r.text, /\[timed out after 2 s/);
    assert.doesNotMatch(await runOk(c, 'ps -eo args'), /sleep 1000/);
  });
  await attempt('setsid, double-forked and env -i children of a timed-out command are killed', async () => {
    const cmd = 'setsid sh -c "sleep 1011 & env -i sleep 1012 &" & (env -i setsid sleep 1013 &) & '
      + 'sh -c "(setsid env -i sleep 1014 &) &" & sleep 60';
    const r = await run(c, cmd, { timeout: 2 });
    assert.match(r.text, /\[timed out after 2 s/);
    await waitFor(async () => !/sleep 101[1-4]/.test(await runOk(c, 'ps -eo args')),
      { timeoutMs: 10000, intervalMs: 300, what: 'no sleep 1011-1014 left' });
  });
  await attempt('a fork bomb left by a command ends with its call', async () => {
    const bystander = await connect(tb, { conv: tb.chat('bomb-bystander') });
    await runOk(bystander, 'true');
    const bomb = run(c, ':(){ :|:& };:', { timeout: 20, callTimeout: 120000 });
    assert.equal((await run(bystander, 'echo unaffected', { timeout: 20 })).text, '$ echo unaffected\nunaffected\n');
    await bomb;
    await bystander.close();
    assert.equal((await run(c, 'echo alive', { timeout: 20, callTimeout: 60000 })).text, '$ echo alive\nalive\n');
    const n = Number((await runOk(c, 'ps -e --no-headers | wc -l')).trim());
    assert.ok(n < 30, `${n} processes left after the bomb`);
  });
  await attempt('a forged frame header in the agent\'s stdout costs seconds, not the timeout', async () => {
    const h = Buffer.alloc(16);
    h.write('TBA\u0001', 0, 'latin1');
    h.writeUInt32BE(256 << 10, 4);
    h.writeUInt32BE(zlib.crc32(h.subarray(0, 12)), 12);
    const esc = [...h].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');
    const r = await run(c, `sleep 1; printf '${esc}' > /proc/1/fd/1; echo wrote`, { timeout: 300, callTimeout: 60000 });
    assert.match(r.text, /\[talkback: the link to this sandbox's agent broke while the command ran/, r.text);
    assert.equal((await run(c, 'echo fine', { timeout: 300, callTimeout: 60000 })).text, '$ echo fine\nfine\n');
  });
  await c.close();
  await healthy(home, MARK);
}));

test('sandboxes that want more than their share', withLogs(tb, async () => {
  // Its own instance: small caps, a 10 MiB disk cap, its own network (the
  // caps count the sandboxes on it).
  const net = `talkback-it-faultcaps-${Date.now()}`;
  const small = new Talkback({ name: 'faults-caps', env: {
    TALKBACK_NETWORK: net, TALKBACK_MAX_RUNNING: '2', TALKBACK_MAX_RUNNING_PER_USER: '1', TALKBACK_DISK_CAP: '10M',
  } });
  await small.start();
  try {
    const a = await connect(small, { conv: small.chat('a'), user: 'u1' });
    const a2 = await connect(small, { conv: small.chat('a2'), user: 'u1' });
    const b = await connect(small, { conv: small.chat('b'), user: 'u2' });
    const c3 = await connect(small, { conv: small.chat('c'), user: 'u3' });
    // A cap makes room by stopping an idle sandbox; with every one busy
    // (a call in flight) it refuses.
    const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    await attempt('the running caps refuse with their text while every sandbox is busy', async () => {
      await runOk(a, 'true');
      const busyA = run(a, 'sleep 8', { timeout: 30 });
      await pause(2000);
      const r1 = await run(a2, 'true');
      assert.match(r1.text, /^\[talkback: this user already has 1 sandboxes running, the most one user may have \(setting `max_running_per_user`\)/);
      await runOk(b, 'true');
      const busyB = run(b, 'sleep 8', { timeout: 30 });
      await pause(2000);
      const r2 = await run(c3, 'true');
      assert.match(r2.text, /^\[talkback: the sandbox host already runs 2 sandboxes, its limit \(setting `max_running`\)/);
      await Promise.all([busyA, busyB]);
    });
    await attempt('a future last-call stamp written in the sandbox does not keep it from idle stop', async () => {
      await runOk(a, "mkdir -p /var/lib/talkback && touch -d '+10 years' /var/lib/talkback/last-call");
      const { stdout } = await execFileP(path.join(BUILD, 'talkback-reaper'),
        ['--once', '--reaper_prefix', `${small.prefix}a-`, '--reaper_clock_offset', '2h'],
        { env: small.env({}), timeout: 60000 });
      assert.match(stdout, /1 stopped/);
    });
    await attempt('a write far past the disk cap is refused, or its sandbox removed', async () => {
      await runOk(b, 'head -c 30000000 /dev/zero > /work/big; echo written');
      await waitFor(async () => (await run(b, 'true')).text.includes('grew past the 10 MiB disk cap'),
        { what: 'the over-cap sandbox to be replaced', timeoutMs: 30000, intervalMs: 1000 });
    });
    await Promise.all([a, a2, b, c3].map((x) => x.close()));
  } finally {
    await small.cleanup();
    await execFileP('docker', ['network', 'rm', net]).catch(() => {});
  }
  await healthy(home, MARK);
}));

/** 20 chats each running a short command, over and over, while fn
 *  disrupts talkback; then every chat must answer correctly again within a
 *  minute.  Calls in flight at the moment of a crash may be lost (a client
 *  sees its own timeout), so they get a short one here.  Returns the counts
 *  and how many chats came back. */
async function underLoad(label, fn) {
  const chats = [];
  for (let i = 0; i < 20; i++) chats.push(await connect(tb, { conv: tb.chat(`${label}-${i}`) }));
  for (const [i, c] of chats.entries()) await runOk(c, `echo warm-${i}`, { timeout: 60 });
  let stop = false;
  let after = false;
  const back = new Set();
  const answers = { ok: 0, error: 0, thrown: 0 };
  const loops = chats.map(async (c, i) => {
    while (!stop) {
      const phase2 = after;
      try {
        const r = await run(c, `echo chat-${i}`, { timeout: 30, callTimeout: 20000 });
        if (!r.isError && r.text.endsWith(`\nchat-${i}\n`)) {
          answers.ok++;
          if (phase2) back.add(i);
        } else {
          answers.error++;
          await new Promise((res) => setTimeout(res, 500));
        }
      } catch {
        answers.thrown++;
        await new Promise((res) => setTimeout(res, 500));
      }
    }
  });
  try {
    await fn();
    after = true;
    await waitFor(() => back.size === chats.length, { timeoutMs: 90000, intervalMs: 250,
      what: 'every chat to answer again' }).catch(() => {});
  } finally {
    stop = true;
    await Promise.all(loops);
    await Promise.all(chats.map((c) => c.close().catch(() => {})));
  }
  return { ...answers, back: back.size };
}

test('kill -9 of each talkback process under a 20-chat load', withLogs(tb, async () => {
  for (const [name, kill, start] of [
    ['gateway', () => tb.killGateway(), () => tb.startGateway()],
    ['sandbox manager', () => tb.killSandbox(), () => tb.startSandbox()],
    ['judge', () => tb.killJudge(0), () => tb.startJudge(0)],
  ]) {
    await attempt(`kill -9 of the ${name} under load`, async () => {
      const a = await underLoad(`load-${name.replace(' ', '')}`, async () => {
        await new Promise((r) => setTimeout(r, 3000));
        await kill();
        await new Promise((r) => setTimeout(r, 1000));
        await start();
        await tb.waitReady(60000);
      });
      assert.equal(a.back, 20, JSON.stringify(a));
    });
  }
  await healthy(home, MARK);
}));

async function dockerdPids() {
  const { stdout } = await execFileP('pidof', ['dockerd']).catch(() => ({ stdout: '' }));
  return stdout.trim().split(/\s+/).filter(Boolean).map(Number);
}

test('dockerd restart under load', withLogs(tb, async () => {
  await attempt('dockerd restart under a 20-chat load', async () => {
    const a = await underLoad('dockerd', async () => {
      await new Promise((r) => setTimeout(r, 3000));
      for (const pid of await dockerdPids()) process.kill(pid, 'SIGTERM');
      await waitFor(async () => (await dockerdPids()).length === 0, { timeoutMs: 60000, what: 'dockerd to stop' });
      const log = fs.openSync('/var/log/talkback-dockerd.log', 'a');
      spawn('dockerd', [], { detached: true, stdio: ['ignore', log, log] }).unref();
      await waitFor(async () => execFileP('docker', ['info']).then(() => true, () => false),
        { timeoutMs: 60000, intervalMs: 500, what: 'dockerd back' });
    });
    assert.equal(a.back, 20, JSON.stringify(a));
  });
  await healthy(home, MARK);
}));
