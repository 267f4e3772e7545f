// egress.test.mjs -- deploy/egress-rule, for real, on network namespaces
// this test makes itself.
//
// The set-up, all on this machine:
//   - a Docker network of its own (tbegress-<rand>) and a container from
//     talkback-sandbox:latest on it: the "sandbox";
//   - a network namespace "LAN host" at 10.199.R.2, joined to the host by a
//     veth pair (host side 10.199.R.1), listening on 8080 and on 53;
//   - a network namespace "internet host" at 203.0.113.N+2 (a documentation
//     range, so not a private one), the same way, listening on 8080;
//   - a listener of this test on the host's own address 10.199.R.1.
// Traffic goes only between these: the sandbox reaches the namespaces
// through Docker's NAT and the host's routes to the veths.  Nothing is sent
// to any address outside this machine.
//
// It checks that before the rule everything answers; with the rule (made
// for the test network, in chains of the test's own name, with --dns for
// the LAN host) the LAN host's 8080 and the host's own address are refused
// at once, the LAN host's port 53 and the internet host still answer, and a
// second install changes nothing; after --remove everything answers again
// and the chains are gone.  Also: shellcheck is clean on the script.
//
// Needs root, iptables, iproute2 (ip netns) and Docker.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const execFileP = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const RULE = path.join(ROOT, 'deploy', 'egress-rule');
const IMAGE = 'talkback-sandbox:latest';

const tag = crypto.randomBytes(3).toString('hex');
const R = crypto.randomInt(0, 256);
const N = crypto.randomInt(0, 64) * 4;
const lan = { ns: `tbeg-${tag}-lan`, host: `tbe${tag}l`, peer: `tbe${tag}lp`, hostIp: `10.199.${R}.1`, ip: `10.199.${R}.2`, len: 24 };
const inet = { ns: `tbeg-${tag}-inet`, host: `tbe${tag}i`, peer: `tbe${tag}ip`, hostIp: `203.0.113.${N + 1}`, ip: `203.0.113.${N + 2}`, len: 30 };
const dockerNet = `tbegress-${tag}`;
const chain = `TBEG-${tag}`;
const hostPort = 18000 + crypto.randomInt(0, 1000);

let container;
let hostServer;
const listeners = [];

async function sh(cmd, ...args) {
  const { stdout } = await execFileP(cmd, args, { maxBuffer: 16 << 20 });
  return stdout;
}

/** A TCP server in a network namespace answering `reply` on each port. */
function nsListener(ns, ports, reply) {
  const js = `const net=require('net');for(const p of ${JSON.stringify(ports)})` +
    `net.createServer(s=>{s.end(${JSON.stringify(reply)}+':'+p+'\\n')}).listen(p,'0.0.0.0');` +
    "setTimeout(()=>process.exit(0),600000);"; // never outlives a stuck test by long
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', js], { stdio: 'ignore' });
  listeners.push(child);
}

async function makeHost(h) {
  await sh('ip', 'netns', 'add', h.ns);
  await sh('ip', 'link', 'add', h.host, 'type', 'veth', 'peer', 'name', h.peer);
  await sh('ip', 'link', 'set', h.peer, 'netns', h.ns);
  await sh('ip', 'addr', 'add', `${h.hostIp}/${h.len}`, 'dev', h.host);
  await sh('ip', 'link', 'set', h.host, 'up');
  await sh('ip', '-n', h.ns, 'addr', 'add', `${h.ip}/${h.len}`, 'dev', h.peer);
  await sh('ip', '-n', h.ns, 'link', 'set', h.peer, 'up');
  await sh('ip', '-n', h.ns, 'link', 'set', 'lo', 'up');
  await sh('ip', '-n', h.ns, 'route', 'add', 'default', 'via', h.hostIp);
}

/** Connect from the sandbox to ip:port: {ok, text, ms}. */
async function probe(ip, port) {
  const t0 = Date.now();
  try {
    const out = await sh('docker', 'exec', container, 'timeout', '5', 'bash', '-c',
      `exec 3<>/dev/tcp/${ip}/${port} && head -n 1 <&3`);
    return { ok: true, text: out.trim(), ms: Date.now() - t0 };
  } catch (e) {
    return { ok: false, text: String(e.stderr || e.message).trim(), ms: Date.now() - t0 };
  }
}

async function waitReachable(ip, port) {
  const end = Date.now() + 15000;
  for (;;) {
    const r = await probe(ip, port);
    if (r.ok) return r;
    if (Date.now() > end) throw new Error(`${ip}:${port} never answered from the sandbox: ${r.text}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

const rule = (...args) => sh(RULE, ...args);

before(async () => {
  assert.equal(process.getuid(), 0, 'the egress test needs root (iptables, ip netns)');
  await sh('iptables', '-V');
  await sh('docker', 'image', 'inspect', IMAGE);
  const addrs = await sh('ip', '-4', '-o', 'addr', 'show');
  assert.ok(!addrs.includes(` 10.199.${R}.`) && !addrs.includes(` ${inet.hostIp}/`), 'test ranges already in use; run again');

  await sh('docker', 'network', 'create', '--label', 'talkback.test=egress', dockerNet);
  container = (await sh('docker', 'run', '-d', '--label', 'talkback.test=egress', '--network', dockerNet,
    '--name', `tbegress-${tag}`, IMAGE, 'sleep', 'infinity')).trim();
  await makeHost(lan);
  await makeHost(inet);
  nsListener(lan.ns, [8080, 53], 'lan');
  nsListener(inet.ns, [8080], 'inet');
  hostServer = net.createServer((s) => s.end(`host:${hostPort}\n`));
  await new Promise((res, rej) => hostServer.once('error', rej).listen(hostPort, lan.hostIp, res));
});

after(async () => {
  await rule('--remove', '--chain', chain).catch(() => {});
  for (const c of listeners) c.kill('SIGKILL');
  hostServer?.close();
  if (container) await sh('docker', 'rm', '-f', container).catch(() => {});
  await sh('docker', 'network', 'rm', dockerNet).catch(() => {});
  for (const h of [lan, inet]) {
    await sh('ip', 'netns', 'del', h.ns).catch(() => {});
    await sh('ip', 'link', 'del', h.host).catch(() => {}); // gone with the namespace, normally
  }
});

test('egress-rule is shellcheck-clean', async (t) => {
  try {
    await sh('shellcheck', '--version');
  } catch {
    t.skip('shellcheck is not installed (deploy/setup installs it)');
    return;
  }
  await sh('shellcheck', RULE);
});

test('egress-rule: LAN and host blocked, DNS and the internet allowed, --remove restores', async () => {
  // Before: everything answers.
  assert.equal((await waitReachable(lan.ip, 8080)).text, 'lan:8080');
  assert.equal((await waitReachable(lan.ip, 53)).text, 'lan:53');
  assert.equal((await waitReachable(inet.ip, 8080)).text, 'inet:8080');
  assert.equal((await waitReachable(lan.hostIp, hostPort)).text, `host:${hostPort}`);

  // Install (twice: the second run must change nothing).
  const args = ['--network', dockerNet, '--chain', chain, '--dns', lan.ip];
  const out = await rule(...args);
  assert.match(out, /installed for \d+\.\d+\.\d+\.\d+\/\d+/);
  const rulesOnce = await sh('iptables', '-S', chain);
  await rule(...args);
  assert.equal(await sh('iptables', '-S', chain), rulesOnce, 'a second install leaves the chain as it was');
  const jumps = (await sh('iptables', '-S', 'DOCKER-USER')).split('\n').filter((l) => l.endsWith(`-j ${chain}`));
  assert.equal(jumps.length, 1, `one jump from DOCKER-USER:\n${jumps.join('\n')}`);
  const inJumps = (await sh('iptables', '-S', 'INPUT')).split('\n').filter((l) => l.endsWith(`-j ${chain}-IN`));
  assert.equal(inJumps.length, 1, `one jump from INPUT:\n${inJumps.join('\n')}`);

  // The LAN host and the host itself: refused, and at once (REJECT, not a
  // silent drop that leaves a command hanging).
  const l = await probe(lan.ip, 8080);
  assert.equal(l.ok, false, `LAN host reachable with the rule: ${l.text}`);
  assert.ok(l.ms < 4000, `refused quickly, took ${l.ms} ms: ${l.text}`);
  const h = await probe(lan.hostIp, hostPort);
  assert.equal(h.ok, false, `host address reachable with the rule: ${h.text}`);
  assert.ok(h.ms < 4000, `refused quickly, took ${h.ms} ms: ${h.text}`);
  // DNS to the allowed name server, and the public address: still fine.
  assert.equal((await probe(lan.ip, 53)).text, 'lan:53');
  assert.equal((await probe(inet.ip, 8080)).text, 'inet:8080');

  // Remove: everything answers again, the chains are gone.
  await rule('--remove', '--chain', chain);
  assert.equal((await waitReachable(lan.ip, 8080)).text, 'lan:8080');
  assert.equal((await waitReachable(lan.hostIp, hostPort)).text, `host:${hostPort}`);
  await assert.rejects(sh('iptables', '-S', chain), 'the chain is gone');
  assert.ok(!(await sh('iptables', '-S', 'DOCKER-USER')).includes(chain));
  assert.ok(!(await sh('iptables', '-S', 'INPUT')).includes(chain));
});

test('egress-rule --dry-run prints the rules and changes nothing', async () => {
  const out = await rule('--dry-run', '--subnet', '172.31.250.0/24', '--chain', chain);
  assert.match(out, /iptables -A TBEG-[0-9a-f]+ -d 10\.0\.0\.0\/8 -j REJECT/);
  assert.match(out, /iptables -A TBEG-[0-9a-f]+ -d 169\.254\.0\.0\/16 -j REJECT/);
  assert.match(out, /iptables -I DOCKER-USER 1 -s 172\.31\.250\.0\/24 -j TBEG-/);
  assert.match(out, /iptables -I INPUT 1 -s 172\.31\.250\.0\/24 -j TBEG-[0-9a-f]+-IN/);
  await assert.rejects(sh('iptables', '-S', chain), 'nothing was installed');
});
