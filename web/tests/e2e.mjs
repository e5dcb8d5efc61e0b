// The end-to-end test of `crowdblend serve` and the viewer in headless Chromium (docs/serve.md,
// "Tests"). Prints TAP. Usage: node e2e.mjs CROWDBLEND_BINARY SCREENSHOT.png
// SCREENSHOT "--no-browser": only HTTP and the bad clients (for a sanitizer build of the server).
import http from 'node:http';
import WebSocket from 'ws';
import { ok, done, until, sleep, serve, browserTest, jointFollowsServer } from './harness.mjs';

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

// ---- bad clients: the connection survives everything but an oversized message ---------------
function connect(p) {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${p}/`, 'crowdblend');
    const c = { ws, texts: [], frames: 0, closed: null, refused: false };
    ws.on('message', (d, bin) => { if (bin) c.frames++; else c.texts.push(JSON.parse(d.toString())); });
    ws.on('close', (code, reason) => { c.closed = { code, reason: reason.toString() }; });
    ws.on('open', () => resolve(c));
    ws.on('error', () => { c.refused = true; resolve(c); });
  });
}
const errorsOf = (c, code) => c.texts.filter((m) => m.type === 'error' && m.code === code).length;
{
  const c = await connect(port);
  c.ws.send(Buffer.from([0xde, 0xad, 0xbe, 0xef]));            // binary
  c.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false }); // not UTF-8
  c.ws.send('{"type":"pa', { fin: false });                    // fragmented, then whole
  c.ws.send('use","req":77}', { fin: true });
  c.ws.send('{"type":"resume","req":78}');
  for (let k = 0; k < 300; k++) c.ws.send('{"type":"set_param","name":"no_such","value":1}');
  await until(() => errorsOf(c, 'binary') >= 1 && errorsOf(c, 'malformed') >= 1 &&
    c.texts.some((m) => m.type === 'ok' && m.req === 77), 30000, 'replies to bad messages').catch(() => null);
  ok(errorsOf(c, 'binary') === 1, 'a binary message gets an error reply');
  ok(errorsOf(c, 'malformed') === 1, 'text that is not UTF-8 gets an error reply');
  ok(c.texts.some((m) => m.type === 'ok' && m.req === 77 && m.for === 'pause'), 'a fragmented message is put together');
  const framesBefore = c.frames;
  await until(() => c.frames > framesBefore + 5, 30000, 'frames after a flood').catch(() => null);
  const flood = errorsOf(c, 'not_found') + errorsOf(c, 'refused');
  ok(c.closed === null && c.frames > framesBefore + 5, 'after a flood of 300 bad requests the stream goes on', `${flood} errors back, the rest dropped (bounded queues)`);
  c.ws.send('x'.repeat(5000));
  await until(() => c.closed, 30000, 'the close').catch(() => null);
  ok(c.closed && c.closed.code === 1009 && c.closed.reason.includes('too_large'), 'an oversized message closes with 1009 and says why', JSON.stringify(c.closed));
}
{
  const small = await serve(binary, ['--characters', '10', '--max-clients', '2', '--seconds', '120', '--threads', '1']);
  const a = await connect(small.port), b = await connect(small.port), d = await connect(small.port);
  ok(!a.refused && !b.refused && d.refused, 'clients beyond --max-clients are refused');
  a.ws.close();
  await sleep(500);
  const e = await connect(small.port);
  ok(!e.refused, 'a slot that frees up is given to the next client');
  await until(() => e.frames > 0 && b.frames > 0, 30000, 'frames').catch(() => null);
  ok(e.frames > 0 && b.frames > 0, 'the admitted clients receive frames');
  for (const c of [b, e]) c.ws.close();
  small.proc.kill('SIGTERM');
  await small.summary();
}

if (screenshot === '--no-browser') {
  server.proc.kill('SIGTERM');
  const end = await server.summary();
  ok(end.code === 0 && end.summary !== null, 'the server exits cleanly on SIGTERM', JSON.stringify(end.summary));
  done();
  process.exit();
}

// ---- the page ------------------------------------------------------------------------------
await browserTest(server, '/', screenshot, 'browser test', async (page, v) => {
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
  await jointFollowsServer(v, { bound: 0.5 * Math.sqrt(3) * scale + 1e-3, gap: 90, speed: 1.5, what: 'the head' });

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
  // Every panel update from now on: the progress bars shown and the transitions they show.
  await v(() => {
    window.cbTransitions = [];
    new MutationObserver(() => {
      const bars = [...document.querySelectorAll('#sel-machines progress')].map((p) => p.value);
      const ts = (cbViewer.state.details?.machines ?? []).filter((m) => m.transition).map((m) => m.transition);
      if (bars.length || ts.length) window.cbTransitions.push({ bars, ts });
    }).observe(document.getElementById('sel-machines'), { childList: true, subtree: true });
  });
  const setSpeed = (x) => page.$eval('#speed', (el, x) => { el.value = String(x); el.dispatchEvent(new Event('input')); }, x);
  await setSpeed(0);
  const idle = await until(async () => ((await machine0()) === 'idle' ? 'idle' : null), 30000, 'state idle').catch(() => null);
  ok(idle === 'idle', 'speed 0 from the slider puts it in state "idle"', `${await machine0()}`);
  const shown = await v(() => document.getElementById('sel-machines').textContent);
  ok(shown.includes('idle'), 'the panel shows the state', shown);
  // A transition seen in the panel: moving -> idle runs for 18 ticks, but a loaded browser may
  // miss them all, so walk and stop again (a few times at most) until one was seen.
  const seen = () => v(() => window.cbTransitions.length);
  for (let k = 0; k < 4 && !(await seen()); k++) {
    await setSpeed(1.5);
    await until(async () => (await machine0()) === 'moving', 30000, 'state moving again').catch(() => null);
    await setSpeed(0);
    await until(async () => (await machine0()) === 'idle', 30000, 'state idle again').catch(() => null);
  }
  const rec = await v(() => window.cbTransitions);
  const bars = rec.flatMap((r) => r.bars), ts = rec.flatMap((r) => r.ts);
  ok(bars.length > 0 && bars.length === ts.length && bars.every((p, i) => p >= 0 && p <= 1 && Math.abs(p - ts[i].progress) < 1e-6),
    'the panel shows transition progress in [0, 1], as the server sent it', `${bars.length} bars: ${bars.slice(0, 8).map((p) => p.toFixed(3)).join(' ')}`);
  ok(ts.length > 0 && ts.every((t) => t.duration_s > 0 && t.elapsed_s >= 0 && t.elapsed_s < t.duration_s &&
    Math.abs(t.progress - t.elapsed_s / t.duration_s) < 1e-5),
    'each transition is elapsed / duration of a positive duration', JSON.stringify(ts[0]));
  const weights = await v(() => document.getElementById('sel-weights').textContent);
  ok(weights.length > 0, 'the panel shows blend weights', weights.slice(0, 80));

  await v(() => cbViewer.closeUp(7));
});
