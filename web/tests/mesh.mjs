// The skinned-mesh path of the viewer, driven by a fixture: the test reads CesiumMan.glb itself,
// computes model-space joint transforms of a pose (the rest pose with one joint turned) in double
// precision, encodes them as q16 frames with its own encoder written from docs/serve.md, and hands
// the page a hello naming the model and those frames. The page must load the .glb served by
// crowdblend serve, match all 19 joints by name, and put every bone where the pose says.
// Prints TAP. Usage: node mesh.mjs CROWDBLEND_BINARY MODEL.glb SCREENSHOT.png
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { launch } from './browser.mjs';
import { ok, done, until, sleep, serve } from './harness.mjs';

const [binary, modelPath, screenshot] = process.argv.slice(2);

// ---- the model, read here ------------------------------------------------------------------
const glb = readFileSync(modelPath);
const gltf = JSON.parse(glb.subarray(20, 20 + glb.readUInt32LE(12)).toString());
const nodes = gltf.nodes;
const joints = gltf.skins[0].joints; // node indices
const nodeName = (i) => nodes[i].name || `node_${i}`;
const parentOf = new Map();
nodes.forEach((n, i) => (n.children ?? []).forEach((c) => parentOf.set(c, i)));

// Column-major 4x4 in doubles.
function compose(t = [0, 0, 0], q = [0, 0, 0, 1], s = [1, 1, 1]) {
  const [x, y, z, w] = q;
  return [
    (1 - 2 * (y * y + z * z)) * s[0], 2 * (x * y + z * w) * s[0], 2 * (x * z - y * w) * s[0], 0,
    2 * (x * y - z * w) * s[1], (1 - 2 * (x * x + z * z)) * s[1], 2 * (y * z + x * w) * s[1], 0,
    2 * (x * z + y * w) * s[2], 2 * (y * z - x * w) * s[2], (1 - 2 * (x * x + y * y)) * s[2], 0,
    t[0], t[1], t[2], 1];
}
function mul(a, b) {
  const r = new Array(16).fill(0);
  for (let c = 0; c < 4; c++) for (let row = 0; row < 4; row++) for (let k = 0; k < 4; k++) r[4 * c + row] += a[4 * k + row] * b[4 * c + k];
  return r;
}
function quatMul(a, b) {
  return [a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1], a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
    a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3], a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]];
}
function local(i, turn) {
  const n = nodes[i];
  if (n.matrix) return n.matrix.slice();
  const q = turn ? quatMul(n.rotation ?? [0, 0, 0, 1], turn) : n.rotation;
  return compose(n.translation, q, n.scale);
}
// Scene-space (model-space) matrix of node i, with `turned` joint's rotation composed with turn.
function world(i, turned, turn) {
  const m = local(i, i === turned ? turn : null);
  return parentOf.has(i) ? mul(world(parentOf.get(i), turned, turn), m) : m;
}
function matToQuat(m) { // columns normalized, Shepperd
  const c = [0, 1, 2].map((j) => { const v = [m[4 * j], m[4 * j + 1], m[4 * j + 2]]; const n = Math.hypot(...v); return v.map((x) => x / n); });
  const tr = c[0][0] + c[1][1] + c[2][2];
  let q;
  if (tr > 0) q = [c[1][2] - c[2][1], c[2][0] - c[0][2], c[0][1] - c[1][0], 1 + tr];
  else if (c[0][0] > c[1][1] && c[0][0] > c[2][2]) q = [1 + c[0][0] - c[1][1] - c[2][2], c[1][0] + c[0][1], c[2][0] + c[0][2], c[1][2] - c[2][1]];
  else if (c[1][1] > c[2][2]) q = [c[1][0] + c[0][1], 1 + c[1][1] - c[0][0] - c[2][2], c[2][1] + c[1][2], c[2][0] - c[0][2]];
  else q = [c[2][0] + c[0][2], c[2][1] + c[1][2], 1 + c[2][2] - c[0][0] - c[1][1], c[0][1] - c[1][0]];
  const n = Math.hypot(...q);
  return q.map((x) => x / n);
}

// The pose: joint 1 of the skin (node 11, the spine) turned 50 degrees about its local X.
const TURNED = joints[1];
const turn = [Math.sin(25 * Math.PI / 180), 0, 0, Math.cos(25 * Math.PI / 180)];
const posed = joints.map((j) => world(j, TURNED, turn));
const rest = joints.map((j) => world(j, -1, null));
const names = joints.map(nodeName);
const parents = joints.map((j) => { let p = parentOf.get(j); while (p !== undefined && !joints.includes(p)) p = parentOf.get(p); return p === undefined ? -1 : joints.indexOf(p); });

// ---- frames, encoded here (docs/serve.md: header, q16 records) ------------------------------
const reach = Math.max(...posed.map((m) => Math.hypot(m[12], m[13], m[14])));
const scale = Math.max(4 * reach / 32767, 1 / 8192);
function pack48(q) {
  let big = 0;
  for (let k = 1; k < 4; k++) if (Math.abs(q[k]) > Math.abs(q[big])) big = k;
  const sgn = q[big] < 0 ? -1 : 1;
  const w = [];
  for (let k = 0; k < 4; k++) if (k !== big) w.push(Math.round((q[k] * sgn / Math.SQRT1_2 * 0.5 + 0.5) * 32767));
  w[0] |= (big >> 1) << 15;
  w[1] |= (big & 1) << 15;
  return w;
}
// Ids of 53 bits (crowd.h): the largest, and one past 2^32 whose low half is 12.
const characters = [
  { id: 2 ** 53 - 1, pos: [2, 0, 1], yaw: 30, pose: posed },
  { id: 2 ** 32 + 12, pos: [-1.5, 0, 0], yaw: -90, pose: rest },
];
function encode(frameNo) {
  const J = joints.length, rec = 28 + 12 * J; // id 8, root 12 + 8, joints 12 (q16)
  const buf = Buffer.alloc(64 + characters.length * rec);
  buf.writeUInt32LE(0x31464243, 0); buf.writeUInt16LE(2, 4); buf.writeUInt16LE(1, 6);
  buf.writeBigUInt64LE(BigInt(frameNo), 8); buf.writeDoubleLE(frameNo / 60, 16);
  buf.writeBigUInt64LE(BigInt(Date.now() * 1000), 24); buf.writeUInt32LE(characters.length, 32);
  buf.writeUInt16LE(J, 36); buf.writeFloatLE(scale, 40); buf.writeUInt32LE(rec, 44); buf.writeUInt32LE(1, 48);
  characters.forEach((c, i) => {
    const o = 64 + i * rec;
    buf.writeBigUInt64LE(BigInt(c.id), o);
    c.pos.forEach((x, k) => buf.writeFloatLE(x, o + 8 + 4 * k));
    const h = c.yaw * Math.PI / 360;
    pack48([0, Math.sin(h), 0, Math.cos(h)]).forEach((w, k) => buf.writeUInt16LE(w, o + 20 + 2 * k));
    c.pose.forEach((m, j) => {
      const p = o + 28 + 12 * j;
      [12, 13, 14].forEach((e, k) => buf.writeInt16LE(Math.round(m[e] / scale), p + 2 * k));
      pack48(matToQuat(m)).forEach((w, k) => buf.writeUInt16LE(w, p + 6 + 2 * k));
    });
  });
  return [...buf];
}
function expectedWorld(c, j) { // root (yaw about +Y) * model translation
  const m = c.pose[j], h = c.yaw * Math.PI / 180, cs = Math.cos(h), sn = Math.sin(h);
  return [c.pos[0] + cs * m[12] + sn * m[14], c.pos[1] + m[13], c.pos[2] - sn * m[12] + cs * m[14]];
}

// ---- the page ------------------------------------------------------------------------------
const server = await serve(binary, ['--characters', '4', '--model', modelPath, '--seconds', '300', '--threads', '1']);
const { context, close } = await launch();
const page = context.pages()[0] ?? await context.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(e.message));
try {
  await page.goto(`http://127.0.0.1:${server.port}/?offline=1&meshes=8`);
  const url = `/models/${basename(modelPath)}`;
  const hello = { type: 'hello', protocol: 1, epoch: 1, encoding: 'q16', position_scale: scale,
    skeleton: { joints: names, parents }, model: { url }, clips: [], graphs: ['fixture'],
    graph: { name: 'fixture', params: [], machines: [], clip_nodes: [] } };
  await page.waitForFunction(() => window.cbViewer !== undefined);
  await page.evaluate((h) => cbViewer.injectHello(h), hello);
  const model = await until(() => page.evaluate(() => cbViewer.state.model), 60000, 'the model to load');
  ok(model.matched === joints.length, `the viewer loads ${url} and matches every joint by name`, JSON.stringify(model));
  await page.evaluate((bytes) => cbViewer.injectFrame(new Uint8Array(bytes).buffer), encode(1));
  await until(() => page.evaluate(() => cbViewer.state.framesDrawn >= 1), 30000, 'the frame drawn');
  const ids = await page.evaluate(() => Array.from(cbViewer.state.frame.ids));
  ok(ids.length === 2 && ids.every((id, c) => id === characters[c].id), 'the page reads 53-bit ids exactly', ids.join(', '));
  const drawn = await page.evaluate((n) => [0, 1].map((c) => Array.from({ length: n }, (_, j) => cbViewer.drawnJoint(c, j))), joints.length);
  ok(await page.evaluate(() => cbViewer.state.mode) === 'skinned meshes', 'drawn as skinned meshes');
  // q16: each model-space coordinate within half a step (plus float rounding), rotated by the
  // root's yaw (lengths kept); bone positions come out of three.js's float matrices.
  const bound = 0.51 * Math.sqrt(3) * scale + 1e-4;
  for (const [c, who] of [[0, 'the posed character'], [1, 'the character at rest']]) {
    let worst = 0, at = -1;
    for (let j = 0; j < joints.length; j++) {
      const e = expectedWorld(characters[c], j), d = drawn[c][j];
      const err = Math.hypot(d[0] - e[0], d[1] - e[1], d[2] - e[2]);
      if (err > worst) { worst = err; at = j; }
    }
    ok(worst <= bound, `every bone of ${who} is where the pose puts it`, `worst ${worst.toExponential(2)} m at joint ${names[at]}, bound ${bound.toExponential(2)}`);
  }
  // The turn moved the spine's descendants (the fixture can tell a right pose from the rest).
  const headMoved = Math.max(...joints.map((_, j) => Math.hypot(...[12, 13, 14].map((e) => posed[j][e] - rest[j][e]))));
  ok(headMoved > 0.1, 'the turned joint moves its descendants', `${headMoved.toFixed(3)} m`);

  // A skeleton whose names match nothing in the model falls back to bones.
  await page.evaluate((h) => cbViewer.injectHello({ ...h, epoch: 2, skeleton: { joints: h.skeleton.joints.map((n) => 'x_' + n), parents: h.skeleton.parents } }), hello);
  const fallback = await until(() => page.evaluate(() => (cbViewer.state.mode.startsWith('bones') ? cbViewer.state.mode : null)), 60000, 'the fallback');
  ok(fallback.includes('no joint'), 'no matching joint: the viewer says so and draws bones', fallback);
  await page.evaluate((h) => cbViewer.injectHello(h), hello);
  await until(() => page.evaluate(() => cbViewer.state.mode === 'skinned meshes'), 60000, 'meshes again');
  await page.evaluate((bytes) => cbViewer.injectFrame(new Uint8Array(bytes).buffer), encode(2));
  await page.evaluate(() => { const c = cbViewer.controls, k = cbViewer.camera; c.target.set(0.25, 0.9, 0.5); k.position.set(0.25, 1.5, 5.6); c.update(); });
  await sleep(1500);
  await page.screenshot({ path: screenshot });
  ok(true, `screenshot saved: ${screenshot}`);
  ok(errors.length === 0, 'no script errors on the page', errors.join('; '));
} catch (e) {
  ok(false, 'fixture test ran to the end', e.message);
} finally {
  await close();
  server.proc.kill('SIGTERM');
  await server.summary();
  done();
}
