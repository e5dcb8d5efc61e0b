// The wire format of `crowdblend serve` (docs/serve.md), read in the browser. Frames are
// little-endian; records are padded to 4 bytes, so typed-array views over the frame's
// ArrayBuffer stay aligned.
// A record starts with its character's id: a u64 of which 53 bits are used (crowd.h), read as
// two u32 halves, lo + hi * 2^32, which is exact in a double below 2^53. Ids are plain numbers,
// equal (===) to the ids of the JSON messages.

export const FRAME_MAGIC = 0x31464243; // "CBF1"
export const FRAME_VERSION = 2; // 2: 8-byte ids; version 1 had 4-byte ids
export const HEADER_BYTES = 64;
const RECORD_HEAD_F32 = 36; // id 8, root position 12, root rotation 4 x f32
const RECORD_HEAD_PACKED = 28; // id 8, root position 12, root rotation 48 bits + 2 padding
export const ENCODINGS = ['f32', 'q16', 'pos16'];

export function readHeader(buffer) {
  if (buffer.byteLength < HEADER_BYTES) throw new Error('frame shorter than its header');
  const v = new DataView(buffer);
  if (v.getUint32(0, true) !== FRAME_MAGIC) throw new Error('bad frame magic');
  const h = {
    version: v.getUint16(4, true),
    encoding: ENCODINGS[v.getUint16(6, true)],
    frame: Number(v.getBigUint64(8, true)),
    simTime: v.getFloat64(16, true),
    wallUs: Number(v.getBigUint64(24, true)),
    characters: v.getUint32(32, true),
    joints: v.getUint16(36, true),
    flags: v.getUint16(38, true),
    positionScale: v.getFloat32(40, true),
    recordBytes: v.getUint32(44, true),
    epoch: v.getUint32(48, true),
    stepUs: v.getUint32(52, true),
  };
  if (h.version !== FRAME_VERSION || h.encoding === undefined) {
    throw new Error(`unsupported frame (version ${h.version}; this viewer reads ${FRAME_VERSION})`);
  }
  if (buffer.byteLength !== HEADER_BYTES + h.characters * h.recordBytes) {
    throw new Error('frame size does not match its header');
  }
  return h;
}

const SQRT1_2 = Math.SQRT1_2;
function unpack15(v) {
  return ((v & 0x7fff) / 32767 - 0.5) * 2 * SQRT1_2;
}

// Smallest-three rotation (three u16 words) into out[o..o+3] as x, y, z, w.
export function unpackQuat(u16, i, out, o) {
  const a = u16[i], b = u16[i + 1], c = u16[i + 2];
  const big = ((a >> 15) << 1) | (b >> 15);
  let x = unpack15(a), y = unpack15(b), z = unpack15(c);
  const sum = x * x + y * y + z * z;
  if (sum > 1) { // only a corrupt frame: keep the rotation unit, as the C decoder does
    const inv = 1 / Math.sqrt(sum);
    x *= inv; y *= inv; z *= inv;
  }
  const rest = Math.sqrt(Math.max(0, 1 - x * x - y * y - z * z));
  let r = 0;
  const small = [x, y, z];
  for (let k = 0; k < 4; k++) out[o + k] = k === big ? rest : small[r++];
}

// A decoded frame: per character its id, root position and rotation, and model-space joint
// positions (and rotations when the encoding has them), in flat typed arrays.
export function decodeFrame(buffer, h = readHeader(buffer)) {
  const n = h.characters, J = h.joints;
  const ids = new Float64Array(n);
  const rootPos = new Float32Array(3 * n);
  const rootRot = new Float32Array(4 * n);
  const pos = new Float32Array(3 * J * n);
  const rot = h.encoding === 'pos16' ? null : new Float32Array(4 * J * n);
  const u32 = new Uint32Array(buffer);
  const f32 = new Float32Array(buffer);
  const i16 = new Int16Array(buffer);
  const u16 = new Uint16Array(buffer);
  const s = h.positionScale;
  for (let c = 0; c < n; c++) {
    const base = HEADER_BYTES + c * h.recordBytes; // a multiple of 4
    ids[c] = u32[base >> 2] + u32[(base >> 2) + 1] * 4294967296;
    rootPos[3 * c] = f32[(base >> 2) + 2];
    rootPos[3 * c + 1] = f32[(base >> 2) + 3];
    rootPos[3 * c + 2] = f32[(base >> 2) + 4];
    let p;
    if (h.encoding === 'f32') {
      for (let k = 0; k < 4; k++) rootRot[4 * c + k] = f32[(base >> 2) + 5 + k];
      p = (base + RECORD_HEAD_F32) >> 2;
      for (let j = 0; j < J; j++, p += 7) {
        const o = 3 * (c * J + j), q = 4 * (c * J + j);
        pos[o] = f32[p]; pos[o + 1] = f32[p + 1]; pos[o + 2] = f32[p + 2];
        rot[q] = f32[p + 3]; rot[q + 1] = f32[p + 4]; rot[q + 2] = f32[p + 5]; rot[q + 3] = f32[p + 6];
      }
      continue;
    }
    unpackQuat(u16, (base + 20) >> 1, rootRot, 4 * c);
    p = (base + RECORD_HEAD_PACKED) >> 1;
    const step = h.encoding === 'q16' ? 6 : 3;
    for (let j = 0; j < J; j++, p += step) {
      const o = 3 * (c * J + j);
      pos[o] = i16[p] * s; pos[o + 1] = i16[p + 1] * s; pos[o + 2] = i16[p + 2] * s;
      if (rot) unpackQuat(u16, p + 3, rot, 4 * (c * J + j));
    }
  }
  return { header: h, ids, rootPos, rootRot, pos, rot };
}

// v' = q v q* for unit q (x, y, z, w), written to out[o..o+2].
export function rotate(q, qi, x, y, z, out, o) {
  const qx = q[qi], qy = q[qi + 1], qz = q[qi + 2], qw = q[qi + 3];
  const tx = 2 * (qy * z - qz * y), ty = 2 * (qz * x - qx * z), tz = 2 * (qx * y - qy * x);
  out[o] = x + qw * tx + (qy * tz - qz * ty);
  out[o + 1] = y + qw * ty + (qz * tx - qx * tz);
  out[o + 2] = z + qw * tz + (qx * ty - qy * tx);
}

// World joint positions of every character: root * model.
export function worldPositions(f, out = new Float32Array(f.pos.length)) {
  const n = f.header.characters, J = f.header.joints;
  for (let c = 0; c < n; c++) {
    for (let j = 0; j < J; j++) {
      const o = 3 * (c * J + j);
      rotate(f.rootRot, 4 * c, f.pos[o], f.pos[o + 1], f.pos[o + 2], out, o);
      out[o] += f.rootPos[3 * c];
      out[o + 1] += f.rootPos[3 * c + 1];
      out[o + 2] += f.rootPos[3 * c + 2];
    }
  }
  return out;
}
