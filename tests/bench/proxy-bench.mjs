#!/usr/bin/env node
// proxy-bench.mjs -- talkback-proxy's time-to-first-token overhead.
//
//   node tests/bench/proxy-bench.mjs [--requests N] [--bin build/talkback-proxy]
//
// Starts a scripted OpenAI-compatible model server (node:http, answers a
// streamed chat completion at once) and the real talkback-proxy in front of
// it, then times N streamed requests straight to the model server and N
// through the proxy, interleaved, over kept-alive connections.  TTFT is
// the time from sending the request to receiving the first content delta.
// Two kinds of request: a turn without tool results (the proxy only
// forwards) and a turn whose run_code passed (the proxy parses the request
// and filters the stream, ready to append the program).
//
// Prints figures (p50 / p90 / p99 and the p50 overhead); not a pass/fail
// test.  The target is an overhead of at most 2 ms at p50.

import http from 'node:http';
import net from 'node:net';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : dflt;
};
const N = Number(opt('--requests', 200));
const BIN = path.resolve(opt('--bin', path.join(process.env.TALKBACK_BUILD_DIR || path.join(ROOT, 'build'), 'talkback-proxy')));

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

// The model server: the first delta at once, then the rest of a short reply.
const upstream = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: 'The' }));
    setImmediate(() => {
      res.write(chunk({ content: ' program works.' }));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
  });
});

async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One streamed request; resolves with ms to the first content delta. */
function ttft(port, body) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    let first = null;
    const req = http.request(
      { host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Authorization: 'Bearer bench' } },
      (res) => {
        res.on('data', (d) => {
          if (first === null && d.includes('"content"')) first = Number(process.hrtime.bigint() - t0) / 1e6;
        });
        res.on('end', () => (first === null ? reject(new Error('no content')) : resolve(first)));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (x) => x.toFixed(3).padStart(8);

function request(withProgram) {
  const messages = [{ role: 'system', content: 'You have a sandbox.' }, { role: 'user', content: 'Add two numbers in Lua.' }];
  if (withProgram) {
    const code = 'local a, b = io.read("n", "n")\nprint(a + b)\n';
    messages.push(
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function',
        function: { name: 'run_code_mcp_sandbox', arguments: JSON.stringify({ language: 'lua', code, input: '3 4', expected: '7' }) } }] },
      { role: 'tool', tool_call_id: 'c1',
        content: 'Saved /work/main.lua (46 bytes).\n$ lua5.4 main.lua < input\ninput:\n3 4\noutput:\n7\nPASS: the output matches the expected output.\n' },
    );
  }
  return JSON.stringify({ model: 'bench', stream: true, messages });
}

async function main() {
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  const upPort = upstream.address().port;
  const pxPort = await freePort();
  const proxy = spawn(BIN, [], {
    env: { ...process.env, TALKBACK_CONFIG: '/dev/null', TALKBACK_PROXY_LISTEN: `127.0.0.1:${pxPort}`,
      TALKBACK_PROXY_UPSTREAM: `http://127.0.0.1:${upPort}/v1`, TALKBACK_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; ; i++) {
    const ok = await new Promise((r) => {
      const s = net.connect(pxPort, '127.0.0.1', () => { s.destroy(); r(true); });
      s.on('error', () => r(false));
    });
    if (ok) break;
    if (i > 250) throw new Error(`${BIN} did not start`);
    await new Promise((r) => setTimeout(r, 20));
  }

  console.log(`talkback-proxy TTFT overhead: ${N} streamed requests each, interleaved, keep-alive, localhost`);
  console.log(`${'request'.padEnd(40)}${'p50 ms'.padStart(8)}${'p90 ms'.padStart(8)}${'p99 ms'.padStart(8)}`);
  for (const [label, withProgram] of [['turn without a program', false], ['turn whose run_code passed', true]]) {
    const body = request(withProgram);
    for (let i = 0; i < 20; i++) {   // warm up both paths
      await ttft(upPort, body);
      await ttft(pxPort, body);
    }
    const direct = [], proxied = [];
    for (let i = 0; i < N; i++) {
      direct.push(await ttft(upPort, body));
      proxied.push(await ttft(pxPort, body));
    }
    console.log(`${`${label}, direct`.padEnd(40)}${fmt(pct(direct, 50))}${fmt(pct(direct, 90))}${fmt(pct(direct, 99))}`);
    console.log(`${`${label}, via proxy`.padEnd(40)}${fmt(pct(proxied, 50))}${fmt(pct(proxied, 90))}${fmt(pct(proxied, 99))}`);
    console.log(`${`  overhead at p50`.padEnd(40)}${fmt(pct(proxied, 50) - pct(direct, 50))}`);
  }
  proxy.kill('SIGTERM');
  agent.destroy();
  upstream.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
