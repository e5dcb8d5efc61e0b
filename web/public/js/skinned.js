// Characters as skinned meshes: three.js loads the original .glb the hello names, and the
// streamed model-space transforms drive its bones, matched by joint name. Model space is the
// glTF scene's space (the node transforms above the skeleton included), so a root joint's local
// transform is taken relative to its (static) non-joint ancestors. A pack may be in other units
// than its source file (`crowdblend import --scale`): the model is scaled by the factor that
// takes its rest pose onto the skeleton's (the hello's skeleton.rest), fitted at load.
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import * as SkeletonUtils from 'three/addons/utils/SkeletonUtils.js';

export class Skinned {
  constructor(scene, { limit = 256 } = {}) {
    this.scene = scene;
    this.limit = limit;
    this.template = null;
    this.instances = []; // { root, bones: [bone per stream joint or null] }
    this.map = null; // stream joint -> bone name
    this.parents = null;
    this.matched = 0;
    this.scale = 1; // stream units per model unit
    this.fitError = 0; // largest distance between the scaled model's and the stream's rest joints
    this._a = new THREE.Matrix4();
    this._b = new THREE.Matrix4();
    this._one = new THREE.Vector3(1, 1, 1);
    this._p = new THREE.Vector3();
    this._q = new THREE.Quaternion();
  }

  // Loads the model and matches its bones to the stream's joint names. Resolves to
  // { matched, joints, bones, scale, fitError } (how many stream joints found a bone of that
  // name; the units fit, see fitScale).
  async load(url, jointNames, parents, rest) {
    const gltf = await new GLTFLoader().loadAsync(url);
    this.template = gltf.scene;
    // Unnamed glTF nodes (CesiumMan's joints have no names) are matched as node_<glTF index>
    // and as nodes[<glTF index>], the name crowdblend import gives them (through assimp).
    const byName = new Map();
    for (const [object, assoc] of gltf.parser.associations) {
      if (object.isBone && !object.name && assoc && assoc.nodes !== undefined) {
        object.name = `node_${assoc.nodes}`;
        byName.set(`nodes[${assoc.nodes}]`, object);
      }
    }
    this.parents = parents;
    this.template.traverse((o) => { if (o.isBone) byName.set(o.name, o); });
    this.map = jointNames.map((n) => (byName.has(n) ? byName.get(n).name : null));
    this.matched = this.map.filter((n) => n !== null).length;
    this.fitScale(rest);
    return { matched: this.matched, joints: jointNames.length, bones: byName.size, scale: this.scale, fitError: this.fitError };
  }

  // The uniform scale s that best takes the matched bones' rest positions in the model's scene
  // space (g) onto the stream skeleton's (p), least squares: s = sum(p.g) / sum(g.g). Without
  // rest positions (an older server, a fixture), 1.
  fitScale(rest) {
    this.scale = 1;
    this.fitError = 0;
    if (!rest) return;
    this.template.updateMatrixWorld(true);
    const inverseScene = this.template.matrixWorld.clone().invert();
    const pairs = [];
    this.template.traverse((o) => {
      const j = o.isBone ? this.map.indexOf(o.name) : -1;
      if (j >= 0) pairs.push([new THREE.Vector3().setFromMatrixPosition(o.matrixWorld).applyMatrix4(inverseScene), new THREE.Vector3().fromArray(rest, 3 * j)]);
    });
    let pg = 0, gg = 0;
    for (const [g, p] of pairs) { pg += p.dot(g); gg += g.dot(g); }
    if (!(gg > 0 && pg > 0)) return;
    this.scale = pg / gg;
    for (const [g, p] of pairs) this.fitError = Math.max(this.fitError, g.clone().multiplyScalar(this.scale).distanceTo(p));
  }

  get active() {
    return this.template !== null && this.matched > 0;
  }

  _instance(c) {
    while (this.instances.length <= c) {
      const root = SkeletonUtils.clone(this.template);
      root.traverse((o) => { if (o.isMesh) o.frustumCulled = false; });
      root.updateMatrixWorld(true);
      const byName = new Map();
      root.traverse((o) => { if (o.isBone) byName.set(o.name, o); });
      const bones = this.map.map((n) => (n !== null ? byName.get(n) : null));
      // A root joint's static ancestors, relative to the character root.
      const inverseRoot = root.matrixWorld.clone().invert();
      const above = bones.map((b) => (b ? inverseRoot.clone().multiply(b.parent.matrixWorld).invert() : null));
      this.scene.add(root);
      this.instances.push({ root, bones, above });
    }
    return this.instances[c];
  }

  // f: a decoded frame with rotations (q16 or f32).
  update(f) {
    if (!this.active || !f.rot) return 0;
    const n = Math.min(f.header.characters, this.limit), J = f.header.joints;
    const A = this._a, B = this._b, P = this.parents, toModel = 1 / this.scale;
    for (let c = 0; c < n; c++) {
      const inst = this._instance(c);
      inst.root.visible = true;
      inst.root.position.fromArray(f.rootPos, 3 * c);
      inst.root.quaternion.fromArray(f.rootRot, 4 * c);
      inst.root.scale.setScalar(this.scale);
      for (let j = 0; j < J; j++) {
        const bone = inst.bones[j];
        if (!bone) continue;
        const o = c * J + j;
        B.compose(this._p.fromArray(f.pos, 3 * o).multiplyScalar(toModel), this._q.fromArray(f.rot, 4 * o), this._one);
        const pj = P[j];
        if (pj >= 0 && inst.bones[pj] === bone.parent) {
          const po = c * J + pj;
          A.compose(this._p.fromArray(f.pos, 3 * po).multiplyScalar(toModel), this._q.fromArray(f.rot, 4 * po), this._one).invert();
          A.multiply(B);
        } else {
          A.copy(inst.above[j]).multiply(B);
        }
        A.decompose(bone.position, bone.quaternion, bone.scale);
      }
    }
    for (let c = n; c < this.instances.length; c++) this.instances[c].root.visible = false;
    return n;
  }

  // World position of the bone driven by stream joint j of character c (what is drawn).
  drawnJoint(c, j) {
    const inst = this.instances[c];
    const bone = inst && inst.bones[j];
    if (!bone) return null;
    inst.root.updateMatrixWorld(true);
    return bone.getWorldPosition(new THREE.Vector3()).toArray();
  }
}
