// sandboxnet.test.mjs -- the sandbox network, checked against the egress
// rule's record before every sandbox is made or started (egress_check =
// require), against the real dockerd while talkback runs.
//
// The instance has a sandbox network of its own (tbnet-<rand>, through the
// `network` config key) and a record of its own (egress_record in its
// folder); the rule goes in chains of its own name (TBNET-<rand>), for that
// network only, and is removed at the end.  Nothing here touches the
// shared network talkback-sandboxes or its rule.
//
// It checks that:
//   - before the rule is installed, a new chat's call says that its sandbox
//     cannot start, why, and that the operator must run deploy/egress-rule,
//     and no sandbox of it exists;
//   - with the rule (and so its record), calls run;
//   - the network removed and made again by hand as a plain
//     `docker network create` (a new id, inter-container traffic on) while
//     talkback runs: a new chat and a stopped chat's resume are both
//     refused, and neither container runs; with the rule run again for the
//     new network, still refused, since inter-container traffic is on (the
//     text says how to make the network); made as talkback makes it and
//     the rule run again, both chats run again;
//   - the manager's log has the loud line.
//
// Needs root, iptables and Docker.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';

import { Talkback, withLogs, connect, run, runOk, containersOf, docker, randomTag, ROOT } from './harness.mjs';

const execFileP = promisify(execFile);
const RULE = path.join(ROOT, 'deploy', 'egress-rule');
const tag = randomTag();
const NET = `tbnet-${tag}`;
const CHAIN = `TBNET-${tag.slice(0, 6)}`;
const tb = new Talkback({
  name: 'sandboxnet',
  env: { TALKBACK_NETWORK: NET, TALKBACK_EGRESS_CHECK: 'require', TALKBACK_WARM_POOL: '0' },
});
const RECORD = path.join(tb.dir, 'egress-record');
tb.baseEnv.TALKBACK_EGRESS_RECORD = RECORD;

const NOT_PROTECTED = new RegExp(`^\\[talkback: this chat's sandbox cannot start, so nothing ran: the sandbox network ${NET} ` +
  'is not the one the egress rule protects \\(');

const rule = (...args) => execFileP(RULE, ['--network', NET, '--chain', CHAIN, '--record', RECORD, ...args]);

/** Whether conv has a running container. */
async function running(conv) {
  for (const { id } of await containersOf(conv)) {
    if ((await docker('inspect', '-f', '{{.State.Running}}', id)).trim() === 'true') return true;
  }
  return false;
}

/** Remove the network and make it again, by hand. */
async function remake(...opts) {
  await docker('network', 'rm', NET);
  await docker('network', 'create', ...opts, NET);
}

before(async () => {
  assert.equal(process.getuid(), 0, 'this test needs root (iptables)');
  await tb.start();
});

after(async () => {
  await rule('--remove').catch(() => {});
  await tb.cleanup();
  await docker('network', 'rm', NET).catch(() => {});
});

test('no sandbox starts on a network the egress rule does not protect', withLogs(tb, async () => {
  const first = tb.chat('first');
  const c1 = await connect(tb, { conv: first, user: 'u' });
  // No rule yet, so no record: refused, and says what to do.
  const r0 = await run(c1, 'echo unprotected');
  assert.match(r0.text, NOT_PROTECTED, r0.text);
  assert.match(r0.text, /record .* is missing/, r0.text);
  assert.match(r0.text, /Tell the user the operator must run deploy\/egress-rule on the sandbox host\.\]$/, r0.text);
  assert.deepEqual(await containersOf(first), [], 'no sandbox was made');

  // With the rule: it runs.
  await rule();
  assert.equal(await runOk(c1, 'echo protected'), 'protected\n');

  // Re-made by hand while talkback runs, as a plain `docker network create`.
  const { id } = (await containersOf(first))[0];
  await docker('stop', '-t', '1', id);
  await remake();
  const second = tb.chat('second');
  const c2 = await connect(tb, { conv: second, user: 'u' });
  const r1 = await run(c2, 'echo new chat');
  assert.match(r1.text, NOT_PROTECTED, r1.text);
  assert.match(r1.text, /made again after the egress rule was installed/, r1.text);
  assert.equal(await running(second), false, 'the new chat has no running sandbox');
  const r2 = await run(c1, 'echo resumed');
  assert.match(r2.text, NOT_PROTECTED, r2.text);
  assert.equal(await running(first), false, 'the stopped chat was not started');

  // The rule run again for it: inter-container traffic is still on.
  await rule();
  const r3 = await run(c2, 'echo icc');
  assert.match(r3.text, NOT_PROTECTED, r3.text);
  assert.match(r3.text, /lets sandboxes reach each other/, r3.text);
  assert.match(r3.text, /docker network create --opt com\.docker\.network\.bridge\.enable_icc=false --label talkback\.network=sandboxes/, r3.text);
  assert.equal(await running(second), false);

  // Made as talkback makes it, the rule again: both chats run.
  await remake('--opt', 'com.docker.network.bridge.enable_icc=false', '--label', 'talkback.network=sandboxes');
  await rule();
  assert.equal(await runOk(c2, 'echo new chat'), 'new chat\n');
  const r4 = await run(c1, 'echo resumed');
  assert.match(r4.text, /^\[Resumed this chat's sandbox[^\n]*\n\$ echo resumed\nresumed\n$/, r4.text);
  const nets = JSON.parse(await docker('inspect', '-f', '{{json .NetworkSettings.Networks}}', id));
  const netId = (await docker('network', 'inspect', '-f', '{{.Id}}', NET)).trim();
  assert.equal(nets[NET]?.NetworkID, netId, 'the resumed sandbox is on the protected network');

  const log = fs.readFileSync(path.join(tb.dir, 'sandbox.log'), 'utf8');
  assert.match(log, /SANDBOX NETWORK NOT PROTECTED: network tbnet-/);
  await c1.close();
  await c2.close();
}));
