// orphans.test.mjs -- a lost claim record, against the real dockerd.
//
// A chat's first call claims a spare of the warm pool: the spare is renamed
// to the chat's name and its claim record (state_dir/<id>.claim) says whose
// it is.  With the record gone the sandbox is nobody's: no chat reaches it,
// and before, neither talkbackctl nor the reaper saw it (it ran on, holding
// its memory and disk).  Now it is an orphan: `talkbackctl sandboxes` lists
// it (its container name, state orphan-running), the reaper stops it at
// once and removes it after orphan_grace, and the chat's next call then
// gets a sandbox again.  A claimed spare with its record is untouched.
//
// The reaper runs as `talkback-reaper --once --reaper_prefix <this
// instance's prefix>` with this instance's state_dir, so it touches nothing
// of other tests; its orphans are those of this state_dir's pool.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';

import {
  Talkback, BUILD, withLogs, connect, run, runOk, containerIdFromInside, docker, waitFor, sparesOf,
} from './harness.mjs';

const execFileP = promisify(execFile);
const REAPER = path.join(BUILD, 'talkback-reaper');
const CTL = path.join(BUILD, 'talkbackctl');
const tb = new Talkback({ name: 'orphans', env: { TALKBACK_WARM_POOL: '2' } });

before(async () => { await tb.start(); });
after(async () => { await tb.cleanup(); });

async function reap(...args) {
  const { stdout, stderr } = await execFileP(REAPER, ['--once', '--reaper_prefix', tb.prefix, ...args],
    { env: tb.env({}), timeout: 120000 });
  return `${stdout}${stderr}`; // its decisions are log lines
}

async function sandboxes() {
  const { stdout } = await execFileP(CTL, ['--json', 'sandboxes'], { env: tb.env({}), timeout: 60000 });
  return JSON.parse(stdout);
}

const stateOf = async (id) => (await docker('inspect', '-f', '{{.State.Status}}', id).catch(() => 'gone\n')).trim();
const nameOf = async (id) => (await docker('inspect', '-f', '{{.Name}}', id)).trim().replace(/^\//, '');

test('a claimed spare whose claim record is gone is listed as an orphan, stopped, then removed after the grace',
  withLogs(tb, async () => {
    await waitFor(async () => (await sparesOf(tb)).filter((s) => s.state === 'running').length === 2,
      { what: 'two spares ready', timeoutMs: 60000, intervalMs: 250 });
    const lostConv = tb.chat('lost');
    const keptConv = tb.chat('kept');
    const lost = await connect(tb, { conv: lostConv, user: 'u-orphan' });
    const kept = await connect(tb, { conv: keptConv, user: 'u-orphan' });
    await runOk(lost, 'echo mine > /work/f');
    await runOk(kept, 'echo mine > /work/f');
    const id = await containerIdFromInside(lost);
    const keptId = await containerIdFromInside(kept);
    const record = path.join(tb.stateDir, `${id}.claim`);
    assert.ok(fs.existsSync(record), 'the chat claimed a spare: it has a claim record');
    assert.ok(fs.existsSync(path.join(tb.stateDir, `${keptId}.claim`)));
    const name = await nameOf(id);

    fs.rmSync(record); // lost
    // Listed, by its container name, as an orphan; the other chat as ever.
    let list = await sandboxes();
    const orphan = list.find((s) => s.conversation === name);
    assert.ok(orphan, JSON.stringify(list));
    assert.equal(orphan.state, 'orphan-running');
    assert.equal(orphan.user, '');
    assert.ok(list.find((s) => s.conversation === keptConv && s.state === 'running'), JSON.stringify(list));
    // The reaper stops it at once, and leaves the other alone.
    let out = await reap();
    assert.match(out, new RegExp(`stop ${name} \\(orphan: a claimed spare whose claim record is gone; nobody's sandbox\\)`));
    assert.equal(await stateOf(id), 'exited');
    assert.equal(await stateOf(keptId), 'running', out);
    // Its chat cannot have it back (nothing says it is the chat's).
    const refused = await run(lost, 'cat /work/f');
    assert.match(refused.text, /the container under this chat's name belongs to something else\. Nothing ran\./);
    assert.equal(await stateOf(id), 'exited');
    list = await sandboxes();
    assert.equal(list.find((s) => s.conversation === name)?.state, 'orphan-exited', JSON.stringify(list));
    // Within orphan_grace (1 hour) it is kept: an operator may put the record back.
    out = await reap();
    assert.doesNotMatch(out, new RegExp(`remove ${name}`));
    assert.equal(await stateOf(id), 'exited');
    // Past it (the reaper's clock two hours on): removed, records and all.
    out = await reap('--reaper_clock_offset', '7200', '--idle_stop', '1d', '--idle_pause', '0'); // (the other chat is not idle)
    assert.match(out, new RegExp(`remove ${name} \\(orphan: a claimed spare whose claim record is gone, for (1|2) hours?\\)`));
    assert.equal(await stateOf(id), 'gone');
    assert.deepEqual(fs.readdirSync(tb.stateDir).filter((f) => f.startsWith(id)), []);
    assert.equal(await stateOf(keptId), 'running');
    assert.equal(await runOk(kept, 'cat /work/f'), 'mine\n');
    // The chat's name is free again: its next call gets a sandbox.
    assert.equal(await runOk(lost, 'ls /work'), '');
    await Promise.all([lost.close(), kept.close()]);
  }));

test('an orphan whose record comes back within the grace is the chat\'s again, and starts a new grace if lost later',
  withLogs(tb, async () => {
    await waitFor(async () => (await sparesOf(tb)).filter((s) => s.state === 'running').length >= 1,
      { what: 'a spare ready', timeoutMs: 60000, intervalMs: 250 });
    const conv = tb.chat('back');
    const c = await connect(tb, { conv, user: 'u-orphan' });
    await runOk(c, 'echo mine > /work/f');
    const id = await containerIdFromInside(c);
    const record = path.join(tb.stateDir, `${id}.claim`);
    const saved = fs.readFileSync(record);
    fs.rmSync(record);
    await reap();
    assert.equal(await stateOf(id), 'exited');
    assert.ok(fs.existsSync(path.join(tb.stateDir, `${id}.orphan`)));
    fs.writeFileSync(record, saved); // the operator puts it back
    await reap();
    assert.ok(!fs.existsSync(path.join(tb.stateDir, `${id}.orphan`)), 'the mark goes with the orphan');
    const r = await run(c, 'cat /work/f');
    assert.match(r.text, /\$ cat \/work\/f\nmine\n$/);
    await c.close();
  }));
