// `crowdblend serve --trajectories FILE` (docs/serve.md, "Trajectories"): the file's agents are
// the characters, their roots on the trajectories, the file looping. This test reads the plain
// CSV (time,id,x,y) itself, and for every frame a WebSocket client receives checks that the
// characters are the agents the file has at the frame's simulated time, each root where the
// file puts its agent then. Bad files stop the command before it listens. Prints TAP.
// Usage: node trajectories.mjs CROWDBLEND_BINARY FILE.csv
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { ok, done, until, serve } from './harness.mjs';
import { decodeFrame } from '../public/js/protocol.js';

const [binary, file] = process.argv.slice(2);
const HZ = 60;

// ---- bad files: exit 1 with the loader's message, never listening --------------------------
const dir = mkdtempSync(join(tmpdir(), 'cb-traj-'));
const broken = join(dir, 'broken.csv');
writeFileSync(broken, 'time,id,x,y\n0,1,0,0\n0.5,1,abc,0\n');
for (const [path, message] of [[join(dir, 'missing.csv'), 'cannot open'], [broken, `${broken}:3:`]]) {
  const r = spawnSync(binary, ['serve', '--listen', '127.0.0.1:0', '--seconds', '5', '--trajectories', path], { encoding: 'utf8' });
  ok(r.status === 1 && r.stderr.includes(`--trajectories: ${path}`) && r.stderr.includes(message) && !r.stdout.includes('listening'),
    `a bad trajectory file stops serve before it listens: ${message}`, JSON.stringify(r.stderr.trim()));
}
rmSync(dir, { recursive: true });

// ---- --gait: a pack's clip for the follower's warp, refused as `crowdblend animate --gait` ---
// Every Fox clip plays in place (tests/data/packs/README.md); serve_sim (tests/test_serve_sim.c)
// checks the warp with a clip that walks.
const fox = fileURLToPath(new URL('../../tests/data/packs/fox.cbpack', import.meta.url));
for (const [args, code, message] of [
  [['--gait', 'Walk'], 2, 'it needs --trajectories and --pack'],
  [['--trajectories', file, '--gait', 'Walk'], 2, 'it needs --trajectories and --pack'],
  [['--pack', fox, '--gait', 'Walk'], 2, 'it needs --trajectories and --pack'],
  [['--trajectories', file, '--pack', fox, '--gait', 'Trot'], 1, "--gait: the pack has no clip 'Trot'; its clips: 'Survey', 'Walk', 'Run'"],
  [['--trajectories', file, '--pack', fox, '--gait', 'Walk'], 1, 'it plays in place), so the follower cannot take the rate from its speed; warp in the graph instead'],
]) {
  const r = spawnSync(binary, ['serve', '--listen', '127.0.0.1:0', '--seconds', '5', ...args], { encoding: 'utf8' });
  ok(r.status === code && r.stderr.includes(message) && !r.stdout.includes('listening'),
    `serve ${args.filter((a) => a !== file && a !== fox).join(' ')}: exit ${code} before listening`, JSON.stringify(r.stderr.trim()));
}

// ---- the file, read here: agents, their samples, the 60 Hz grid -----------------------------
const lines = readFileSync(file, 'utf8').trim().split('\n');
const col = Object.fromEntries(lines[0].split(',').map((name, i) => [name.trim(), i]));
const agents = new Map();
for (const line of lines.slice(1)) {
  const f = line.split(',').map(Number);
  const id = f[col.id];
  if (!agents.has(id)) agents.set(id, []);
  agents.get(id).push({ t: f[col.time], x: f[col.x], y: f[col.y] });
}
for (const s of agents.values()) s.sort((a, b) => a.t - b.t);
const all = [...agents.values()].flat();
const tMin = Math.min(...all.map((s) => s.t)), tMax = Math.max(...all.map((s) => s.t));
const N = Math.floor((tMax - tMin) * HZ + 1e-9) + 1; // frames of one pass (the loop)
for (const s of agents.values()) {
  s.first = Math.ceil((s[0].t - tMin) * HZ - 1e-9);
  s.last = Math.min(N - 1, Math.floor((s.at(-1).t - tMin) * HZ + 1e-9));
}

// Where the file puts an agent at time t: between its samples, linearly; in the crowd's world
// (x, y on the ground) -> (x, -y). The server's spline may leave the chord by at most
// 4/27 h (|m0 - d| + |m1 - d|) (the Hermite basis functions h10, h11 peak at 4/27), and its
// tangents lie in the hull of 0 and the neighbouring chord velocities (docs/trajectories.md),
// so the bound comes from the file's own chords; plus float rounding.
function expected(s, t) {
  let i = 0;
  while (i + 2 < s.length && s[i + 1].t <= t) i++;
  if (s.length === 1) return { x: s[0].x, z: -s[0].y, bound: 1e-5 };
  const chord = (j) => ({ x: (s[j + 1].x - s[j].x) / (s[j + 1].t - s[j].t), y: (s[j + 1].y - s[j].y) / (s[j + 1].t - s[j].t) });
  const len = (v) => Math.hypot(v.x, v.y), sub = (a, b) => ({ x: a.x - b.x, y: a.y - b.y });
  const d = chord(i), h = s[i + 1].t - s[i].t;
  const off = (j) => (j < 0 || j + 1 >= s.length ? 0 : Math.max(len(d), len(sub(chord(j), d))));
  const u = Math.min(1, Math.max(0, (t - s[i].t) / h));
  return {
    x: s[i].x + u * (s[i + 1].x - s[i].x),
    z: -(s[i].y + u * (s[i + 1].y - s[i].y)),
    bound: (4 / 27) * h * (off(i - 1) + off(i + 1)) + 1e-5,
  };
}

// The heading's turn rate between a character's frames (rad/s, the largest seen): the root's
// rotation is a turn about +Y, (0, sin(yaw / 2), 0, cos(yaw / 2)). Frames a client misses
// spread the turn over the frames between; a loop of the file starts the character anew.
function trackTurns(turns, f, k) {
  for (let c = 0; c < f.header.characters; c++) {
    const id = `${f.header.epoch}:${f.ids[c]}`;
    const yaw = 2 * Math.atan2(f.rootRot[4 * c + 1], f.rootRot[4 * c + 3]);
    const last = turns.last.get(id);
    if (last && k > last.k && k - last.k <= 10) {
      let d = yaw - last.yaw;
      d -= 2 * Math.PI * Math.round(d / (2 * Math.PI));
      const rate = Math.abs(d) * HZ / (k - last.k);
      if (rate > turns.max) turns.max = rate, turns.where = `frame ${f.header.frame} character ${id}`;
      turns.pairs++;
    }
    turns.last.set(id, { k, yaw });
  }
}

// ---- the server, and a client that checks every frame it gets ------------------------------
const server = await serve(binary, ['--trajectories', file, '--threads', '1', '--seconds', '120']);
const ws = new WebSocket(`ws://127.0.0.1:${server.port}/`, 'crowdblend');
const seen = { epochs: new Set(), switched: false, frames: 0, countWrong: [], far: [], swapped: [], counts: new Set(), wraps: 0, lastK: -1, worst: 0, replies: [] };
const agentOf = new Map(); // epoch:character id -> the agent it was matched to
const turns = { last: new Map(), max: 0, pairs: 0, where: '' };
ws.on('message', (data, isBinary) => {
  if (!isBinary) {
    const m = JSON.parse(data.toString());
    if (m.type === 'ok' || m.type === 'error') seen.replies.push(m);
    return;
  }
  const f = decodeFrame(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
  const k = Math.round(f.header.simTime * HZ) % N, t = tMin + k / HZ;
  if (k < seen.lastK) seen.wraps++;
  seen.lastK = k;
  seen.epochs.add(f.header.epoch);
  if (!seen.switched && k > N / 2) { // mid-file: a new crowd, the same agents where they are
    ws.send('{"type":"switch_graph","graph":"locomotion_8dir","req":3}');
    seen.switched = true;
  }
  seen.frames++;
  trackTurns(turns, f, k);
  const live = [...agents.entries()].filter(([, s]) => s.first <= k && k <= s.last);
  seen.counts.add(live.length);
  if (f.header.characters !== live.length) seen.countWrong.push(`frame ${f.header.frame}: ${f.header.characters} != ${live.length}`);
  const taken = new Set();
  for (let c = 0; c < f.header.characters; c++) {
    const x = f.rootPos[3 * c], z = f.rootPos[3 * c + 2];
    let best = null;
    for (const [id, s] of live) {
      const e = expected(s, t), dist = Math.hypot(x - e.x, z - e.z);
      if (!best || dist < best.dist) best = { id, dist, bound: e.bound };
    }
    if (!best) continue;
    seen.worst = Math.max(seen.worst, best.dist);
    if (best.dist > best.bound) seen.far.push(`frame ${f.header.frame} agent ${best.id}: ${best.dist.toExponential(2)} m > ${best.bound.toExponential(2)}`);
    const id = `${f.header.epoch}:${f.ids[c]}`; // a new crowd (graph switch) numbers anew
    if (taken.has(best.id) || (agentOf.has(id) && agentOf.get(id) !== best.id)) seen.swapped.push(`frame ${f.header.frame} character ${id}`);
    taken.add(best.id);
    agentOf.set(id, best.id);
  }
});
await new Promise((r) => ws.on('open', r));
ws.send('{"type":"add","count":1,"req":1}');
ws.send('{"type":"time_scale","value":2,"req":2}');

// One whole pass of the file and into the next (the loop), however long this machine takes.
try {
  await until(() => seen.wraps >= 1 && seen.lastK > N / 4, 120000, 'a loop of the trajectory file');
} catch (e) {
  ok(false, 'the file played through and looped', e.message);
}
ws.close();
server.proc.kill('SIGTERM');
const end = await server.summary();

ok(seen.frames > N / 2, 'frames received over a pass of the file', `${seen.frames} frames, ${N} frames a pass`);
ok(seen.countWrong.length === 0 && seen.counts.size >= 3, 'each frame has as many characters as the file has agents at its time',
  `counts seen ${[...seen.counts].sort().join(', ')}; ${seen.countWrong.slice(0, 3).join('; ')}`);
ok(seen.far.length === 0, 'every root is on its agent\'s trajectory at the frame\'s time (bound from the file\'s chords)',
  `largest distance ${seen.worst.toExponential(2)} m; ${seen.far.slice(0, 3).join('; ')}`);
ok(seen.swapped.length === 0 && agentOf.size > agents.size, 'each character follows one agent; agents come back as new characters after the loop',
  `${agentOf.size} characters for ${agents.size} agents; ${seen.swapped.slice(0, 3).join('; ')}`);
const refused = (req) => seen.replies.some((m) => m.req === req && m.type === 'error' && m.code === 'refused');
ok(refused(1) && refused(2), 'adding characters and a time scale are refused: the file decides', JSON.stringify(seen.replies));
ok(seen.replies.some((m) => m.req === 3 && m.type === 'ok') && seen.epochs.size === 2,
  'a graph switch mid-file goes on with the agents live then (checked above like every frame)', `epochs ${[...seen.epochs]}`);
ok(end.code === 0 && end.summary !== null, 'the server exits cleanly on SIGTERM', JSON.stringify(end.summary));

// ---- --max-turn: the follower's turn-rate limit, as `crowdblend animate --max-turn` ---------
// Without it some heading above turns faster than the limit below (else the check proves
// nothing); with it no heading may, over a pass of the file, while the roots stay on the file.
const LIMIT = 1.0; // rad/s
ok(turns.pairs > 1000 && turns.max > 1.5 * LIMIT, `without --max-turn some heading turns faster than ${LIMIT} rad/s`,
  `largest ${turns.max.toFixed(3)} rad/s (${turns.where}) over ${turns.pairs} frame pairs`);
for (const bad of ['-1', '1001', 'nan']) {
  const r = spawnSync(binary, ['serve', '--listen', '127.0.0.1:0', '--seconds', '5', '--trajectories', file, '--max-turn', bad], { encoding: 'utf8' });
  ok(r.status === 2 && r.stderr.includes('--max-turn') && !r.stdout.includes('listening'), `--max-turn ${bad} is refused before listening`, JSON.stringify(r.stderr.trim()));
}
{
  const r = spawnSync(binary, ['serve', '--listen', '127.0.0.1:0', '--seconds', '5', '--max-turn', '1'], { encoding: 'utf8' });
  ok(r.status === 2 && r.stderr.includes('--max-turn') && !r.stdout.includes('listening'), '--max-turn without --trajectories is refused', JSON.stringify(r.stderr.trim()));
}
const limited = await serve(binary, ['--trajectories', file, '--threads', '1', '--seconds', '120', '--max-turn', String(LIMIT)]);
const ws2 = new WebSocket(`ws://127.0.0.1:${limited.port}/`, 'crowdblend');
const turns2 = { last: new Map(), max: 0, pairs: 0, where: '' };
const seen2 = { frames: 0, lastK: -1, wraps: 0, far: 0, worst: 0 };
ws2.on('message', (data, isBinary) => {
  if (!isBinary) return;
  const f = decodeFrame(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
  const k = Math.round(f.header.simTime * HZ) % N, t = tMin + k / HZ;
  if (k < seen2.lastK) seen2.wraps++;
  seen2.lastK = k;
  seen2.frames++;
  if (f.header.encoding === 'f32') trackTurns(turns2, f, k); // q16 rounds the rotation

  const live = [...agents.values()].filter((s) => s.first <= k && k <= s.last);
  for (let c = 0; c < f.header.characters; c++) {
    const x = f.rootPos[3 * c], z = f.rootPos[3 * c + 2];
    let best = null;
    for (const s of live) {
      const e = expected(s, t), dist = Math.hypot(x - e.x, z - e.z);
      if (!best || dist < best.dist) best = { dist, bound: e.bound };
    }
    if (best && best.dist > best.bound) seen2.far++;
    if (best) seen2.worst = Math.max(seen2.worst, best.dist);
  }
});
await new Promise((r) => ws2.on('open', r));
ws2.send('{"type":"encoding","encoding":"f32","req":1}');
try {
  await until(() => seen2.wraps >= 1, 120000, 'a pass of the trajectory file with --max-turn');
} catch (e) {
  ok(false, 'the file played through with --max-turn', e.message);
}
ws2.close();
limited.proc.kill('SIGTERM');
const end2 = await limited.summary();
// The limit holds in float: yaw + clamp(turn, -most, most) rounded, then sin/cos of its half
// in f32 (the f32 encoding: q16's 16-bit components would move the yaw by up to 1e-4 rad).
ok(turns2.pairs > 800 && turns2.max <= LIMIT * (1 + 1e-4), `with --max-turn ${LIMIT} no heading turns faster`,
  `largest ${turns2.max.toFixed(4)} rad/s (${turns2.where}) over ${turns2.pairs} frame pairs`);
ok(seen2.far === 0 && seen2.frames > N / 2, 'with --max-turn every root is still on its agent\'s trajectory',
  `${seen2.far} far, largest distance ${seen2.worst.toExponential(2)} m over ${seen2.frames} frames`);
ok(end2.code === 0, 'the limited server exits cleanly on SIGTERM', JSON.stringify(end2.summary));
done();
