// multihost.mjs -- the set-up of `talkback-bench --multihost`: a second
// Docker host (tests/tools/dockerd2, started here unless it runs, and then
// stopped here again), a gateway on a keyed tcp:// hub, and a sandbox
// manager and reaper on each host (tests/integration/multihost-harness.mjs);
// then build/talkback-bench --multihost with a --restart-cmd that has this
// script restart the gateway (and wait for both managers to join it again).
//
//   node tests/bench/multihost.mjs [--n N]      (as root, from anywhere)
//
// The restart command and this script meet through two files in the
// cluster's folder: the bench's command makes restart.req and waits for
// restart.done, which this script writes once the gateway is back.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { BUILD, ROOT, sleep } from '../integration/harness.mjs';
import { Cluster, startDockerd2, stopDockerd2 } from '../integration/multihost-harness.mjs';

const args = process.argv.slice(2);
const n = args[0] === '--n' && args[1] ? args[1] : '100';

const d2 = await startDockerd2();
const cl = new Cluster({
  name: 'bench-mh',
  judges: 0,
  hosts: [{ name: 'alpha', maxRunning: 100 }, { name: 'beta', dockerHost: d2.host, maxRunning: 100 }],
});
let code = 1;
try {
  await cl.start();
  const req = path.join(cl.dir, 'restart.req');
  const done = path.join(cl.dir, 'restart.done');
  const restartCmd = `touch ${req} && while [ ! -e ${done} ]; do sleep 0.05; done && rm -f ${done}`;
  const bench = spawn(path.join(BUILD, 'talkback-bench'),
    ['--url', cl.url, '--multihost', d2.host, '--restart-cmd', restartCmd, '--n', n],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((resolve) => bench.on('exit', (c) => resolve(c)));
  let finished = false;
  exited.then(() => { finished = true; });
  while (!finished) {
    if (fs.existsSync(req)) {
      fs.rmSync(req);
      await cl.restartGateway();
      fs.writeFileSync(done, '');
    }
    await sleep(20);
  }
  code = await exited;
} catch (e) {
  cl.failed = true;
  console.error(`${e.message}${cl.logTail()}`);
} finally {
  await cl.cleanup();
  if (d2.startedHere) await stopDockerd2();
}
process.exit(code ?? 1);
