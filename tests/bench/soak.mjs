// soak.mjs -- the audit's load run: many chats calling at once while the
// workers are killed with kill -9, and every answer checked against what
// really happened in the sandbox.
//
//   node tests/bench/soak.mjs [--chats 50] [--calls 40]     (as root, from anywhere)
//
// A private talkback (tests/integration/harness.mjs: its own gateway,
// sandbox manager and two judges) against the machine's dockerd.  Each
// chat makes its calls one after another, all chats at once: `run` of a
// command that appends its own tag to /work/runs.log and prints a product,
// and `run_code` of a Python program that appends its tag to /work/rc.log
// and prints a product it is checked against.  At a quarter, a half and
// three quarters of the calls the sandbox manager, a judge, and the
// sandbox manager again are killed with kill -9 and started again.
//
// Then each chat's logs are read and every answer judged:
//   wrong   a result that said it ran (exit 0, PASS) but whose output is
//           wrong, whose tag is missing, or whose tag is there twice; or
//           one that said nothing ran while its tag is there
//   clear   an error that says the call may or may not have run (its tag
//           there once or not at all), or that nothing ran (not there)
// Prints: calls, faults injected, answers that ran, wrong answers (must be
// 0), clear "may or may not have run" errors, clear "nothing ran" errors,
// other errors (each quoted), and the time taken.  Exit status 1 when any
// answer was wrong.

import fs from 'node:fs';
import path from 'node:path';

import { Talkback, connect, call, runOk, sleep } from '../integration/harness.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? Number(args[i + 1]) : dflt;
};
const CHATS = opt('chats', 50);
const CALLS = opt('calls', 40);
const TOTAL = CHATS * CALLS;

const MAYBE = /may or may not have run/;
const NOTHING = /nothing ran|Nothing ran/;

const tb = new Talkback({ name: 'soak', judges: 2, env: { TALKBACK_LOG_LEVEL: 'info' } });
const stats = { calls: 0, ran: 0, wrong: 0, maybe: 0, nothing: 0, other: 0, faults: [] };
const byTool = { run: { maybe: 0, nothing: 0, wrong: 0 }, run_code: { maybe: 0, nothing: 0, wrong: 0 } };
const others = [];
const wrongs = [];
let done = 0;

/** One call of chat k, number i: what it was and what it said. */
async function oneCall(c, k, i) {
  const tag = `t-${k}-${i}`;
  const a = 3 + k, b = 7 + i;
  const product = String(a * b);
  if (i % 2 === 0) {
    const r = await call(c, 'run', { command: `echo ${tag} >> /work/runs.log; echo $((${a}*${b}))`, timeout: 60 },
      { timeout: 300000 }).catch((e) => ({ isError: true, text: `client: ${e.message}` }));
    const said = !r.isError ? 'ran' : MAYBE.test(r.text) ? 'maybe' : NOTHING.test(r.text) ? 'nothing' : 'other';
    return { tool: 'run', tag, file: 'runs.log', said, ok: !r.isError && r.text.includes(`\n${product}\n`), text: r.text };
  }
  const code = `open("/work/rc.log", "a").write("${tag}\\n")\nprint(${a}*${b})\n`;
  const r = await call(c, 'run_code', { language: 'python', code, expected: `${product}\n`, timeout: 30 },
    { timeout: 300000 }).catch((e) => ({ isError: true, text: `client: ${e.message}` }));
  const pass = !r.isError && /^PASS/m.test(r.text);
  const said = pass ? 'ran' : MAYBE.test(r.text) ? 'maybe' : NOTHING.test(r.text) ? 'nothing' : 'other';
  return { tool: 'run_code', tag, file: 'rc.log', said, ok: pass && r.text.includes(`output:\n${product}\n`), text: r.text };
}

/** Judge every answer of a chat against its logs. */
function judge(results, logs) {
  for (const res of results) {
    const seen = logs[res.file].filter((l) => l === res.tag).length;
    stats.calls++;
    let wrong = seen > 1;
    if (res.said === 'ran') {
      stats.ran++;
      wrong = wrong || !res.ok || seen !== 1;
    } else if (res.said === 'maybe') {
      stats.maybe++;
      byTool[res.tool].maybe++;
    } else if (res.said === 'nothing') {
      stats.nothing++;
      byTool[res.tool].nothing++;
      wrong = wrong || seen !== 0;
    } else {
      stats.other++;
      others.push(res.text.slice(0, 300));
    }
    if (wrong) {
      stats.wrong++;
      byTool[res.tool].wrong++;
      wrongs.push(`${res.tag} said ${res.said}, its tag seen ${seen} time(s): ${res.text.slice(0, 300)}`);
    }
  }
}

/** One chat: its calls in order, then its logs read and judged. */
async function chat(k) {
  const conv = tb.chat(`soak${k}`);
  const c = await connect(tb, { conv, user: `user-soak-${k}` });
  const results = [];
  try {
    for (let i = 0; i < CALLS; i++) {
      results.push(await oneCall(c, k, i));
      done++;
    }
    // Read the logs once every worker is back (retry until a read works).
    let logs = null;
    for (let t = 0; t < 30 && !logs; t++) {
      try {
        const out = await runOk(c, 'cat /work/runs.log 2>/dev/null; echo ===; cat /work/rc.log 2>/dev/null');
        const [runs, rc] = out.split('===\n');
        logs = { 'runs.log': runs.split('\n'), 'rc.log': (rc || '').split('\n') };
      } catch {
        await sleep(2000);
      }
    }
    if (!logs) throw new Error(`chat ${k}: its logs could not be read`);
    judge(results, logs);
  } finally {
    await c.close();
  }
}

/** Kill -9 a worker once `done` passes at, and start it again. */
async function fault(at, what, kill, start) {
  while (done < at) await sleep(100);
  const t0 = Date.now();
  stats.faults.push(`${what} at call ${done}`);
  await kill();
  await sleep(1000);
  await start();
  process.stderr.write(`soak: ${what} killed, back after ${Date.now() - t0} ms\n`);
}

const started = Date.now();
let code = 1;
try {
  await tb.start();
  const faults = Promise.all([
    fault(TOTAL / 4, 'sandbox manager', () => tb.killSandbox(), async () => { tb.startSandbox(); await tb.waitReady(30000); }),
    fault(TOTAL / 2, 'judge', () => tb.killJudge(0), () => tb.startJudge(0)),
    fault((3 * TOTAL) / 4, 'sandbox manager', () => tb.killSandbox(), async () => { tb.startSandbox(); await tb.waitReady(30000); }),
  ]);
  await Promise.all(Array.from({ length: CHATS }, (_, k) => chat(k)));
  await faults;
  const secs = ((Date.now() - started) / 1000).toFixed(0);
  const log = fs.readFileSync(path.join(tb.dir, 'gateway.log'), 'utf8');
  const notAgain = (log.match(/is not sent again: its program had started/g) || []).length;
  const retried = (log.match(/retrying request \d+ on another judge/g) || []).length;
  console.log(`soak: ${CHATS} chats x ${CALLS} calls in ${secs} s`);
  console.log(`  calls                              ${stats.calls}`);
  console.log(`  faults injected (kill -9)          ${stats.faults.length}: ${stats.faults.join(', ')}`);
  console.log(`  answers that ran (exit 0, PASS)    ${stats.ran}`);
  const split = (k) => `(run ${byTool.run[k]}, run_code ${byTool.run_code[k]})`;
  console.log(`  wrong answers                      ${stats.wrong} ${split('wrong')}`);
  console.log(`  "may or may not have run" errors   ${stats.maybe} ${split('maybe')}`);
  console.log(`  "nothing ran" errors               ${stats.nothing} ${split('nothing')}`);
  console.log(`  other errors                       ${stats.other}`);
  console.log(`  run_code retried on another judge  ${retried}; not sent again (program started) ${notAgain}`);
  for (const w of wrongs.slice(0, 20)) console.log(`  WRONG: ${w}`);
  for (const o of others.slice(0, 10)) console.log(`  other: ${o}`);
  code = stats.wrong === 0 ? 0 : 1;
} catch (e) {
  tb.failed = true;
  console.error(`soak: ${e.stack}${tb.logTail()}`);
} finally {
  await tb.cleanup();
}
process.exit(code);
