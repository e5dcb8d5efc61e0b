// The crowdblend viewer: connects to `crowdblend serve`, draws the newest frame of the crowd on
// every animation frame, and shows the server's timings and a selected character's state.
// window.cbViewer exposes what the browser tests read (docs/serve.md, "Tests").
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { readHeader, decodeFrame, worldPositions } from './protocol.js';
import { Bones } from './bones.js';
import { Skinned } from './skinned.js';
import { Panel } from './panel.js';

const query = new URLSearchParams(location.search);
const HISTORY = 240;

const state = {
  connected: false,
  hello: null,
  framesReceived: 0,
  framesDrawn: 0,
  bytesReceived: 0,
  charactersDrawn: 0,
  lastFrameNumber: 0,
  framesSkipped: 0,
  raw: null, // newest frame's bytes, not yet drawn
  frame: null, // the decoded frame last drawn
  world: null,
  selectedId: 0,
  selectedJoint: -1,
  details: null,
  detailsHistory: new Map(), // frame -> world position of the subscribed joint (server's floats)
  drawnHistory: new Map(), // frame -> where that joint was drawn
  errors: [],
  latencyMs: [],
  mode: 'bones',
  model: null,
};

// ---- three.js scene -------------------------------------------------------------------------

const canvasHost = document.getElementById('view');
// No antialiasing and a pixel ratio of 1 unless asked: software rendering (headless Chromium's
// SwiftShader) pays for every pixel.
const renderer = new THREE.WebGLRenderer({ antialias: query.get('aa') === '1' });
renderer.setPixelRatio(Number(query.get('dpr') ?? 1));
canvasHost.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x1d2330);
const camera = new THREE.PerspectiveCamera(50, 1, 0.05, 2000);
camera.position.set(0, 40, 60);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0, 1, 0);
controls.update();
scene.add(new THREE.HemisphereLight(0xdfe8ff, 0x404040, 2.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.6);
sun.position.set(30, 80, 20);
scene.add(sun);
// The ground: a textured plane (10 m tiles of 1 m cells) that follows the camera's target in
// whole tiles. A texture, not GridHelper lines: SwiftShader drops long lines that cross the near
// plane, and a software renderer draws one textured quad faster than a thousand lines.
function gridTexture() {
  const size = 512, cell = size / 10, c = document.createElement('canvas');
  c.width = c.height = size;
  const g = c.getContext('2d');
  g.fillStyle = '#222a38';
  g.fillRect(0, 0, size, size);
  g.strokeStyle = '#333d50';
  g.lineWidth = 2;
  for (let k = 1; k < 10; k++) {
    g.beginPath(); g.moveTo(k * cell, 0); g.lineTo(k * cell, size); g.stroke();
    g.beginPath(); g.moveTo(0, k * cell); g.lineTo(size, k * cell); g.stroke();
  }
  g.strokeStyle = '#4a5670';
  g.lineWidth = 4;
  g.strokeRect(0, 0, size, size);
  const t = new THREE.CanvasTexture(c);
  t.wrapS = t.wrapT = THREE.RepeatWrapping;
  t.colorSpace = THREE.SRGBColorSpace;
  return t;
}
const GROUND = 1200;
const groundTexture = gridTexture();
groundTexture.repeat.set(GROUND / 10, GROUND / 10);
groundTexture.anisotropy = Number(query.get('aniso') ?? 1);
const ground = new THREE.Mesh(new THREE.PlaneGeometry(GROUND, GROUND),
  new THREE.MeshBasicMaterial({ map: groundTexture }));
ground.rotation.x = -Math.PI / 2;
ground.visible = query.get('ground') !== '0';
scene.add(ground);
// A software renderer (headless Chromium's SwiftShader, Mesa's llvmpipe) pays for every
// triangle on the CPU: draw bones as lines beyond a few hundred characters there.
const glInfo = renderer.getContext().getExtension('WEBGL_debug_renderer_info');
const rendererName = glInfo ? renderer.getContext().getParameter(glInfo.UNMASKED_RENDERER_WEBGL) : '';
const softwareRenderer = /swiftshader|llvmpipe|software/i.test(rendererName);
const bones = new Bones(scene, { capsuleLimit: Number(query.get('capsules') ?? (softwareRenderer ? 300 : 2000)) });
const skinned = new Skinned(scene, { limit: Number(query.get('meshes') ?? 256) });

function resize() {
  const w = canvasHost.clientWidth, h = canvasHost.clientHeight;
  renderer.setSize(w, h, false);
  camera.aspect = w / Math.max(1, h);
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', resize);
resize();

// ---- connection -----------------------------------------------------------------------------

let ws = null;
let req = 1;

function send(message) {
  const text = typeof message === 'string' ? message : JSON.stringify({ ...message, req: message.req ?? req++ });
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(text);
}

const panel = new Panel({ send, state, select: (id) => select(id) });

function onHello(h) {
  state.hello = h;
  state.detailsHistory.clear();
  state.drawnHistory.clear();
  state.frame = null;
  bones.setSkeleton(h.skeleton.parents);
  panel.onHello(h);
  if (state.selectedId) select(0);
  if (h.model && h.model.url) {
    state.mode = 'loading model';
    skinned.load(h.model.url, h.skeleton.joints, h.skeleton.parents, h.skeleton.rest).then((r) => {
      state.model = r;
      state.mode = r.matched > 0 ? 'skinned meshes' : 'bones (no joint of the model matched)';
      if (r.matched > 0 && (query.get('encoding') ?? 'q16') === 'pos16') send({ type: 'encoding', encoding: 'q16' });
    }, (e) => {
      state.mode = 'bones (model failed to load)';
      panel.error(`model ${h.model.url}: ${e.message ?? e}`);
    });
  } else {
    state.mode = 'bones';
  }
  // Bones need positions only: pos16 is half of q16's bytes. A model needs rotations (q16).
  const enc = query.get('encoding') ?? (h.model && h.model.url ? 'q16' : 'pos16');
  if (enc && enc !== h.encoding) send({ type: 'encoding', encoding: enc });
  panel.showEncoding(enc);
}

function onText(m) {
  switch (m.type) {
    case 'hello': onHello(m); break;
    case 'stats': panel.onStats(m); break;
    case 'details': onDetails(m); break;
    case 'error': panel.error(`${m.code}${m.for ? ' (' + m.for + ')' : ''}: ${m.message}`); break;
    case 'ok': panel.onOk(m); break;
    default: panel.error(`unknown message type ${m.type}`);
  }
}

function onDetails(m) {
  const d = m.characters.find((c) => c.id === state.selectedId);
  if (!d) return;
  state.details = d;
  state.selectedJoint = d.joint.index;
  state.detailsHistory.set(m.frame, d.joint.world);
  trim(state.detailsHistory);
  panel.onDetails(d, m);
}

function onFrame(buffer) {
  const now = performance.timeOrigin + performance.now();
  let h;
  try {
    h = readHeader(buffer);
  } catch (e) {
    panel.error(`bad frame: ${e.message}`);
    return;
  }
  if (!state.hello || h.epoch !== state.hello.epoch) return;
  state.framesReceived++;
  state.bytesReceived += buffer.byteLength;
  if (state.lastFrameNumber && h.frame > state.lastFrameNumber + 1) state.framesSkipped += h.frame - state.lastFrameNumber - 1;
  state.lastFrameNumber = h.frame;
  // Simulation step -> receipt, on one machine's clock (CLOCK_REALTIME vs. timeOrigin + now).
  state.latencyMs.push(now - h.wallUs / 1000);
  if (state.latencyMs.length > 600) state.latencyMs.shift();
  state.raw = buffer;
  panel.onFrameHeader(h, buffer.byteLength);
}

function connect() {
  if (query.get('offline')) return;
  ws = new WebSocket(`ws://${location.host}/`, 'crowdblend');
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => { state.connected = true; panel.status('connected'); };
  ws.onclose = (e) => {
    state.connected = false;
    panel.status(`disconnected (${e.code}${e.reason ? ': ' + e.reason : ''}); retrying`);
    setTimeout(connect, 1000);
  };
  ws.onmessage = (e) => {
    if (typeof e.data === 'string') {
      let m;
      try { m = JSON.parse(e.data); } catch { panel.error('server sent text that is not JSON'); return; }
      onText(m);
    } else {
      onFrame(e.data);
    }
  };
}

function trim(map) {
  while (map.size > HISTORY) map.delete(map.keys().next().value);
}

// ---- selection ------------------------------------------------------------------------------

function select(id) {
  if (state.selectedId) send({ type: 'unsubscribe', character: state.selectedId });
  state.selectedId = id;
  state.details = null;
  state.detailsHistory.clear();
  state.drawnHistory.clear();
  if (id) send({ type: 'subscribe', character: id });
  state.follow = id !== 0;
  panel.onSelect(id);
}

// The orbit camera follows the selected character (dragging still orbits around it).
function follow(c) {
  if (!state.follow || c < 0) return;
  const J = state.frame.header.joints, w = state.world;
  const x = w[3 * c * J], z = w[3 * c * J + 2];
  const dx = x - controls.target.x, dz = z - controls.target.z;
  controls.target.x += dx;
  controls.target.z += dz;
  camera.position.x += dx;
  camera.position.z += dz;
  controls.update();
}

function indexOfId(id) {
  const f = state.frame;
  if (!f) return -1;
  for (let c = 0; c < f.ids.length; c++) if (f.ids[c] === id) return c;
  return -1;
}

renderer.domElement.addEventListener('click', (e) => {
  const f = state.frame;
  if (!f || !state.world) return;
  const r = renderer.domElement.getBoundingClientRect();
  const mx = e.clientX - r.left, my = e.clientY - r.top;
  const J = f.header.joints, v = new THREE.Vector3();
  let best = -1, bestD = 40 * 40;
  for (let c = 0; c < f.header.characters; c++) {
    v.fromArray(state.world, 3 * c * J).project(camera);
    if (v.z > 1) continue;
    const x = (v.x * 0.5 + 0.5) * r.width, y = (-v.y * 0.5 + 0.5) * r.height;
    const d = (x - mx) ** 2 + (y - my) ** 2;
    if (d < bestD) { bestD = d; best = c; }
  }
  if (best >= 0) select(f.ids[best]);
});

// ---- drawing --------------------------------------------------------------------------------

// Renders when a frame arrived or the camera moved: a software renderer has no time to spare.
let lastRender = performance.now();
let needsRender = true;
controls.addEventListener('change', () => { needsRender = true; });
window.addEventListener('resize', () => { needsRender = true; });
// ?bench=1 redraws the newest frame on every animation frame (decode, bones, render), to
// measure what the viewer can draw whatever the network delivers (docs/performance.md).
const bench = query.get('bench') === '1';
function draw() {
  requestAnimationFrame(draw);
  if (bench && state.frame && !state.raw) state.raw = state.frame.buffer;
  if (!state.raw && !needsRender) return;
  needsRender = false;
  const t = performance.now();
  const dt = t - lastRender;
  lastRender = t;
  const t0 = performance.now();
  if (state.raw) {
    const f = decodeFrame(state.raw);
    f.buffer = state.raw;
    state.raw = null;
    state.frame = f;
    state.world = worldPositions(f, state.world && state.world.length === f.pos.length ? state.world : undefined);
    const sel = indexOfId(state.selectedId);
    const meshes = skinned.active ? skinned.update(f) : 0;
    bones.setVisible(meshes < f.header.characters);
    // Bones only when some character (or joint) has no mesh: they would be hidden anyway.
    if (meshes < f.header.characters || skinned.matched < f.header.joints) {
      bones.update(state.world, f.header.characters, f.header.joints, sel);
    }
    follow(sel);
    state.charactersDrawn = f.header.characters;
    state.framesDrawn++;
    if (sel >= 0 && state.selectedJoint >= 0) {
      state.drawnHistory.set(f.header.frame, drawnJoint(sel, state.selectedJoint));
      trim(state.drawnHistory);
    }
  }
  const t1 = performance.now();
  ground.position.set(10 * Math.round(controls.target.x / 10), 0, 10 * Math.round(controls.target.z / 10));
  renderer.render(scene, camera);
  // Where a frame's time goes: decoding + bones (JavaScript), and rendering (the GPU, or
  // SwiftShader on the CPU; render() returns when the commands are issued, so part of that
  // cost shows up in the next frame's interval instead).
  const t2 = performance.now(), a = 0.1;
  state.cpuMs = (state.cpuMs ?? t1 - t0) * (1 - a) + (t1 - t0) * a;
  state.renderMs = (state.renderMs ?? t2 - t1) * (1 - a) + (t2 - t1) * a;
  panel.onRender(dt);
}

// Where joint j of frame character c is drawn: the skinned mesh's bone, else the bone capsule.
function drawnJoint(c, j) {
  return (skinned.active && c < skinned.limit && skinned.drawnJoint(c, j)) || bones.drawnJoint(c, j);
}

window.cbViewer = {
  state,
  send,
  select,
  // Puts the camera at distance d from the selected (or first) character.
  closeUp(d = 6) {
    const c = Math.max(0, indexOfId(state.selectedId));
    const J = state.frame.header.joints, w = state.world;
    controls.target.set(w[3 * c * J], 1, w[3 * c * J + 2]);
    camera.position.set(w[3 * c * J] + 0.6 * d, 0.5 * d, w[3 * c * J + 2] + 0.8 * d);
    controls.update();
  },
  camera,
  controls,
  drawnJoint,
  indexOfId,
  injectHello: (h) => onHello(h),
  injectFrame: (buffer) => onFrame(buffer),
  skinned,
  bones,
  renderer,
  rendererName,
};

connect();
draw();
