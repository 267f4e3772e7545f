// diskcap.test.mjs -- the disk cap, against real dockerds:
//   where Docker cannot cap a container (this host's overlay2 on ext4): the
//     sandbox manager says so once at start, sizes a sandbox after its
//     calls, removes one past disk_cap at once, and the chat's next call is
//     told why; a long write is stopped while it runs once its sandbox is
//     past the cap, and the call says so (the figure: how far past the cap
//     dd at full speed got, printed as a test diagnostic)
//   where it can (a second dockerd this file starts, its data root on a
//     loop-mounted file system with quotas, made by deploy/quota-data-root
//     as deploy/setup does: xfs with pquota where the kernel has xfs
//     quotas, else btrfs with quota groups): a write far past the cap fails
//     at once, the layer never holds much more than the cap, and the model
//     is told why the write failed
// The second dockerd is this file's own: its own data root, exec root,
// socket, config file, containerd namespace and cgroup parent, in a
// network namespace of its own (entered with nsenter, which keeps the
// host's /sys and its cgroup mounts), with no default bridge and no
// iptables rules; it gets a small image (debian:trixie) by docker save |
// load, and is stopped and unmounted at the end.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';

import {
  Talkback, ROOT, BUILD, withLogs, connect, run, runOk, containersOf, containerIdFromInside, docker, waitFor, randomTag,
  sleep,
} from './harness.mjs';

const execFileP = promisify(execFile);
const net = `talkback-it-disk-${randomTag()}`;
const tb = new Talkback({ name: 'diskcap', env: { TALKBACK_NETWORK: net, TALKBACK_DISK_CAP: '10M' } });

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
  await docker('network', 'rm', net).catch(() => {});
});

test('not enforced at write time here: said once at start; a sandbox past the cap is removed right after its call',
  withLogs(tb, async () => {
    const log = fs.readFileSync(path.join(tb.dir, 'sandbox.log'), 'utf8');
    assert.equal(log.split('is NOT enforced at write time').length - 1, 1, log);
    assert.match(log, /disk_cap 10 MiB is NOT enforced at write time: no container with a size limit could be made \(.*\)/);

    const conv = tb.chat('big');
    const c = await connect(tb, { conv });
    // fallocate is done at once, mostly before the first sizing under the
    // call (disk_watch_min_ms after it began); on a loaded machine that
    // sizing may come first and stop the call.  Either way the sandbox goes.
    const big = await run(c, 'fallocate -l 20M /work/big && echo ok');
    assert.ok(big.text === '$ fallocate -l 20M /work/big && echo ok\nok\n' ||
      /\n\[No space left: this sandbox had written \d+ MiB, past its disk cap of 10 MiB/.test(big.text), big.text);
    // No reaper runs here: the sandbox manager itself sizes it after the call.
    await waitFor(async () => (await containersOf(conv)).length === 0,
      { what: 'the over-cap sandbox to be removed', timeoutMs: 30000, intervalMs: 250 });
    const r = await run(c, 'ls /work');
    assert.match(r.text, /^\[This chat's previous sandbox was removed \d+ seconds? ago because it grew past the 10 MiB disk cap: its files and installs are gone, and this is a new, empty one\.\]\n\$ ls \/work\n$/);

    // Under the cap: kept.
    await runOk(c, 'head -c 2000000 /dev/urandom > /work/small && echo ok');
    await sleep(3000);
    assert.equal((await containersOf(conv)).length, 1);
    // A write that ran out of space here is the host's disk: said so.
    const f = await run(c, "echo 'dd: error writing /work/x: No space left on device' >&2; exit 1");
    assert.match(f.text, /\n\[No space left: the sandbox host's own disk is full \(this sandbox may write up to 10 MiB, and one that writes more is removed with all its files\)\. Nothing in the sandbox can fix that: tell the user the sandbox host's disk is full\.\]\n$/);
    await c.close();
  }));

test('not enforced at write time: a long write is stopped once its sandbox is past the cap, and the call says so',
  withLogs(tb, async () => {
    const conv = tb.chat('dd');
    const c = await connect(tb, { conv });
    // 4 GiB at full speed, 10 MiB allowed: sized while it runs, stopped.
    const r = await run(c, 'dd if=/dev/zero of=/work/big bs=1M count=4096 status=none; echo finished');
    assert.equal(r.isError, true, r.text);
    assert.doesNotMatch(r.text, /\nfinished\n/);
    const m = r.text.match(/\n\[No space left: this sandbox had written (\d+ MiB), past its disk cap of 10 MiB \(setting `disk_cap`\), so the command and everything it started were stopped, and the sandbox is removed with all its files: the next call starts a clean one\. Write less than 10 MiB in all: keep big downloads and build output out of the sandbox, and delete what is no longer needed as you go \(`du -xsh \/work \/root \/tmp 2>\/dev\/null` shows what is big\)\.\]\n$/);
    assert.ok(m, r.text);
    // The figure: how far past the cap one write at full speed got.
    const log = fs.readFileSync(path.join(tb.dir, 'sandbox.log'), 'utf8');
    const stop = log.match(/stopping the calls in sandbox \S+: (\d+) MiB written, past the 10 MiB disk cap/);
    assert.ok(stop, 'the stop is logged');
    process.stdout.write(`# dd at full speed was stopped at ${stop[1]} MiB written (cap 10 MiB)\n`);
    // Removed by the time the call answered; the next call says why.
    assert.equal((await containersOf(conv)).length, 0);
    const next = await run(c, 'ls /work');
    assert.match(next.text, /^\[This chat's previous sandbox was removed \d+ seconds? ago because it grew past the 10 MiB disk cap: its files and installs are gone, and this is a new, empty one\.\]\n\$ ls \/work\n$/);
    // A call under the cap is not stopped.
    assert.equal(await runOk(c, 'dd if=/dev/zero of=/work/small bs=1M count=2 status=none; sleep 2; echo finished'),
      'finished\n');
    await c.close();
  }));

// ---- a second dockerd whose data root has quotas ----------------------------------

const tag = randomTag();
const q = {
  base: `/var/tmp/talkback-it-quota-${tag}`,
  ns: `tbq-${tag}`,
  exec: `/run/tbq-${tag}`,
  sock: `/run/tbq-${tag}.sock`,
  pid: `/run/tbq-${tag}.pid`,
  child: null,
};
q.root = `${q.base}/root`;
const qhost = `unix://${q.sock}`;
const qdocker = (...args) => execFileP('docker', ['-H', qhost, ...args], { maxBuffer: 16 << 20 }).then((r) => r.stdout);

async function startQuotaDockerd() {
  await docker('image', 'inspect', 'debian:trixie').catch(() => {
    throw new Error('debian:trixie is missing on this host (deploy/image/build makes or pulls it)');
  });
  fs.mkdirSync(q.base, { recursive: true });
  const { stdout } = await execFileP(path.join(ROOT, 'deploy', 'quota-data-root'),
    [q.root, '--size', '2G', '--image', `${q.base}/root.img`]);
  const driver = stdout.trim();
  fs.writeFileSync(`${q.base}/daemon.json`, '{}\n');
  await execFileP('ip', ['netns', 'add', q.ns]);
  await execFileP('ip', ['netns', 'exec', q.ns, 'ip', 'link', 'set', 'lo', 'up']);
  const log = fs.openSync(`${q.base}/dockerd.log`, 'a');
  q.child = spawn('nsenter', [`--net=/run/netns/${q.ns}`, 'dockerd',
    '--config-file', `${q.base}/daemon.json`, '--data-root', q.root, '--storage-driver', driver,
    '--exec-root', q.exec, '--pidfile', q.pid, '-H', qhost,
    '--bridge=none', '--iptables=false', '--ip6tables=false', '--ip-masq=false',
    '--containerd-namespace', `tbq-${tag}`, '--containerd-plugins-namespace', `tbq-${tag}-plugins`,
    '--cgroup-parent', `/tbq-${tag}`], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  await waitFor(async () => {
    if (q.child.exitCode !== null) throw new Error(`dockerd exited: ${fs.readFileSync(`${q.base}/dockerd.log`, 'utf8').slice(-2000)}`);
    await qdocker('version');
    return true;
  }, { what: 'the second dockerd', timeoutMs: 60000, intervalMs: 500 });
  await execFileP('bash', ['-c', `docker save debian:trixie | docker -H ${qhost} load`], { maxBuffer: 16 << 20 });
  return driver;
}

async function stopQuotaDockerd() {
  if (q.child && q.child.exitCode === null) {
    const ids = (await qdocker('ps', '-aq').catch(() => '')).split('\n').filter(Boolean);
    if (ids.length) await qdocker('rm', '-f', ...ids).catch(() => {});
    const exited = new Promise((resolve) => q.child.once('exit', resolve));
    q.child.kill('SIGTERM');
    const t = setTimeout(() => q.child.kill('SIGKILL'), 20000);
    await exited;
    clearTimeout(t);
  }
  await execFileP(path.join(ROOT, 'deploy', 'quota-data-root'), ['--remove', q.root]).catch(() => {});
  await execFileP('ip', ['netns', 'del', q.ns]).catch(() => {});
  for (const p of [q.base, q.exec, q.sock, q.pid]) fs.rmSync(p, { recursive: true, force: true });
}

test('enforced at write time on a data root with quotas: a write far past the cap fails, and the model is told why',
  async () => {
    let tq;
    try {
      const driver = await startQuotaDockerd();
      tq = new Talkback({ name: 'diskcap-quota', env: {
        TALKBACK_DOCKER_HOST: qhost, TALKBACK_IMAGE: 'debian:trixie', TALKBACK_DISK_CAP: '64M',
        // A daemon in a namespace of its own, with no route out and no
        // iptables: no egress rule there, and the machine's record at
        // /run/talkback-egress names the machine's network, not this one's.
        TALKBACK_EGRESS_CHECK: 'off',
      } });
      await tq.start();
      await withLogs(tq, async () => {
        const log = fs.readFileSync(path.join(tq.dir, 'sandbox.log'), 'utf8');
        assert.match(log, new RegExp(`disk_cap 64 MiB is enforced at write time \\(storage driver ${driver}: `));
        assert.doesNotMatch(log, /NOT enforced/);

        const c = await connect(tq, { conv: tq.chat('quota') });
        // 1 GiB asked, 64 MiB allowed: refused part way, and told why.
        const r = await run(c, 'dd if=/dev/zero of=/work/big bs=1M count=1024 status=none');
        assert.equal(r.isError, true, r.text);
        assert.match(r.text, /(No space left on device|Disk quota exceeded)/);
        assert.match(r.text, /\n\[No space left: this sandbox's disk is capped at 64 MiB \(setting `disk_cap`\), and this write would have passed it\. Delete what is no longer needed/);
        const mib = Number((await runOk(c, 'sync; du -sm /work/big | cut -f1')).trim());
        assert.ok(mib <= 64 + 24, `${mib} MiB written past a 64 MiB cap`);
        // An instant 6 GiB file is refused too.
        const f = await run(c, 'fallocate -l 6G /work/huge');
        assert.equal(f.isError, true, f.text);
        assert.match(f.text, /this sandbox's disk is capped at 64 MiB/);
        // Docker's own count of the layer agrees.
        // (read from inside: with the warm pool the chat's sandbox may be a
        // claimed spare, which carries no conversation label)
        const id = await containerIdFromInside(c);
        assert.match(id, /^[0-9a-f]{64}$/);
        const rw = Number((await qdocker('inspect', '--size', '-f', '{{.SizeRw}}', id)).trim());
        assert.ok(rw <= (64 + 24) * 1024 * 1024, `SizeRw ${rw}`);
        // The sandbox stays usable: free the space and write again.
        assert.equal(await runOk(c, 'rm -f /work/big /work/huge; sync; echo fine > /work/after && cat /work/after'), 'fine\n');
        await c.close();
      })();
    } finally {
      if (tq) await tq.cleanup();
      await stopQuotaDockerd();
    }
  });
