// The viewer's side panel: the server's stage timings and counters, a live frame-time plot
// (uPlot), the selected character's state machines, weights and events, and the controls.
import uPlot from '/vendor/uplot/uPlot.esm.js';

const $ = (id) => document.getElementById(id);
const POINTS = 300;

function median(a) {
  if (!a.length) return NaN;
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
}

export class Panel {
  constructor({ send, state, select }) {
    this.send = send;
    this.state = state;
    this.selectFn = select;
    this.events = [];
    this.lastEvent = -1;
    this.renders = [];
    this.plotData = [[], [], []];
    this.plotX = 0;
    this.plot = new uPlot({
      width: 300, height: 150,
      scales: { x: { time: false } },
      axes: [{ show: false }, { size: 44, stroke: '#9aa6b8', grid: { stroke: '#2c3444' } }],
      legend: { show: false },
      series: [
        { label: 'frame' },
        { label: 'viewer ms', stroke: '#4fc3f7', width: 1 },
        { label: 'server step ms', stroke: '#ffa726', width: 1 },
      ],
    }, this.plotData, $('plot'));
    this._wireControls();
  }

  status(text) { $('status').textContent = text; }

  error(text) {
    this.state.errors.push(text);
    const li = document.createElement('li');
    li.textContent = `${new Date().toLocaleTimeString()} ${text}`;
    $('errors').prepend(li);
    while ($('errors').children.length > 8) $('errors').lastChild.remove();
  }

  onOk(m) {
    if (m.for === 'add' && m.ids) $('last-reply').textContent = `added ${m.added} (ids ${m.ids.slice(0, 4).join(', ')}...)`;
    else $('last-reply').textContent = `ok: ${m.for}`;
  }

  onHello(h) {
    $('graph-name').textContent = h.graph.name;
    const sel = $('graph');
    sel.replaceChildren(...h.graphs.map((g) => new Option(g, g, false, g === h.graph.name)));
    $('joints').textContent = `${h.skeleton.joints.length} joints`;
    $('encoding').value = h.encoding;
  }

  showEncoding(e) { $('encoding').value = e; }

  onFrameHeader(h, bytes) {
    this.lastStepMs = h.stepUs / 1000;
    $('frames').textContent = this.state.framesReceived;
    $('frame-bytes').textContent = `${(bytes / 1024).toFixed(0)} KiB (${h.encoding})`;
    $('sim-time').textContent = h.simTime.toFixed(2);
    $('paused').textContent = h.flags & 1 ? 'paused' : 'running';
  }

  onRender(dtMs) {
    const s = this.state;
    this.renders.push(dtMs);
    if (this.renders.length > 120) this.renders.shift();
    const d = this.plotData;
    d[0].push(this.plotX++);
    d[1].push(dtMs);
    d[2].push(this.lastStepMs ?? null);
    if (d[0].length > POINTS) d.forEach((a) => a.shift());
    if (this.plotX % 10 === 0) {
      this.plot.setData(d);
      const fps = 1000 / median(this.renders);
      $('fps').textContent = fps.toFixed(1);
      $('drawn').textContent = s.charactersDrawn;
      $('skipped').textContent = s.framesSkipped;
      $('latency').textContent = `${median(s.latencyMs).toFixed(1)} ms`;
      $('mode').textContent = s.mode;
    }
  }

  onStats(m) {
    $('characters').textContent = `${m.characters} / ${m.capacity}`;
    $('sim-hz').textContent = `${m.tick_hz.toFixed(1)} Hz (late ${m.late_ticks})`;
    $('step').textContent = `${m.step_ms.toFixed(2)} ms (max ${m.step_ms_max.toFixed(2)}), ${m.threads} threads`;
    $('clients').textContent = m.clients;
    const enc = m.encodings[m.you.encoding];
    $('encode').textContent = `${enc.encode_ns_per_character.toFixed(0)} ns/char encode, ${m.send_ns_per_character.toFixed(0)} ns/char send`;
    $('server-skipped').textContent = m.you.frames_skipped;
    $('time-scale-value').textContent = m.time_scale;
    const rows = m.stages.map((st) => `<tr><td>${st.name}</td><td>${st.ms.toFixed(3)}</td></tr>`);
    $('stages').innerHTML = `<tr><th>stage</th><th>ms/frame</th></tr>${rows.join('')}`;
  }

  onSelect(id) {
    $('selection').hidden = !id;
    $('sel-id').textContent = id || '';
    this.events = [];
    this.lastEvent = -1;
    $('sel-events').replaceChildren();
  }

  onDetails(d) {
    const machines = d.machines.map((m, i) => {
      const head = `<div class="machine" data-machine="${i}">machine ${i}: <b>${m.state}</b>`;
      if (!m.transition) return `${head}</div>`;
      // The server's exact transition (cb_crowd_query_transition): progress = elapsed / duration.
      const t = m.transition;
      return `${head} -> ${m.next} <small>${t.blend}</small>` +
        `<div class="transition"><progress max="1" value="${t.progress}"></progress>` +
        ` ${t.elapsed_s.toFixed(3)} / ${t.duration_s.toFixed(3)} s</div></div>`;
    });
    $('sel-machines').innerHTML = machines.join('');
    const w = [...d.weights].sort((a, b) => b[1] - a[1]);
    $('sel-weights').innerHTML = w.map(([n, v]) =>
      `<div class="bar"><span>${n}</span><i style="width:${(100 * v).toFixed(1)}%"></i><em>${v.toFixed(2)}</em></div>`).join('');
    const p = d.params;
    const speed = Math.hypot(p.vx ?? p.blend_0 ?? 0, p.vy ?? p.blend_1 ?? 0);
    $('sel-speed').textContent = `${speed.toFixed(2)} m/s`;
    $('sel-joint').textContent = `${d.joint.name} at ${d.joint.world.map((x) => x.toFixed(2)).join(', ')}`;
    for (const e of d.events) {
      if (e.n <= this.lastEvent) continue;
      this.lastEvent = e.n;
      const li = document.createElement('li');
      li.textContent = `frame ${e.frame}: ${e.marker} (${e.clip}, w ${e.weight.toFixed(2)})`;
      $('sel-events').prepend(li);
      while ($('sel-events').children.length > 12) $('sel-events').lastChild.remove();
    }
  }

  _wireControls() {
    const send = (m) => this.send(m);
    const steer = () => {
      const id = this.state.selectedId;
      if (!id) return;
      send({ type: 'steer', speed: Number($('speed').value), direction: Number($('direction').value), characters: [id] });
      $('speed-value').textContent = $('speed').value;
      $('direction-value').textContent = $('direction').value;
    };
    $('speed').addEventListener('input', steer);
    $('direction').addEventListener('input', steer);
    $('release').onclick = () => this.state.selectedId && send({ type: 'steer', speed: null, characters: [this.state.selectedId] });
    $('deselect').onclick = () => this.selectFn(0);
    $('all-apply').onclick = () => send({ type: 'steer', speed: Number($('all-speed').value), direction: Number($('all-direction').value) });
    $('all-release').onclick = () => send({ type: 'steer', speed: null });
    $('all-speed').addEventListener('input', () => { $('all-speed-value').textContent = $('all-speed').value; });
    $('all-direction').addEventListener('input', () => { $('all-direction-value').textContent = $('all-direction').value; });
    $('pause').onclick = () => send({ type: 'pause' });
    $('resume').onclick = () => send({ type: 'resume' });
    $('step-once').onclick = () => send({ type: 'step', frames: 1 });
    $('time-scale').addEventListener('change', () => send({ type: 'time_scale', value: Number($('time-scale').value) }));
    $('add').onclick = () => send({ type: 'add', count: Number($('add-count').value) });
    $('remove').onclick = () => {
      const id = this.state.selectedId;
      if (id) { this.selectFn(0); send({ type: 'remove', characters: [id] }); }
    };
    $('graph').addEventListener('change', () => send({ type: 'switch_graph', graph: $('graph').value }));
    $('encoding').addEventListener('change', () => send({ type: 'encoding', encoding: $('encoding').value }));
    $('raw-send').onclick = () => send($('raw').value);
  }
}
