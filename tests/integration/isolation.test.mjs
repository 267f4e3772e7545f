// isolation.test.mjs -- sandboxes on a network made with inter-container
// traffic ON (as a network from before talkback turned it off would be)
// are kept apart by deploy/egress-rule.
//
// The set-up, all on this machine: a Docker network of this test's own
// (tbiso-<rand>, Docker's default: inter-container traffic on) and two
// containers from talkback-sandbox:latest on it, one listening on its own
// address of that network.  Traffic goes only between the two.
//
// It checks that before the rule the other container reaches the listener
// (so the probe and the listener work, and the network really lets
// containers talk); with the rule (made for the test network, in chains of
// the test's own name) it cannot, while the listener still answers its own
// container; after --remove it can again.
//
// Needs root, iptables and Docker.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { waitFor } from './harness.mjs';

const execFileP = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const RULE = path.join(ROOT, 'deploy', 'egress-rule');
const IMAGE = 'talkback-sandbox:latest';
const tag = crypto.randomBytes(3).toString('hex');
const NET = `tbiso-${tag}`;
const CHAIN = `TBISO-${tag}`;
const A = `tbiso-${tag}-a`;
const B = `tbiso-${tag}-b`;
let ipB;
let ruleIn = false;

async function sh(cmd, ...args) {
  const { stdout } = await execFileP(cmd, args, { maxBuffer: 16 << 20 });
  return stdout;
}

/** Whether container c gets the listener's greeting from b within 4 s. */
async function reaches(c) {
  const probe = `import socket;s=socket.create_connection(("${ipB}",8765),3);print(s.recv(9).decode().strip())`;
  try {
    const out = await sh('docker', 'exec', c, 'timeout', '4', 'python3', '-c', probe);
    return out.includes('hello');
  } catch {
    return false;
  }
}

before(async () => {
  await sh('docker', 'image', 'inspect', IMAGE);
  await sh('docker', 'network', 'create', NET);
  const icc = (await sh('docker', 'network', 'inspect', '-f',
    '{{index .Options "com.docker.network.bridge.enable_icc"}}', NET)).trim();
  assert.notEqual(icc, 'false', 'the test network has inter-container traffic on');
  for (const c of [A, B]) {
    await sh('docker', 'run', '-d', '--name', c, '--network', NET, '--label', `tbiso=${tag}`, IMAGE, 'sleep', 'infinity');
  }
  ipB = (await sh('docker', 'inspect', '-f', `{{(index .NetworkSettings.Networks "${NET}").IPAddress}}`, B)).trim();
  const srv = 'import socket\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n' +
    `s.bind(("${ipB}",8765))\ns.listen(5)\nwhile True:\n  c,_=s.accept();c.sendall(b"hello\\n");c.close()\n`;
  await sh('docker', 'exec', '-d', B, 'python3', '-c', srv);
  await waitFor(() => reaches(B), { what: 'the listener in b', timeoutMs: 15000 });
});

after(async () => {
  if (ruleIn) await sh(RULE, '--remove', '--chain', CHAIN).catch(() => {});
  await sh('docker', 'rm', '-f', A, B).catch(() => {});
  await sh('docker', 'network', 'rm', NET).catch(() => {});
});

test('without the rule, containers on a network with inter-container traffic on reach each other', async () => {
  assert.equal(await reaches(A), true);
});

test('with the egress rule, they do not; each still reaches its own listener', async () => {
  ruleIn = true;
  const out = await sh(RULE, '--network', NET, '--chain', CHAIN);
  assert.match(out, /other sandboxes/);
  assert.equal(await reaches(A), false, 'a must not reach b');
  assert.equal(await reaches(B), true, 'b reaches its own listener');
  // After --remove, a reaches b again: it was the rule.
  await sh(RULE, '--remove', '--chain', CHAIN);
  ruleIn = false;
  assert.equal(await reaches(A), true);
});
