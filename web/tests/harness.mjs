// Helpers shared by the browser, load and fixture tests: start `crowdblend serve` on an
// ephemeral loopback port, TAP output, polling.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

let count = 0, failed = 0;

export function ok(cond, name, detail = '') {
  count++;
  if (!cond) failed++;
  console.log(`${cond ? 'ok' : 'not ok'} ${count} - ${name}${detail ? ` # ${detail}` : ''}`);
  return cond;
}

export function done() {
  console.log(`1..${count}`);
  process.exitCode = failed ? 1 : 0;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function until(fn, timeoutMs, what) {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

// Starts the server; resolves to { port, proc, summary() } once it listens.
export function serve(binary, args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(binary, ['serve', '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    let summaryResolve;
    const summary = new Promise((r) => { summaryResolve = r; });
    proc.stdout.on('data', (d) => {
      out += d.toString();
      const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m && !proc.port) {
        proc.port = Number(m[1]);
        resolve({ port: proc.port, proc, summary: () => summary, pid: proc.pid });
      }
    });
    proc.on('exit', (code, signal) => {
      const line = out.split('\n').find((l) => l.startsWith('{"summary"'));
      summaryResolve({ code, signal, summary: line ? JSON.parse(line) : null, out });
      if (!proc.port) reject(new Error(`crowdblend serve exited (${code}) before listening: ${out}`));
    });
  });
}

export function rssKb(pid) {
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

// Opens the viewer of `server` at `path` in headless Chromium and runs body(page, v), v being
// page.evaluate; then saves a screenshot, checks that the page raised no script error and that
// the server exits cleanly on SIGTERM, and prints the TAP plan.
export async function browserTest(server, path, screenshot, what, body) {
  const { launch } = await import('./browser.mjs');
  const { context, close } = await launch();
  const page = context.pages()[0] ?? await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const v = (fn, arg) => page.evaluate(fn, arg);
  try {
    await page.goto(`http://127.0.0.1:${server.port}${path}`);
    await body(page, v);
    await sleep(1500);
    await page.screenshot({ path: screenshot });
    ok(true, `screenshot saved: ${screenshot}`);
    ok(pageErrors.length === 0, 'no script errors on the page', pageErrors.join('; '));
  } catch (e) {
    ok(false, `${what} ran to the end`, e.message);
    await page.screenshot({ path: screenshot }).catch(() => {});
  } finally {
    await close();
    server.proc.kill('SIGTERM');
    const end = await server.summary();
    ok(end.code === 0 && end.summary !== null, 'the server exits cleanly on SIGTERM', JSON.stringify(end.summary));
    done();
  }
}

// The selected character's joint where the page drew it and where the server put it (its
// details), at the newest frame that has both and at one at least `gap` frames later: each
// must be within `bound` metres, and the joint must have moved about as far on both, at least
// half of `speed` (m/s) times the time between.
export async function jointFollowsServer(v, { bound, gap, speed, what }) {
  const sample = () => v(() => {
    const { drawnHistory, detailsHistory } = cbViewer.state;
    const f = [...drawnHistory.keys()].filter((k) => detailsHistory.has(k)).at(-1);
    return f === undefined ? null : { frame: f, drawn: drawnHistory.get(f), server: detailsHistory.get(f) };
  });
  const a = await until(sample, 30000, 'a frame both drawn and described by the server');
  const b = await until(async () => { const x = await sample(); return x && x.frame > a.frame + gap ? x : null; }, 60000, 'a later frame');
  const dist = (p, q) => Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
  for (const s of [a, b]) {
    ok(dist(s.drawn, s.server) <= bound, `${what} drawn where the server put it, frame ${s.frame}`,
      `error ${dist(s.drawn, s.server).toExponential(2)} m, bound ${bound.toExponential(2)}`);
  }
  const moved = dist(a.server, b.server), movedDrawn = dist(a.drawn, b.drawn), seconds = (b.frame - a.frame) / 60;
  ok(moved > 0.5 * speed * seconds && Math.abs(moved - movedDrawn) <= 2 * bound, `${what} moved consistently on the page and on the server`,
    `${moved.toFixed(3)} m (server) vs ${movedDrawn.toFixed(3)} m (page) in ${seconds.toFixed(2)} s`);
}
