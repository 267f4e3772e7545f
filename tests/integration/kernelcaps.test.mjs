// kernelcaps.test.mjs -- what one sandbox may take of what every sandbox and
// the host share, against the real dockerd:
//   - inotify: sandboxes run as the host's root with no user namespace, so
//     their inotify instances and watches come out of the host root's
//     budget.  The agent kills a process holding more than the sandbox's
//     caps (inotify_max_watches, inotify_max_instances; small here, so the
//     test holds few of the host's watches), in the command that holds them
//     or in the background, and the result says which and why; a process
//     under the caps is left alone.
//   - pictures past the agent's own watches: an image drawn in a folder the
//     image watcher could not watch (its 8192 folders are used up) still
//     comes back, found by the fallback walk at the command's end.
//   - memory: below mem_floor of MemAvailable no sandbox is created,
//     claimed or started, with a clear text; a running one goes on.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, connect, run, runOk, containersOf, docker, waitFor } from './harness.mjs';

const tb = new Talkback({
  name: 'kernelcaps',
  sandboxEnv: { TALKBACK_INOTIFY_MAX_WATCHES: '300', TALKBACK_INOTIFY_MAX_INSTANCES: '4' },
});
// The defaults, for the image watcher's own cap.
const plain = new Talkback({ name: 'kernelcaps-plain' });

before(async () => { await Promise.all([tb.start(), plain.start()]); });
after(async () => { await Promise.all([tb.cleanup(), plain.cleanup()]); });

// Holds argv[1] watches (folders under /tmp/w) in each of argv[2] instances
// for argv[3] seconds.
const HOLD = `import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
n, inst, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
for i in range(n):
    os.makedirs('/tmp/w/%d' % i, exist_ok=True)
for k in range(inst):
    fd = libc.inotify_init1(0)
    if fd < 0:
        sys.exit('inotify_init1: errno %d' % ctypes.get_errno())
    for i in range(n):
        if libc.inotify_add_watch(fd, b'/tmp/w/%d' % i, 0x100) < 0:
            sys.exit('inotify_add_watch: errno %d' % ctypes.get_errno())
print('holding', n * inst, flush=True)
time.sleep(secs)
print('still alive', flush=True)
`;

async function withHolder(conv) {
  const c = await connect(tb, { conv });
  const w = await c.callTool({ name: 'write_file', arguments: { path: '/tmp/hold.py', content: HOLD } });
  assert.equal(w.isError, false);
  return c;
}

const LINE = /\[talkback: processes of this sandbox held more inotify (watches|instances) than the (\d+) one sandbox may hold \(setting `(inotify_max_\w+)`\), so process \d+ \(`python3`, (over )?\d+ watches in \d+ instances?\) was killed(, and \d+ more process(es)?)?: the host's inotify is shared by every sandbox\. Watch fewer folders \(leave out node_modules and build output\), or make the tool poll instead \(CHOKIDAR_USEPOLLING=1 for tools built on chokidar\), then run it again\.\]\n/;

test('a command holding more inotify watches than its sandbox may is killed, and told why',
  withLogs(tb, async () => {
    const c = await withHolder(tb.chat('watches'));
    const r = await run(c, 'python3 /tmp/hold.py 2000 1 60');
    assert.equal(r.isError, true, r.text);
    assert.doesNotMatch(r.text, /still alive/);
    const m = r.text.match(LINE);
    assert.ok(m, r.text);
    assert.equal(m[1], 'watches');
    assert.equal(m[2], '300');
    assert.equal(m[3], 'inotify_max_watches');
    assert.match(r.text, /\(`python3`, over 300 watches in 1 instance\)/);
    assert.match(r.text, /\n\[exit code 137\]\n\[talkback: processes/);
    // Nothing of it is left, and the sandbox goes on.
    assert.equal(await runOk(c, "pgrep -f '[h]old.py' || echo none"), 'none\n');
    await c.close();
  }));

test('more inotify instances than its sandbox may: killed, the instances cap named', withLogs(tb, async () => {
  const c = await withHolder(tb.chat('instances'));
  const r = await run(c, 'python3 /tmp/hold.py 1 10 60');
  const m = r.text.match(LINE);
  assert.ok(m, r.text);
  assert.equal(m[1], 'instances');
  assert.equal(m[2], '4');
  assert.equal(m[3], 'inotify_max_instances');
  await c.close();
}));

test('a background process past the cap is killed too; the next result says so, once', withLogs(tb, async () => {
  const c = await withHolder(tb.chat('background'));
  const first = await run(c, 'nohup python3 /tmp/hold.py 2000 1 600 > /tmp/hold.log 2>&1 & echo started');
  assert.match(first.text, /started/);
  // Until the watchdog's next look (at most 2 s when no command runs).
  const second = await run(c,
    "for i in $(seq 100); do pgrep -f '[h]old.py' >/dev/null || break; sleep 0.2; done; pgrep -f '[h]old.py' || echo gone");
  assert.match(second.text, /gone/);
  const said = `${first.text}${second.text}`.split('[talkback: processes of this sandbox held more inotify').length - 1;
  assert.equal(said, 1, `${first.text}\n---\n${second.text}`);
  const third = await run(c, 'echo quiet');
  assert.equal(third.text, '$ echo quiet\nquiet\n');
  await c.close();
}));

test('a process under the caps is left alone, and the result has no line', withLogs(tb, async () => {
  const c = await withHolder(tb.chat('under'));
  const r = await run(c, 'python3 /tmp/hold.py 100 2 1.5');
  assert.equal(r.isError, false, r.text);
  assert.equal(r.text, '$ python3 /tmp/hold.py 100 2 1.5\nholding 200\nstill alive\n');
  await c.close();
}));

test('an image in a folder the image watcher could not watch still comes back', withLogs(plain, async () => {
  const c = await connect(plain, { conv: plain.chat('many') });
  try {
    // 8300 folders: the agent's image watcher holds at most 8192 watches.
    await runOk(c, 'mkdir -p /work/many && cd /work/many && mkdir $(seq -f d%04g 1 8300) && echo made');
    const late = await run(c,
      "python3 -c \"from PIL import Image; Image.new('RGB', (21, 13), (1, 2, 3)).save('/work/many/d8300/late.png')\"");
    assert.equal(late.isError, false, late.text);
    assert.match(late.text, /\[image \/work\/many\/d8300\/late\.png: 21x13 PNG, \d+ bytes, shown below\]/);
    assert.equal((late.result.content || []).filter((b) => b.type === 'image').length, 1);
    // One in a watched folder comes back as ever, once.
    const early = await run(c,
      "python3 -c \"from PIL import Image; Image.new('RGB', (5, 7)).save('/work/many/d0001/early.png')\"");
    assert.match(early.text, /\[image \/work\/many\/d0001\/early\.png: 5x7 PNG/);
    assert.doesNotMatch(early.text, /late\.png/);
    // A command that draws nothing gets none.
    const none = await run(c, 'echo nothing');
    assert.equal(none.text, '$ echo nothing\nnothing\n');
  } finally {
    await c.callTool({ name: 'reset', arguments: {} }).catch(() => {});
    await c.close();
  }
}));

test('below mem_floor no sandbox is made or started, and the call says why; a running one goes on',
  withLogs(plain, async () => {
    const convs = { running: plain.chat('mem-running'), stopped: plain.chat('mem-stopped'), fresh: plain.chat('mem-new') };
    const running = await connect(plain, { conv: convs.running });
    const stopped = await connect(plain, { conv: convs.stopped });
    const fresh = await connect(plain, { conv: convs.fresh });
    try {
      await runOk(running, 'echo up');
      await runOk(stopped, 'echo up');
      const [s] = await containersOf(convs.stopped);
      assert.ok(s, 'the chat\'s sandbox');
      // No host has 64 TiB available.
      await plain.restartSandbox({ TALKBACK_MEM_FLOOR: '64T' });
      assert.equal(await runOk(running, 'echo still'), 'still\n');
      const refused = /^\[talkback: the sandbox host has only \d+(\.\d)? GiB of memory available, below the 65536 GiB it keeps free \(setting `mem_floor`\), so this chat's sandbox was not started and nothing ran\. Try again in a few minutes, when idle sandboxes have stopped; if it keeps failing, tell the user the sandbox host is out of memory\.\]$/;
      const n = await run(fresh, 'echo hi');
      assert.equal(n.isError, true);
      assert.match(n.text, refused);
      assert.equal((await containersOf(convs.fresh)).length, 0);
      // A stopped sandbox is not started either; it is kept.
      await docker('stop', '-t', '1', s.id);
      const r = await run(stopped, 'echo hi');
      assert.match(r.text, refused);
      assert.equal((await docker('inspect', '-f', '{{.State.Status}}', s.id)).trim(), 'exited');
      // Above the floor again: both work.
      await plain.restartSandbox({ TALKBACK_MEM_FLOOR: '0' });
      assert.equal(await runOk(fresh, 'echo hi'), 'hi\n');
      const back = await run(stopped, 'echo back');
      assert.match(back.text, /^\[Resumed this chat's sandbox, .*\]\n\$ echo back\nback\n$/);
    } finally {
      await Promise.all([running.close(), stopped.close(), fresh.close()]);
    }
  }));
