// The end-to-end test of `crowdblend serve` and the viewer in headless Chromium (docs/serve.md,
// "Tests"). Prints TAP. Usage: node e2e.mjs CROWDBLEND_BINARY SCREENSHOT.png
import http from 'node:http';
import { launch } from './browser.mjs';
import { ok, done, until, sleep, serve } from './harness.mjs';

const [binary, screenshot] = process.argv.slice(2);
const N = 200;

function get(port, path) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
    });
    req.on('error', (e) => resolve({ status: 0, body: String(e) }));
    req.end();
  });
}

const server = await serve(binary, ['--characters', String(N), '--seconds', '600', '--threads', '2']);
const { port } = server;

// ---- HTTP: the viewer's files, and nothing outside the web root ----------------------------
const index = await get(port, '/');
ok(index.status === 200 && /text\/html/.test(index.type) && index.body.includes('importmap'), 'GET / serves the viewer');
const three = await get(port, '/vendor/three/build/three.module.js');
ok(three.status === 200 && /javascript/.test(three.type), 'three.js is served from node_modules');
const traversal = ['/../../../../etc/passwd', '/%2e%2e/%2e%2e/%2e%2e/etc/passwd', '/..%2f..%2f..%2fetc/passwd',
  '/vendor/three/../../../../../../etc/passwd', '/vendor/three/%2e%2e/%2e%2e/package.json', '/../package.json',
  '/%2e%2e/package.json', '/....//....//etc/passwd', '/js/../../package.json', '/vendor/uplot/../../../../package-lock.json',
  '//etc/passwd', '/models/../../../etc/passwd'];
for (const p of traversal) {
  const r = await get(port, p);
  const leaked = r.body.includes('root:') || r.body.includes('"devDependencies"') || r.body.includes('"lockfileVersion"');
  ok(r.status !== 200 && !leaked, `no file outside the web root: ${p}`, `status ${r.status}`);
}

// ---- the page ------------------------------------------------------------------------------
const { context, close } = await launch();
const page = context.pages()[0] ?? await context.newPage();
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
await page.goto(`http://127.0.0.1:${port}/`);
const v = (fn, arg) => page.evaluate(fn, arg);
try {
  await until(() => v(() => cbViewer.state.framesReceived >= 30 && cbViewer.state.charactersDrawn > 0), 90000, '30 frames');
  const s = await v(() => ({ f: cbViewer.state.framesReceived, d: cbViewer.state.charactersDrawn, mode: cbViewer.state.mode }));
  ok(s.f >= 30, 'the page received at least 30 frames', `${s.f}`);
  ok(s.d === N, `the page draws all ${N} characters`, `${s.d} as ${s.mode}`);

  // A character walking straight ahead at 1.5 m/s: its head moves about 2 m in 1.5 s.
  const id = await v(() => cbViewer.state.frame.ids[7]);
  await v((id) => { cbViewer.select(id); cbViewer.send({ type: 'steer', speed: 1.5, direction: 0, characters: [id] }); }, id);
  await until(() => v(() => cbViewer.state.details !== null && cbViewer.state.drawnHistory.size > 5), 60000, 'details of the selected character');
  await sleep(1500);
  const scale = await v(() => cbViewer.state.hello.position_scale);
  // pos16: each coordinate rounded to the position scale (error <= scale / 2 a component), then
  // rotated by the root's yaw, which keeps lengths; plus float rounding at world coordinates
  // of up to ~200 m (~2e-5 m) and the capsule matrix read back.
  const bound = 0.5 * Math.sqrt(3) * scale + 1e-3;
  const sample = () => v(() => {
    const { drawnHistory, detailsHistory } = cbViewer.state;
    const common = [...drawnHistory.keys()].filter((f) => detailsHistory.has(f));
    const f = common.at(-1);
    return f === undefined ? null : { frame: f, drawn: drawnHistory.get(f), server: detailsHistory.get(f) };
  });
  const a = await until(sample, 30000, 'a frame both drawn and described by the server');
  await sleep(1500);
  const b = await until(async () => { const x = await sample(); return x && x.frame > a.frame + 30 ? x : null; }, 30000, 'a later frame');
  const dist = (p, q) => Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
  ok(dist(a.drawn, a.server) <= bound, `joint drawn where the server put it, frame ${a.frame}`, `error ${dist(a.drawn, a.server).toExponential(2)} m, bound ${bound.toExponential(2)}`);
  ok(dist(b.drawn, b.server) <= bound, `joint drawn where the server put it, frame ${b.frame}`, `error ${dist(b.drawn, b.server).toExponential(2)} m`);
  const moved = dist(a.server, b.server), movedDrawn = dist(a.drawn, b.drawn);
  const seconds = (b.frame - a.frame) / 60;
  ok(moved > 0.5 * 1.5 * seconds && Math.abs(moved - movedDrawn) <= 2 * bound, 'the joint moved consistently on the page and on the server',
    `${moved.toFixed(3)} m (server) vs ${movedDrawn.toFixed(3)} m (page) in ${seconds.toFixed(2)} s`);

  // A bad control message: an error is shown, and the stream goes on.
  const before = await v(() => cbViewer.state.framesReceived);
  await page.fill('#raw', '{"type":"bogus"}');
  await page.click('#raw-send');
  await page.fill('#raw', '{"type": "set_param", "name": "vx", "value": "fast"}');
  await page.click('#raw-send');
  await page.fill('#raw', '{not json');
  await page.click('#raw-send');
  await until(() => v(() => ['unknown_type', 'bad_field', 'malformed'].every((c) => document.getElementById('errors').textContent.includes(c))), 30000, 'the errors shown').catch(() => null);
  const errs = await v(() => document.getElementById('errors').textContent);
  ok(errs.includes('unknown_type') && errs.includes('bad_field') && errs.includes('malformed'), 'bad control messages show errors', errs.slice(0, 160));
  await until(() => v((n) => cbViewer.state.framesReceived >= n + 15, before), 60000, 'frames after the errors');
  ok(true, 'the stream continues after bad messages');

  // Speed changes state: moving at 1.5 m/s, then stopped -> the locomotion machine goes idle.
  // The machine whose states include idle (nested machines are numbered children first).
  const m = await v(() => cbViewer.state.hello.graph.machines.findIndex((x) => x.states.includes('idle')));
  const machine0 = () => v((m) => cbViewer.state.details && cbViewer.state.details.machines[m].state, m);
  await until(async () => (await machine0()) === 'moving', 30000, 'state moving');
  ok(true, 'at 1.5 m/s the character is in state "moving"');
  await page.$eval('#speed', (el) => { el.value = '0'; el.dispatchEvent(new Event('input')); });
  const idle = await until(async () => ((await machine0()) === 'idle' ? 'idle' : null), 30000, 'state idle').catch(() => null);
  ok(idle === 'idle', 'speed 0 from the slider puts it in state "idle"', `${await machine0()}`);
  const shown = await v(() => document.getElementById('sel-machines').textContent);
  ok(shown.includes('idle'), 'the panel shows the state', shown);
  const weights = await v(() => document.getElementById('sel-weights').textContent);
  ok(weights.length > 0, 'the panel shows blend weights', weights.slice(0, 80));

  await v(() => cbViewer.closeUp(7));
  await sleep(1500);
  await page.screenshot({ path: screenshot });
  ok(true, `screenshot saved: ${screenshot}`);
  ok(pageErrors.length === 0, 'no script errors on the page', pageErrors.join('; '));
} catch (e) {
  ok(false, 'browser test ran to the end', e.message);
  await page.screenshot({ path: screenshot }).catch(() => {});
} finally {
  await close();
  server.proc.kill('SIGTERM');
  const end = await server.summary();
  ok(end.code === 0 && end.summary !== null, 'the server exits cleanly on SIGTERM', JSON.stringify(end.summary));
  done();
}
