// `crowdblend serve --pack`: a crowd of the pack's own character (the Fox), drawn in the browser
// as skinned meshes of the pack's source .glb, and bad --pack files refused up front.
// - Bad files: a missing file, a .glb given as a pack, a truncated pack, a pack with a flipped
//   byte, an embedded graph on the pack's clips, a missing --model: each exits with code 1 and
//   a message that names the problem, before listening.
// - The page (40 Foxes): the hello names the pack's joints, which the test reads from the .glb
//   itself (the skin's joints); every joint finds its bone; the model's units are fitted onto the pack's
//   (imported with --scale 0.01, tests/data/packs/README.md); every character is a drawn
//   skinned mesh (triangles drawn >= characters x the model's triangles, counted here from the
//   file); the head joint is drawn where the server's own pose puts it at two frames, and moves
//   consistently; at 1.5 m/s the character's state machine is in "moving".
// Prints TAP. Usage: node pack.mjs CROWDBLEND_BINARY PACK.cbpack MODEL.glb SCREENSHOT.png
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ok, until, sleep, serve, browserTest, jointFollowsServer } from './harness.mjs';

const [binary, packPath, modelPath, screenshot] = process.argv.slice(2);
const N = 40; // skinned in software (SwiftShader): each Fox costs the page about 1 ms a frame
const IMPORT_SCALE = 0.01; // tests/data/packs/README.md: the Fox was imported with --scale 0.01

// ---- bad --pack files ------------------------------------------------------------------------
const tmp = mkdtempSync(join(tmpdir(), 'cb-pack-'));
const pack = readFileSync(packPath);
writeFileSync(join(tmp, 'truncated.cbpack'), pack.subarray(0, pack.length >> 1));
const flipped = Buffer.from(pack);
flipped[flipped.length >> 1] ^= 0x10;
writeFileSync(join(tmp, 'flipped.cbpack'), flipped);
const bad = [
  [['--pack', join(tmp, 'missing.cbpack')], /--pack: .*missing\.cbpack: cannot open/, 'a missing pack'],
  [['--pack', modelPath], /--pack: .*not a crowdblend pack/, 'a .glb given as a pack'],
  [['--pack', join(tmp, 'truncated.cbpack')], /--pack: .*truncated/, 'a truncated pack'],
  [['--pack', join(tmp, 'flipped.cbpack')], /--pack: /, 'a pack with one flipped byte'],
  [['--pack', packPath, '--graph', 'locomotion_8dir'], /graph.*locomotion_8dir/, 'an embedded example graph on the pack\'s clips'],
  [['--pack', packPath, '--model', join(tmp, 'missing.glb')], /--model: cannot read/, 'a missing --model'],
];
for (const [args, message, what] of bad) {
  const r = spawnSync(binary, ['serve', '--listen', '127.0.0.1:0', '--seconds', '5', '--threads', '1', ...args], { encoding: 'utf8', timeout: 60000 });
  ok(r.status === 1 && message.test(r.stderr) && !r.stdout.includes('listening'), `${what}: exit code 1 and a clear message`,
    `code ${r.status}: ${r.stderr.trim().split('\n').at(-1)}`);
}
rmSync(tmp, { recursive: true, force: true });

// ---- the model, read here --------------------------------------------------------------------
const glb = readFileSync(modelPath);
const gltf = JSON.parse(glb.subarray(20, 20 + glb.readUInt32LE(12)).toString());
const skinJoints = gltf.skins[0].joints.map((i) => gltf.nodes[i].name ?? `nodes[${i}]`);
const modelTriangles = gltf.meshes.flatMap((m) => m.primitives)
  .reduce((n, p) => n + gltf.accessors[p.indices ?? p.attributes.POSITION].count / 3, 0);

// ---- the page --------------------------------------------------------------------------------
// In a 24 m square, so that the screenshot shows a crowd.
const server = await serve(binary, ['--pack', packPath, '--model', modelPath, '--characters', String(N), '--area', '12', '--seconds', '600', '--threads', '2']);
await browserTest(server, '/', screenshot, 'pack test', async (page, v) => {
  await until(() => v(() => window.cbViewer && cbViewer.state.mode === 'skinned meshes' && cbViewer.state.framesReceived >= 30 && cbViewer.state.framesDrawn >= 3), 120000, 'skinned meshes, 30 frames received');
  const hello = await v(() => cbViewer.state.hello);
  const names = hello.skeleton.joints;
  ok(names.length === skinJoints.length && names.every((n) => skinJoints.includes(n)), 'the hello names the pack\'s joints: the .glb skin\'s joints',
    `${names.length} joints, ${skinJoints.length} in the skin`);
  ok(hello.clips.length > 0 && hello.clips.every((c) => gltf.animations.some((a) => a.name === c)), 'the hello names the pack\'s clips: the .glb\'s animations', hello.clips.join());
  const model = await v(() => cbViewer.state.model);
  ok(model.matched === names.length, 'every joint of the stream drives a bone of the .glb, by name', JSON.stringify(model));
  ok(Math.abs(model.scale / IMPORT_SCALE - 1) < 1e-5 && model.fitError < 1e-5, 'the model\'s units are fitted onto the pack\'s (the import\'s --scale)',
    `scale ${model.scale}, largest rest-pose misfit ${model.fitError.toExponential(2)} m`);
  const drawn = await v(() => ({ meshes: cbViewer.skinned.instances.filter((i) => i.root.visible).length, triangles: cbViewer.renderer.info.render.triangles, chars: cbViewer.state.charactersDrawn }));
  ok(drawn.meshes === N && drawn.chars === N && drawn.triangles >= N * modelTriangles, `all ${N} characters are drawn as skinned meshes`,
    `${drawn.meshes} meshes, ${drawn.triangles} triangles drawn, ${modelTriangles} per model`);

  // One Fox trotting straight ahead at 1.5 m/s (its clips play in place: the server moves it by
  // its velocity); its head, where it is drawn and where the server put it.
  const id = await v(() => cbViewer.state.frame.ids[3]);
  await v((id) => { cbViewer.select(id); cbViewer.send({ type: 'steer', speed: 1.5, direction: 0, characters: [id] }); }, id);
  await until(() => v(() => cbViewer.state.details !== null && cbViewer.state.drawnHistory.size > 1), 60000, 'details of the selected character');
  const joint = await v(() => cbViewer.state.details.joint.name);
  ok(joint === 'b_Head_05', 'the details follow the head by default', joint);
  await sleep(1000);
  // q16: each coordinate within half a step, rotated by the root's yaw (lengths kept); float
  // rounding at world coordinates of up to ~200 m and through three.js's bone matrices.
  await jointFollowsServer(v, { bound: 0.5 * Math.sqrt(3) * hello.position_scale + 1e-3, gap: 45, speed: 1.5, what: 'the Fox\'s head' });
  const state = await until(() => v(() => cbViewer.state.details.machines[0].state === 'moving' && 'moving'), 30000, 'state moving').catch(() => null);
  ok(state === 'moving', 'at 1.5 m/s the Fox is in state "moving"');
  await v(() => cbViewer.closeUp(5));
});
