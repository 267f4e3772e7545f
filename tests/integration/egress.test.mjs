// egress.test.mjs -- deploy/egress-rule, for real, on network namespaces
// this test makes itself.
//
// The set-up, all on this machine:
//   - a Docker network of its own (tbegress-<rand>) and a container from
//     talkback-sandbox:latest on it: the "sandbox";
//   - a network namespace "LAN host" at 10.199.R.2, joined to the host by a
//     veth pair (host side 10.199.R.1), listening on 8080 and on 53;
//   - a network namespace "connected host" at 198.51.100.M+2 (a range that
//     is neither private nor reserved), joined to the host the same way:
//     the host's own LAN in a public range, as eth0's is on some hosts;
//   - a network namespace "router", joined to the host by a veth pair
//     (10.198.R.1 / 10.198.R.2), and behind it, routed (not directly
//     connected to the host): an "internet host" at 203.0.113.N+2 and a
//     "reserved host" at 198.18.R.2 (198.18.0.0/15 is reserved), each
//     listening on 8080;
//   - a listener of this test on the host's own address 10.199.R.1.
// Traffic goes only between these: the sandbox reaches the namespaces
// through Docker's NAT and the host's routes to the veths.  Nothing is sent
// to any address outside this machine.
//
// It checks that before the rule everything answers; with the rule (made
// for the test network, in chains of the test's own name, with --dns for
// the LAN host) the LAN host's 8080, the connected host, the reserved host
// and the host's own address are refused at once, the LAN host's port 53
// and the internet host still answer, a second install changes nothing,
// and the record (network, Docker id, subnet, chain) is written; after
// --remove everything answers again and the chains and the record are
// gone.  Also: shellcheck is clean on the script.
//
// Needs root, iptables, iproute2 (ip netns) and Docker.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import crypto from 'node:crypto';
import fs from 'node:fs';
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
const M = crypto.randomInt(0, 64) * 4;
const conn = { ns: `tbeg-${tag}-con`, host: `tbe${tag}c`, peer: `tbe${tag}cp`, hostIp: `198.51.100.${M + 1}`, ip: `198.51.100.${M + 2}`, len: 30 };
const router = { ns: `tbeg-${tag}-rtr`, host: `tbe${tag}r`, peer: `tbe${tag}rp`, hostIp: `10.198.${R}.1`, ip: `10.198.${R}.2`, len: 30 };
// Behind the router: {ns, in the router: gw, in ns: ip, the /30}.
const inet = { ns: `tbeg-${tag}-inet`, gw: `203.0.113.${N + 1}`, ip: `203.0.113.${N + 2}`, net: `203.0.113.${N}/30` };
const rsv = { ns: `tbeg-${tag}-rsv`, gw: `198.18.${R}.1`, ip: `198.18.${R}.2`, net: `198.18.${R}.0/30` };
const dockerNet = `tbegress-${tag}`;
const chain = `TBEG-${tag}`;
const hostPort = 18000 + crypto.randomInt(0, 1000);
const record = `/run/talkback-egress/${dockerNet}`; // the rule's default for the test network

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

/** A namespace behind the router: a veth pair from the router into it,
 *  and the host's route to it through the router. */
async function makeRouted(h) {
  const dev = `r-${h.ns.split('-').pop()}`; // in the router's namespace
  await sh('ip', 'netns', 'add', h.ns);
  await sh('ip', '-n', router.ns, 'link', 'add', dev, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', h.ns);
  await sh('ip', '-n', router.ns, 'addr', 'add', `${h.gw}/30`, 'dev', dev);
  await sh('ip', '-n', router.ns, 'link', 'set', dev, 'up');
  await sh('ip', '-n', h.ns, 'addr', 'add', `${h.ip}/30`, 'dev', 'eth0');
  await sh('ip', '-n', h.ns, 'link', 'set', 'eth0', 'up');
  await sh('ip', '-n', h.ns, 'link', 'set', 'lo', 'up');
  await sh('ip', '-n', h.ns, 'route', 'add', 'default', 'via', h.gw);
  await sh('ip', 'route', 'add', h.net, 'via', router.ip);
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
  const addrs = await sh('ip', '-4', '-o', 'addr', 'show') + await sh('ip', '-4', 'route', 'show', 'table', 'all');
  for (const r of [`10.199.${R}.`, `10.198.${R}.`, `198.18.${R}.`, `198.51.100.${M}`, `203.0.113.${N}`])
    assert.ok(!addrs.includes(r), `test range ${r} already in use; run again`);

  await sh('docker', 'network', 'create', '--label', 'talkback.test=egress', dockerNet);
  container = (await sh('docker', 'run', '-d', '--label', 'talkback.test=egress', '--network', dockerNet,
    '--name', `tbegress-${tag}`, IMAGE, 'sleep', 'infinity')).trim();
  await makeHost(lan);
  await makeHost(conn);
  await makeHost(router);
  await sh('ip', 'netns', 'exec', router.ns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
  await makeRouted(inet);
  await makeRouted(rsv);
  nsListener(lan.ns, [8080, 53], 'lan');
  nsListener(conn.ns, [8080], 'conn');
  nsListener(inet.ns, [8080], 'inet');
  nsListener(rsv.ns, [8080], 'rsv');
  hostServer = net.createServer((s) => s.end(`host:${hostPort}\n`));
  await new Promise((res, rej) => hostServer.once('error', rej).listen(hostPort, lan.hostIp, res));
});

after(async () => {
  await rule('--remove', '--chain', chain).catch(() => {});
  for (const c of listeners) c.kill('SIGKILL');
  hostServer?.close();
  if (container) await sh('docker', 'rm', '-f', container).catch(() => {});
  await sh('docker', 'network', 'rm', dockerNet).catch(() => {});
  for (const h of [inet, rsv, lan, conn, router]) {
    await sh('ip', 'netns', 'del', h.ns).catch(() => {});
    if (h.host) await sh('ip', 'link', 'del', h.host).catch(() => {}); // gone with the namespace, normally
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

test('egress-rule: LAN, connected, reserved and host blocked, DNS and the internet allowed, --remove restores', async () => {
  // Before: everything answers.
  assert.equal((await waitReachable(lan.ip, 8080)).text, 'lan:8080');
  assert.equal((await waitReachable(lan.ip, 53)).text, 'lan:53');
  assert.equal((await waitReachable(inet.ip, 8080)).text, 'inet:8080');
  assert.equal((await waitReachable(rsv.ip, 8080)).text, 'rsv:8080');
  assert.equal((await waitReachable(conn.ip, 8080)).text, 'conn:8080');
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
  // The host's own LAN in a public range, and a reserved range behind a router.
  for (const [what, ip] of [['connected host', conn.ip], ['reserved host', rsv.ip]]) {
    const r = await probe(ip, 8080);
    assert.equal(r.ok, false, `${what} ${ip} reachable with the rule: ${r.text}`);
    assert.ok(r.ms < 4000, `${what}: refused quickly, took ${r.ms} ms: ${r.text}`);
  }
  // The record: what the rule covers, for the sandbox manager.
  const id = (await sh('docker', 'network', 'inspect', '-f', '{{.Id}}', dockerNet)).trim();
  const subnet = (await sh('docker', 'network', 'inspect', '-f', '{{range .IPAM.Config}}{{.Subnet}}{{end}}', dockerNet)).trim();
  const rec = fs.readFileSync(record, 'utf8');
  for (const line of [`network ${dockerNet}`, `id ${id}`, `subnet ${subnet}`, `chain ${chain}`])
    assert.ok(rec.split('\n').includes(line), `the record has "${line}":\n${rec}`);
  assert.equal(fs.statSync(record).mode & 0o777, 0o644);
  // DNS to the allowed name server, and the public address: still fine.
  assert.equal((await probe(lan.ip, 53)).text, 'lan:53');
  assert.equal((await probe(inet.ip, 8080)).text, 'inet:8080');

  // Remove: everything answers again, the chains are gone.
  await rule('--remove', '--chain', chain);
  assert.equal((await waitReachable(lan.ip, 8080)).text, 'lan:8080');
  assert.equal((await waitReachable(lan.hostIp, hostPort)).text, `host:${hostPort}`);
  assert.equal((await waitReachable(conn.ip, 8080)).text, 'conn:8080');
  assert.equal((await waitReachable(rsv.ip, 8080)).text, 'rsv:8080');
  assert.ok(!fs.existsSync(record), 'the record is gone');
  await assert.rejects(sh('iptables', '-S', chain), 'the chain is gone');
  assert.ok(!(await sh('iptables', '-S', 'DOCKER-USER')).includes(chain));
  assert.ok(!(await sh('iptables', '-S', 'INPUT')).includes(chain));
});

test('egress-rule --dry-run prints the rules and changes nothing', async () => {
  const out = await rule('--dry-run', '--subnet', '172.31.250.0/24', '--chain', chain);
  assert.match(out, /iptables -A TBEG-[0-9a-f]+ -d 10\.0\.0\.0\/8 -j REJECT/);
  assert.match(out, /iptables -A TBEG-[0-9a-f]+ -d 169\.254\.0\.0\/16 -j REJECT/);
  for (const r of ['0.0.0.0/8', '192.0.0.0/24', '198.18.0.0/15', '240.0.0.0/4', `198.51.100.${M}/30`])
    assert.ok(out.includes(`-d ${r} -j REJECT`), `${r} is rejected:\n${out}`);
  assert.ok(!out.includes('-d 203.0.113.'), 'a routed public range is not');
  assert.match(out, /iptables -I DOCKER-USER 1 -s 172\.31\.250\.0\/24 -j TBEG-/);
  assert.match(out, /iptables -I INPUT 1 -s 172\.31\.250\.0\/24 -j TBEG-[0-9a-f]+-IN/);
  await assert.rejects(sh('iptables', '-S', chain), 'nothing was installed');
});
