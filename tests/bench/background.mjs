// background.mjs -- what the background watch (issue 24, docs/jobs.md) costs:
// run("true") (nothing left behind: no window), a call that starts one
// python3 http.server in the background (the window ends when it listens),
// and one that leaves `sleep 60` (neither ends nor listens: the whole
// window), each with background_watch_ms 0 (no watch) and 1500 (the
// default), on private talkback instances, alternated twice.
//
//   node tests/bench/background.mjs [--n 300]
//
// Prints one JSON record per instance: p50/p90 of run("true") in ms, p50
// of the server call and of the sleep call.
import { Talkback, connect, run } from '../integration/harness.mjs';

const n = Number(process.argv[process.argv.indexOf('--n') + 1]) || 300;
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor((s.length - 1) * p)]; };
async function measure(watch) {
  const tb = new Talkback({ name: `bench${watch}`, sandboxEnv: { TALKBACK_BACKGROUND_WATCH_MS: String(watch) } });
  await tb.start();
  try {
    const c = await connect(tb, { conv: tb.chat('b'), user: 'u' });
    for (let i = 0; i < 20; i++) await run(c, 'true');
    const t = [];
    for (let i = 0; i < n; i++) { const t0 = process.hrtime.bigint(); await run(c, 'true'); t.push(Number(process.hrtime.bigint() - t0) / 1e6); }
    const s = [];
    for (let i = 0; i < 8; i++) {
      const t0 = process.hrtime.bigint();
      await run(c, `python3 -m http.server ${9000 + i} > /tmp/s${i}.log 2>&1 &`);
      s.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const sl = [];
    for (let i = 0; i < 5; i++) {
      const t0 = process.hrtime.bigint();
      await run(c, 'sleep 60 > /dev/null 2>&1 &');
      sl.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    await c.close();
    return { watch, true_p50: pct(t, 0.5).toFixed(2), true_p90: pct(t, 0.9).toFixed(2), server_p50: pct(s, 0.5).toFixed(0), sleep_p50: pct(sl, 0.5).toFixed(0) };
  } finally { await tb.cleanup(); }
}
const out = [];
for (const w of [0, 1500, 0, 1500]) out.push(await measure(w));
console.log(JSON.stringify(out, null, 1));
