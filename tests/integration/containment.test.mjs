// containment.test.mjs -- what a runaway or hostile command does stays
// inside its call:
//   - a timed-out command whose children double-fork, call setsid and clear
//     their environment (env -i) leaves nothing running;
//   - a command that kills its shepherd (`kill -9 $PPID`) ends at once with
//     everything it started, while a server another command of the chat
//     left on purpose meanwhile keeps running;
//   - a background server started on purpose by a command that ended
//     normally keeps running;
//   - a fork bomb ends with its call, the next call of that chat answers and
//     another chat is not affected;
//   - the sandbox manager's `exec` operation (the judge's) reports the
//     command's CPU time and peak memory (cpu_ms, max_rss_kb) on the agent
//     path, and stops a command at output_limit (output_limited) on both
//     the agent path and the Docker exec path;
//   - a forged frame header written into the agent's stdout from inside the
//     sandbox costs the next call seconds, not its timeout.
//
// Two instances: one with the agent (the default: build/talkback-agent next
// to talkback-sandbox) and one without (TALKBACK_AGENT_PATH=/nonexistent).
// `exec` is no MCP tool, so it is reached with talkback-hubcall, which binds
// the hub while that instance's gateway is stopped.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import zlib from 'node:zlib';

import {
  Talkback, BUILD, withLogs, connect, run, runOk, rawPs, waitFor,
} from './harness.mjs';

const HUBCALL = path.join(BUILD, 'talkback-hubcall');
const fast = new Talkback({ name: 'contain' });
const slow = new Talkback({ name: 'contain-exec', sandboxEnv: { TALKBACK_AGENT_PATH: '/nonexistent' } });
const USER = 'user-contain';

before(async () => {
  await Promise.all([fast.start(), slow.start()]);
});

after(async () => {
  await Promise.all([fast.cleanup(), slow.cleanup()]);
});

/** One request straight to the sandbox manager of tb: the parsed reply. */
function hubcall(tb, op, conv, args) {
  const argv = ['sandbox', op, conv, USER];
  for (const [k, v] of Object.entries(args)) argv.push(typeof v === 'number' ? `${k}:=${v}` : `${k}=${v}`);
  return new Promise((resolve, reject) => {
    execFile(HUBCALL, argv, { env: tb.env({}), timeout: 120000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`talkback-hubcall ${argv.join(' ')}: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

/** Run fn with tb's gateway stopped (talkback-hubcall binds the hub). */
async function withoutGateway(tb, fn) {
  await tb.stopGateway();
  try {
    return await fn();
  } finally {
    await tb.startGateway();
    await tb.waitReady(30000);
  }
}

const both = (fn) => withLogs(fast, withLogs(slow, fn));

test('a timed-out command that double-forks, setsid\'s and clears its environment leaves nothing', withLogs(fast, async () => {
  const conv = fast.chat('escape');
  const c = await connect(fast, { conv, user: USER });
  try {
    const cmd = [
      'setsid sh -c "sleep 311 & env -i sleep 312 &" &',
      '(env -i setsid sleep 313 &) &',
      'sh -c "(setsid env -i sh -c \'trap \\"\\" TERM HUP; sleep 314\' &) &" &',
      'echo started; sleep 60',
    ].join(' ');
    const r = await run(c, cmd, { timeout: 2 });
    assert.match(r.text, /\[timed out after 2 s/, r.text);
    await waitFor(async () => !/sleep 31[1-4]/.test(await rawPs(fast, conv, USER)),
      { timeoutMs: 10000, intervalMs: 300, what: 'no sleep 311-314 left' });
  } finally {
    await c.close();
  }
}));

test('a command that kills its shepherd ends with it; a server another command left meanwhile stays', withLogs(fast, async () => {
  const conv = fast.chat('shepkill');
  const c = await connect(fast, { conv, user: USER });
  try {
    // A kills its shepherd (the parent of its bash) after 3 s, having left
    // escapees of every kind; B, meanwhile, leaves a server on purpose.
    const a = run(c, 'setsid sleep 331 & (env -i setsid sleep 332 &) & sleep 3; kill -9 $PPID; ' +
      'setsid env -i sleep 333 & sleep 334; echo not-reached', { timeout: 30, callTimeout: 60000 });
    await runOk(c, 'setsid nohup sleep 335 >/dev/null 2>&1 & echo started');
    const r = await a;
    assert.doesNotMatch(r.text, /\nnot-reached\n/, r.text);
    await waitFor(async () => !/sleep 33[1-4]/.test(await rawPs(fast, conv, USER)),
      { timeoutMs: 10000, intervalMs: 300, what: 'no sleep 331-334 left' });
    assert.match(await rawPs(fast, conv, USER), /sleep 335/, 'the server B left is still running');
  } finally {
    await c.close();
  }
}));

test('a background server started by a command that ended normally keeps running', withLogs(fast, async () => {
  const conv = fast.chat('server');
  const c = await connect(fast, { conv, user: USER });
  try {
    // One that lets go of the output, and one that keeps holding it.
    await runOk(c, 'setsid nohup sleep 321 >/dev/null 2>&1 & echo started');
    await runOk(c, 'env -i sleep 322 & echo started');
    const ps = await runOk(c, 'ps -eo args');
    assert.match(ps, /sleep 321/, ps);
    assert.match(ps, /sleep 322/, ps);
  } finally {
    await c.close();
  }
}));

test('a fork bomb ends with its call; the chat answers again and another chat is not affected', withLogs(fast, async () => {
  const conv = fast.chat('bomb');
  const c = await connect(fast, { conv, user: USER });
  const other = await connect(fast, { conv: fast.chat('bystander'), user: USER });
  try {
    await runOk(other, 'echo warm');
    const bomb = run(c, ':(){ :|:& };:', { timeout: 20, callTimeout: 120000 });
    const side = await run(other, 'echo unaffected', { timeout: 20 });
    assert.equal(side.text, '$ echo unaffected\nunaffected\n');
    const r = await bomb;
    assert.ok(r.text.startsWith('$ :(){ :|:& };:\n'), r.text);
    const alive = await run(c, 'echo alive', { timeout: 20, callTimeout: 60000 });
    assert.equal(alive.text, '$ echo alive\nalive\n');
    const n = Number((await runOk(c, 'ps -e --no-headers | wc -l')).trim());
    assert.ok(n < 30, `${n} processes left in the sandbox after the bomb`);
  } finally {
    await c.close();
    await other.close();
  }
}));

test('exec reports CPU time and peak memory, and stops a command at output_limit', both(async () => {
  const convF = fast.chat('exec');
  const convS = slow.chat('exec');
  // Make both sandboxes first (and let a later ps find what is left).
  const cf = await connect(fast, { conv: convF, user: USER });
  const cs = await connect(slow, { conv: convS, user: USER });
  await runOk(cf, 'true');
  await runOk(cs, 'true');

  const hog = 'python3 -c "x = bytearray(64 << 20); print(sum(range(3 * 10 ** 6)))"';
  const flood = 'setsid sh -c "yes flood" & setsid env -i sh -c "sleep 331" & yes main';
  for (const [tb, conv, agent] of [[fast, convF, true], [slow, convS, false]]) {
    const [usage, limited, under] = await withoutGateway(tb, async () => [
      await hubcall(tb, 'exec', conv, { command: hog, timeout: 60 }),
      await hubcall(tb, 'exec', conv, { command: flood, timeout: 60, output_limit: 5000 }),
      await hubcall(tb, 'exec', conv, { command: 'head -c 5000 /dev/zero | tr "\\0" y', timeout: 60,
        output_limit: 5000 }),
    ]);
    const where = agent ? 'agent path' : 'exec path';
    assert.equal(usage.data.exit_code, 0, `${where}: ${JSON.stringify(usage)}`);
    assert.equal(usage.data.output, '4499998500000\n');
    assert.equal(usage.data.output_limited, false);
    if (agent) {
      assert.ok(Number.isInteger(usage.data.cpu_ms) && usage.data.cpu_ms >= 0, JSON.stringify(usage.data));
      assert.ok(usage.data.max_rss_kb >= 64 * 1024, `max_rss_kb ${usage.data.max_rss_kb} for 64 MiB`);
    } else {
      assert.equal(usage.data.cpu_ms, undefined, `${where} has no CPU figure: ${JSON.stringify(usage.data)}`);
      assert.equal(usage.data.max_rss_kb, undefined);
    }

    assert.equal(limited.data.output_limited, true, `${where}: ${JSON.stringify(limited).slice(0, 500)}`);
    assert.equal(limited.data.exit_code, 137, where);
    assert.equal(limited.data.timed_out, false, where);
    assert.equal(limited.is_error, true, where);
    assert.ok(limited.data.output.length <= 5000, `${where}: ${limited.data.output.length} bytes kept`);
    assert.match(limited.text, /\[output limit of 5000 bytes reached: the command and everything it started were killed\]/);

    // Exactly the limit is not past it.
    assert.equal(under.data.output_limited, false, `${where}: ${JSON.stringify(under.data).slice(0, 300)}`);
    assert.equal(under.data.exit_code, 0, where);
    assert.equal(under.data.output.length, 5000, where);
  }
  // On the agent path everything the flood started is gone, the setsid'd
  // and the env -i'd ones too.
  await waitFor(async () => !/yes flood|yes main|sleep 331/.test(await rawPs(fast, convF, USER)),
    { timeoutMs: 10000, intervalMs: 300, what: 'nothing of the flood left (agent path)' });
  await cf.close();
  await cs.close();
}));

/** A valid frame header (proto/frame.h) announcing len payload bytes, as
 *  printf escapes: magic "TBA" + version 1, length, payload CRC, header CRC. */
function forgedHeader(len) {
  const h = Buffer.alloc(16);
  h.write('TBA\u0001', 0, 'latin1');
  h.writeUInt32BE(len, 4);
  h.writeUInt32BE(0, 8);
  h.writeUInt32BE(zlib.crc32(h.subarray(0, 12)), 12);
  return [...h].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');
}

test('a forged frame header in the agent\'s stdout costs seconds, not the call\'s timeout', withLogs(fast, async () => {
  const conv = fast.chat('forged');
  const c = await connect(fast, { conv, user: USER });
  const other = await connect(fast, { conv: fast.chat('forged-bystander'), user: USER });
  try {
    await runOk(c, 'echo warm');
    await runOk(other, 'echo warm');
    // The call that writes it loses its own answer to it, and says so; its
    // client gives up long before the call's own timeout would end it.  (The
    // sleep lets the agent's "started" through first: a call whose start
    // was swallowed too is run again through Docker exec.)
    const r = await run(c, `sleep 1; printf '${forgedHeader(256 << 10)}' > /proc/1/fd/1; echo wrote`,
      { timeout: 300, callTimeout: 60000 });
    assert.match(r.text, /\[talkback: the link to this sandbox's agent broke while the command ran/, r.text);
    assert.equal(r.isError, true);
    const next = await run(c, 'echo fine', { timeout: 300, callTimeout: 60000 });
    assert.equal(next.text, '$ echo fine\nfine\n');
    // Written by a process the call left behind, it hits a later call (3 s
    // on: the call that leaves it watches it for up to background_watch_ms
    // first, longer on a loaded machine).
    await runOk(c, `(sleep 3; printf '${forgedHeader(256 << 10)}' > /proc/1/fd/1) >/dev/null 2>&1 & echo later`);
    const late = await run(c, 'sleep 5; echo after', { timeout: 300, callTimeout: 60000 });
    assert.ok(late.text.startsWith('$ sleep 5; echo after\n'), late.text);
    const again = await run(c, 'echo fine', { timeout: 300, callTimeout: 60000 });
    // The writer ended meanwhile: its end may be said first, once (it is true).
    assert.equal(again.text.replace(/^\[Since the last call, `sleep 3[^\n]*\]\n/, ''), '$ echo fine\nfine\n');
    assert.equal((await run(other, 'echo unaffected')).text, '$ echo unaffected\nunaffected\n');
  } finally {
    await c.close();
    await other.close();
  }
}));
