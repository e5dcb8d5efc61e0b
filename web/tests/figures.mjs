// The figures of docs/performance.md ("crowdblend serve"): per crowd size, the server's cost of
// encoding each encoding and of sending (ns per character), bytes per frame, the simulation's
// rate, the latency from the end of a simulation step to a client's receipt on loopback (a
// Node client and the viewer in Chromium), and the viewer's frame rate in headless Chromium
// (continuous redraw, ?bench=1, and as streamed). Not a test: prints one JSON object per size.
// Usage: node figures.mjs CROWDBLEND_BINARY [sizes...] [-- serve options]   (default 1000 10000)
// e.g. the Fox: node figures.mjs BIN 256 1000 -- --pack tests/data/packs/fox.cbpack --model \
//   tests/data/assets/Fox/Fox.glb
import WebSocket from 'ws';
import { performance } from 'node:perf_hooks';
import { launch } from './browser.mjs';
import { sleep, serve, until } from './harness.mjs';

const [binary, ...rest] = process.argv.slice(2);
const dashes = rest.indexOf('--');
const sizesArg = dashes < 0 ? rest : rest.slice(0, dashes);
const serveArgs = dashes < 0 ? [] : rest.slice(dashes + 1);
const sizes = sizesArg.length ? sizesArg.map(Number) : [1000, 10000];
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s.length ? s[s.length >> 1] : NaN; };
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN; };

async function nodeClients(port, seconds) {
  const out = {};
  const clients = ['f32', 'q16', 'pos16'].map((enc) => {
    const c = { enc, latency: [], frames: 0, stats: [] };
    c.ws = new WebSocket(`ws://127.0.0.1:${port}/`, 'crowdblend');
    c.ws.on('open', () => c.ws.send(JSON.stringify({ type: 'encoding', encoding: enc })));
    c.ws.on('message', (d, bin) => {
      if (bin) {
        const now = (performance.timeOrigin + performance.now()) * 1000;
        if (d.readUInt16LE(6) === ['f32', 'q16', 'pos16'].indexOf(enc)) {
          c.frames++;
          c.latency.push((now - Number(d.readBigUInt64LE(24))) / 1000);
        }
      } else {
        const m = JSON.parse(d.toString());
        if (m.type === 'stats') c.stats.push(m);
      }
    });
    return c;
  });
  await sleep(seconds * 1000);
  for (const c of clients) {
    c.ws.close();
    const st = c.stats.slice(2);
    out[c.enc] = {
      frames_per_s: +(c.frames / seconds).toFixed(1),
      latency_ms_median: +median(c.latency.slice(30)).toFixed(2),
      latency_ms_p90: +pct(c.latency.slice(30), 0.9).toFixed(2),
      encode_ns_per_character: +median(st.map((m) => m.encodings[c.enc].encode_ns_per_character)).toFixed(0),
      bytes_per_frame: st.at(-1)?.encodings[c.enc].bytes_per_frame,
    };
  }
  const st = clients[0].stats.slice(2);
  out.server = {
    tick_hz: +median(st.map((m) => m.tick_hz)).toFixed(2),
    step_ms: +median(st.map((m) => m.step_ms)).toFixed(2),
    send_ns_per_character: +median(st.map((m) => m.send_ns_per_character)).toFixed(0),
    threads: st.at(-1)?.threads,
  };
  return out;
}

async function viewer(port, query, seconds) {
  const { context, close } = await launch();
  const page = context.pages()[0] ?? await context.newPage();
  await page.goto(`http://127.0.0.1:${port}/${query}`);
  await until(() => page.evaluate(() => cbViewer.state.framesDrawn >= 3), 120000, 'frames drawn');
  await page.evaluate(() => { cbViewer.camera.position.set(0, 120, 160); cbViewer.controls.update(); });
  const t0 = await page.evaluate(() => ({ drawn: cbViewer.state.framesDrawn, recv: cbViewer.state.framesReceived, t: performance.now() }));
  await sleep(seconds * 1000);
  const r = await page.evaluate((t0) => {
    const s = cbViewer.state, dt = (performance.now() - t0.t) / 1000;
    const gl = document.createElement('canvas').getContext('webgl2');
    const info = gl && gl.getExtension('WEBGL_debug_renderer_info');
    return {
      frames_drawn_per_s: +((s.framesDrawn - t0.drawn) / dt).toFixed(2),
      frames_received_per_s: +((s.framesReceived - t0.recv) / dt).toFixed(2),
      latency_ms_median: +[...s.latencyMs].sort((a, b) => a - b)[s.latencyMs.length >> 1].toFixed(1),
      mode: s.mode, bones_as: cbViewer.bones.mode,
      js_ms_per_frame: +s.cpuMs.toFixed(2), render_call_ms: +s.renderMs.toFixed(2),
      renderer: info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : 'unknown',
    };
  }, t0);
  await close();
  return r;
}

for (const n of sizes) {
  const server = await serve(binary, ['--characters', String(n), '--seconds', '600', ...serveArgs]);
  const load = (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
  const network = await nodeClients(server.port, 10);
  const drawn = await viewer(server.port, '?bench=1', 10);
  const streamed = await viewer(server.port, '', 10);
  server.proc.kill('SIGTERM');
  await server.summary();
  console.log(JSON.stringify({ characters: n, load_average_before: Number(load), network, viewer_redraw: drawn, viewer_streamed: streamed }));
}
