// Characters as bones: one instanced tapered prism ("capsule" in the code) per bone
// (parent -> joint) for crowds up to `capsuleLimit` characters, and one line segment per bone beyond that (a single draw call
// either way). The drawn geometry is also what the tests read back (drawnJoint).
import * as THREE from 'three';

const Y = new THREE.Vector3(0, 1, 0);

export class Bones {
  constructor(scene, { capsuleLimit = 2000 } = {}) {
    this.scene = scene;
    this.capsuleLimit = capsuleLimit;
    this.mode = 'capsules';
    this.parents = null;
    this.bones = []; // joint indices that have a parent
    this.capacity = 0;
    this.count = 0;
    this.mesh = null;
    this.lines = null;
    this.highlight = -1;
    this._m = new THREE.Matrix4();
    this._q = new THREE.Quaternion();
    this._d = new THREE.Vector3();
    this._s = new THREE.Vector3();
    this._p = new THREE.Vector3();
    this.material = new THREE.MeshStandardMaterial({ color: 0xb8c4d6, roughness: 0.6 });
    this.lineMaterial = new THREE.LineBasicMaterial({ vertexColors: true });
  }

  setSkeleton(parents) {
    this.parents = parents;
    this.bones = [];
    for (let j = 0; j < parents.length; j++) if (parents[j] >= 0) this.bones.push(j);
    this._dispose();
  }

  _dispose() {
    for (const o of [this.mesh, this.lines]) {
      if (o) { this.scene.remove(o); o.geometry.dispose(); }
    }
    this.mesh = this.lines = null;
    this.capacity = 0;
  }

  _ensure(characters) {
    const mode = characters <= this.capsuleLimit ? 'capsules' : 'lines';
    if (characters <= this.capacity && mode === this.mode && (this.mesh || this.lines)) return;
    this._dispose();
    this.mode = mode;
    this.capacity = Math.max(64, Math.ceil(characters * 1.25));
    const instances = this.capacity * this.bones.length;
    if (mode === 'capsules') {
      // A unit-length tapered four-sided bone along +Y centred on the origin, scaled per bone:
      // 8 triangles, because a software renderer pays for each one (a capsule is 5x more).
      const g = new THREE.CylinderGeometry(0.018, 0.03, 1, 4, 1, true);
      this.mesh = new THREE.InstancedMesh(g, this.material, instances);
      this.mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
      this.mesh.frustumCulled = false;
      this.mesh.setColorAt(0, new THREE.Color(0xffffff));
      this.scene.add(this.mesh);
    } else {
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(instances * 6), 3).setUsage(THREE.DynamicDrawUsage));
      g.setAttribute('color', new THREE.BufferAttribute(new Float32Array(instances * 6).fill(0.8), 3));
      this.lines = new THREE.LineSegments(g, this.lineMaterial);
      this.lines.frustumCulled = false;
      this.scene.add(this.lines);
    }
  }

  // world: joint positions, 3 floats per joint per character (characters in frame order).
  update(world, characters, joints, selected = -1) {
    this._ensure(characters);
    this.count = characters;
    const B = this.bones.length, P = this.parents;
    if (this.mode === 'capsules') {
      const arr = this.mesh.instanceMatrix.array;
      const m = this._m, q = this._q, d = this._d, s = this._s, p = this._p;
      for (let c = 0; c < characters; c++) {
        const base = c * joints * 3;
        for (let b = 0; b < B; b++) {
          const j = this.bones[b], a = base + 3 * P[j], e = base + 3 * j;
          d.set(world[e] - world[a], world[e + 1] - world[a + 1], world[e + 2] - world[a + 2]);
          const len = d.length();
          if (len > 1e-6) q.setFromUnitVectors(Y, d.multiplyScalar(1 / len)); else q.identity();
          p.set(0.5 * (world[a] + world[e]), 0.5 * (world[a + 1] + world[e + 1]), 0.5 * (world[a + 2] + world[e + 2]));
          s.set(1, len, 1);
          m.compose(p, q, s);
          m.toArray(arr, 16 * (c * B + b));
        }
      }
      this.mesh.count = characters * B;
      this.mesh.instanceMatrix.needsUpdate = true;
      this._colour(selected, characters, B);
    } else {
      const pos = this.lines.geometry.attributes.position.array;
      for (let c = 0; c < characters; c++) {
        const base = c * joints * 3;
        for (let b = 0; b < B; b++) {
          const j = this.bones[b], a = base + 3 * P[j], e = base + 3 * j, o = 6 * (c * B + b);
          pos[o] = world[a]; pos[o + 1] = world[a + 1]; pos[o + 2] = world[a + 2];
          pos[o + 3] = world[e]; pos[o + 4] = world[e + 1]; pos[o + 5] = world[e + 2];
        }
      }
      this.lines.geometry.setDrawRange(0, characters * B * 2);
      this.lines.geometry.attributes.position.needsUpdate = true;
      this._colourLines(selected, characters, B);
    }
  }

  _colour(selected, characters, B) {
    if (selected === this.highlight && !this._colourDirty) return;
    const white = new THREE.Color(0xffffff), gold = new THREE.Color(0xffa726);
    if (this.highlight >= 0 && this.highlight < characters) {
      for (let b = 0; b < B; b++) this.mesh.setColorAt(this.highlight * B + b, white);
    }
    if (selected >= 0 && selected < characters) {
      for (let b = 0; b < B; b++) this.mesh.setColorAt(selected * B + b, gold);
    }
    this.highlight = selected;
    this.mesh.instanceColor.needsUpdate = true;
  }

  _colourLines(selected, characters, B) {
    if (selected === this.highlight) return;
    const col = this.lines.geometry.attributes.color.array;
    const paint = (c, r, g, b) => { for (let k = 6 * c * B; k < 6 * (c + 1) * B; k += 3) { col[k] = r; col[k + 1] = g; col[k + 2] = b; } };
    if (this.highlight >= 0 && this.highlight < characters) paint(this.highlight, 0.8, 0.8, 0.8);
    if (selected >= 0 && selected < characters) paint(selected, 1, 0.65, 0.15);
    this.highlight = selected;
    this.lines.geometry.attributes.color.needsUpdate = true;
  }

  // Where joint j of character c is drawn: read back from the instance matrix (the capsule's
  // +Y end) or the line's end vertex. Null for a root joint (no bone ends there).
  drawnJoint(c, j) {
    const b = this.bones.indexOf(j);
    if (b < 0 || c >= this.count) return null;
    const B = this.bones.length;
    if (this.mode === 'capsules') {
      this._m.fromArray(this.mesh.instanceMatrix.array, 16 * (c * B + b));
      return this._p.set(0, 0.5, 0).applyMatrix4(this._m).toArray();
    }
    const o = 6 * (c * B + b) + 3, a = this.lines.geometry.attributes.position.array;
    return [a[o], a[o + 1], a[o + 2]];
  }

  setVisible(v) {
    if (this.mesh) this.mesh.visible = v;
    if (this.lines) this.lines.visible = v;
  }
}
