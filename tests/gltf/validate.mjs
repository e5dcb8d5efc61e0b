// Validates glTF 2.0 files with the Khronos glTF validator (npm gltf-validator):
//   node tests/gltf/validate.mjs FILE.gltf|FILE.glb... [--allow-warnings] [--agents N]
// Prints the report's counts and every error and warning; exits 1 when the validator reports
// an error (or a warning, unless allowed) or, with --agents, when the file does not hold one
// animation driving N agents (a node per agent and per joint, each with translation and
// rotation channels, and a scale channel per agent); 2 on bad usage or an unreadable file.
import { readFile } from "node:fs/promises";
import path from "node:path";
import validator from "gltf-validator";

const args = process.argv.slice(2);
const allowWarnings = args.includes("--allow-warnings");
const agentsAt = args.indexOf("--agents");
const expectAgents = agentsAt >= 0 ? Number(args[agentsAt + 1]) : null;
const files = args.filter((a, k) => !a.startsWith("--") && (agentsAt < 0 || k !== agentsAt + 1));

// The JSON of a .gltf, or of a .glb's first chunk.
function gltfJson(bytes) {
  const glb = bytes.length >= 20 && new TextDecoder().decode(bytes.subarray(0, 4)) === "glTF";
  if (!glb) {
    return JSON.parse(new TextDecoder().decode(bytes));
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return JSON.parse(new TextDecoder().decode(bytes.subarray(20, 20 + view.getUint32(12, true))));
}

// Checks the shape `crowdblend animate --out` promises; returns a problem or null.
function checkCrowd(doc, agents) {
  const roots = doc.scenes?.[doc.scene ?? 0]?.nodes ?? [];
  if (roots.length !== agents) return `${roots.length} agent nodes, expected ${agents}`;
  if ((doc.animations ?? []).length !== 1) return "expected exactly one animation";
  const channels = doc.animations[0].channels;
  const nodes = doc.nodes.length;
  const want = 2 * nodes + agents;
  if (channels.length !== want) return `${channels.length} channels, expected ${want}`;
  const paths = new Set(channels.map((c) => `${c.target.node}/${c.target.path}`));
  for (let n = 0; n < nodes; ++n) {
    for (const p of ["translation", "rotation"]) {
      if (!paths.has(`${n}/${p}`)) return `node ${n} has no ${p} channel`;
    }
  }
  for (const r of roots) {
    if (!paths.has(`${r}/scale`)) return `agent node ${r} has no scale (visibility) channel`;
  }
  return null;
}
if (files.length === 0) {
  console.error("usage: node validate.mjs FILE.gltf|FILE.glb... [--allow-warnings]");
  process.exit(2);
}

let failed = false;
for (const file of files) {
  let bytes;
  try {
    bytes = new Uint8Array(await readFile(file));
  } catch (e) {
    console.error(`${file}: ${e.message}`);
    process.exit(2);
  }
  const report = await validator.validateBytes(bytes, {
    uri: path.basename(file),
    maxIssues: 0,
    // External buffers (the .bin beside a .gltf) are read from the file's folder.
    externalResourceFunction: (uri) =>
      readFile(path.join(path.dirname(file), decodeURIComponent(uri))).then(
        (b) => new Uint8Array(b),
      ),
  });
  const i = report.issues;
  console.log(
    `${file}: ${i.numErrors} errors, ${i.numWarnings} warnings, ${i.numInfos} infos, ` +
      `${i.numHints} hints; ${report.info?.animationCount ?? 0} animations`,
  );
  for (const m of i.messages) {
    if (m.severity <= 1) {
      console.log(`  ${m.severity === 0 ? "error" : "warning"} ${m.code} at ${m.pointer}: ${m.message}`);
    }
  }
  if (i.numErrors > 0 || (!allowWarnings && i.numWarnings > 0)) {
    failed = true;
  }
  if (expectAgents !== null) {
    const problem = checkCrowd(gltfJson(bytes), expectAgents);
    console.log(`  crowd: ${problem ?? `${expectAgents} agents, every node animated`}`);
    failed ||= problem !== null;
  }
}
process.exit(failed ? 1 : 0);
