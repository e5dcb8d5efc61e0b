// The pictures in docs/img: the viewer on a large crowd with a character selected, steered.
// Not a test. Usage: node screenshot.mjs CROWDBLEND_BINARY OUT.png [characters]
import { launch } from './browser.mjs';
import { sleep, serve, until } from './harness.mjs';

const [binary, out, n = '10000'] = process.argv.slice(2);
const server = await serve(binary, ['--characters', n, '--seconds', '900']);
const { context, close } = await launch();
const page = context.pages()[0] ?? await context.newPage();
await page.setViewportSize({ width: 1400, height: 800 });
await page.goto(`http://127.0.0.1:${server.port}/?capsules=${n}&aa=1`);
await until(() => page.evaluate(() => cbViewer.state.framesDrawn >= 2), 300000, 'frames');
// The character nearest the middle of the crowd, walking forward; camera behind and above.
const id = await page.evaluate(() => {
  const f = cbViewer.state.frame, J = f.header.joints, w = cbViewer.state.world;
  let best = 0, bd = Infinity;
  for (let c = 0; c < f.header.characters; c++) {
    const d = Math.hypot(w[3 * c * J], w[3 * c * J + 2]);
    if (d < bd) { bd = d; best = c; }
  }
  return f.ids[best];
});
await page.evaluate((id) => { cbViewer.select(id); cbViewer.send({ type: 'steer', speed: 1.4, direction: 0, characters: [id] }); }, id);
await until(() => page.evaluate(() => cbViewer.state.details !== null), 300000, 'details');
await sleep(4000);
await page.evaluate(() => {
  const c = Math.max(0, cbViewer.indexOfId(cbViewer.state.selectedId));
  const f = cbViewer.state.frame, J = f.header.joints, w = cbViewer.state.world;
  const x = w[3 * c * J], z = w[3 * c * J + 2];
  cbViewer.controls.target.set(x, 1, z);
  cbViewer.camera.position.set(x + 9, 6, z + 12);
  cbViewer.controls.update();
});
// Paused, so that the software renderer draws the picture once rather than every new frame.
await page.evaluate(() => cbViewer.send({ type: 'pause' }));
await sleep(8000);
await page.screenshot({ path: out, timeout: 300000 });
await close();
server.proc.kill('SIGTERM');
await server.summary();
