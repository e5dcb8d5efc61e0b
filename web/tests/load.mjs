// Load test of `crowdblend serve` (docs/serve.md, "Tests"): 8 WebSocket clients for 10 s on a
// 1,000-character crowd. Six read as fast as they can, two stall their sockets for a second at
// a time. Checks: no crash, memory bounded, the simulation keeps 60 Hz, and the drop policy:
// stalled clients skip frames, never receive an old one, and catch up with the newest.
// Prints TAP. Usage: node load.mjs CROWDBLEND_BINARY [seconds]
import WebSocket from 'ws';
import { readFileSync } from 'node:fs';
import { ok, done, sleep, serve, rssKb } from './harness.mjs';

const [binary, secondsArg] = process.argv.slice(2);
const SECONDS = Number(secondsArg ?? 10);
const CLIENTS = 8, SLOW = 2, CHARACTERS = 1000;

// Load from other processes (this 2-core machine is shared): 60 Hz is only a fair demand of a
// machine that is not already busy.
const loadBefore = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
const server = await serve(binary, ['--characters', String(CHARACTERS), '--seconds', String(SECONDS + 8)]);
const { port, pid } = server;

function client(k) {
  const c = { k, slow: k >= CLIENTS - SLOW, frames: [], stats: [], errors: 0, backwards: 0, lastFrame: 0, bytes: 0, resumedAt: [] };
  c.ws = new WebSocket(`ws://127.0.0.1:${port}/`, 'crowdblend');
  c.ws.on('message', (data, binary) => {
    if (binary) {
      const frame = Number(data.readBigUInt64LE(8));
      if (frame <= c.lastFrame) c.backwards++;
      c.lastFrame = frame;
      c.frames.push({ frame, at: Date.now() });
      c.bytes += data.length;
    } else {
      const m = JSON.parse(data.toString());
      if (m.type === 'stats') c.stats.push(m);
      if (m.type === 'error') c.errors++;
    }
  });
  c.open = new Promise((r) => c.ws.on('open', r));
  return c;
}

const clients = Array.from({ length: CLIENTS }, (_, k) => client(k));
await Promise.all(clients.map((c) => c.open));
ok(true, `${CLIENTS} clients connected`);

const newestFast = () => Math.max(...clients.filter((x) => !x.slow).map((x) => x.lastFrame));

// The slow clients: stall the socket (nothing read, TCP fills up) for 1 s of every 1.5 s.
const stalls = clients.filter((c) => c.slow).map((c) => (async () => {
  const t0 = Date.now();
  while (Date.now() - t0 < SECONDS * 1000 - 1500) {
    const pausedAt = newestFast();
    c.ws._socket.pause();
    await sleep(1000);
    c.resumedAt.push({ at: Date.now(), newest: newestFast(), made: newestFast() - pausedAt });
    c.ws._socket.resume();
    await sleep(500);
  }
})());

const rss = [];
const t0 = Date.now();
while (Date.now() - t0 < SECONDS * 1000) {
  rss.push({ t: (Date.now() - t0) / 1000, kb: rssKb(pid) });
  await sleep(250);
}
await Promise.all(stalls);
for (const c of clients) c.ws.close();
await sleep(500);
server.proc.kill('SIGTERM');
const end = await server.summary();

// ---- checks --------------------------------------------------------------------------------
ok(end.code === 0 && end.summary !== null, 'the server ran through and exited cleanly', JSON.stringify(end.summary));
const s = end.summary ?? {};
const stats = clients[0].stats.slice(2); // after start-up
const hz = stats.map((m) => m.tick_hz).sort((a, b) => a - b);
const medianHz = hz[hz.length >> 1];
const hzText = `median ${medianHz?.toFixed(2)} Hz, min ${hz[0]?.toFixed(2)}, late ticks ${s.late_ticks} of ${s.ticks}, load average ${loadBefore} before`;
if (loadBefore <= 2.5) {
  ok(medianHz >= 57, 'the simulation keeps 60 Hz with 8 clients (median of 1-s windows)', hzText);
} else {
  ok(true, 'the simulation keeps 60 Hz with 8 clients # SKIP machine already loaded by other processes', hzText);
}
// Whatever the load, clients must not be able to stall the simulation (it never waits on them).
ok(medianHz >= 20, 'the simulation is never held back to a slow client\'s pace (median >= 20 Hz on any machine)', hzText);
const stepMs = stats.map((m) => m.step_ms).sort((a, b) => a - b);
ok(true, 'crowd step time', `median ${stepMs[stepMs.length >> 1]?.toFixed(2)} ms for ${CHARACTERS} characters`);

const early = rss.filter((r) => r.t >= 2 && r.t < 4).map((r) => r.kb);
const late = rss.filter((r) => r.t >= SECONDS - 2).map((r) => r.kb);
const maxKb = Math.max(...rss.map((r) => r.kb));
const frameKb = (64 + CHARACTERS * (28 + 12 * 64)) / 1024;
// Bound: the crowd and boards (~30 MB here) plus at most one unsent frame per client held by
// libwebsockets, with room to spare: 64 MB + 2 frames per client.
const boundKb = 64 * 1024 + 2 * CLIENTS * frameKb;
ok(maxKb < boundKb, 'memory stays bounded', `max RSS ${(maxKb / 1024).toFixed(1)} MB, bound ${(boundKb / 1024).toFixed(1)} MB`);
const growth = Math.max(...late) - Math.max(...early);
ok(growth < 8 * frameKb, 'no growth from seconds 2-4 to the last 2', `${(growth / 1024).toFixed(2)} MB`);

const fast = clients.filter((c) => !c.slow), slow = clients.filter((c) => c.slow);
const rate = (c) => c.frames.length / SECONDS;
ok(fast.every((c) => c.backwards === 0) && slow.every((c) => c.backwards === 0), 'no client ever receives an older frame after a newer one');
ok(fast.every((c) => rate(c) >= 5), 'fast clients keep receiving', fast.map((c) => rate(c).toFixed(1)).join(', ') + ' frames/s');
ok(slow.every((c) => rate(c) < Math.min(...fast.map(rate))), 'stalled clients receive fewer frames', slow.map((c) => rate(c).toFixed(1)).join(', ') + ' frames/s');
ok(s.frames_skipped > 0, 'the server skips frames for clients that cannot keep up', `${s.frames_skipped} skipped, ${s.frames_sent} sent`);
// After a 1-s stall (about 60 frames made meanwhile) a slow client first receives the stale
// frames that were already on their way: those in its kernel receive buffer, the server's kernel
// send buffer and the one frame libwebsockets holds. Then it jumps to the newest. A queue would
// deliver every frame of the stall instead. Loopback TCP buffers grow up to the kernel's
// tcp_rmem/tcp_wmem maxima (32 MB + 4 MB on one machine here, about 45 frames of 0.8 MB), so the
// bound is read from this machine, not fixed.
const frameBytes = frameKb * 1024;
const maxOf = (file) => Number(readFileSync(file, 'utf8').trim().split(/\s+/).pop());
const inFlight = Math.ceil((maxOf('/proc/sys/net/ipv4/tcp_rmem') + maxOf('/proc/sys/net/ipv4/tcp_wmem')) / frameBytes) + 2;
// Catching up: after a stall the client reads for 0.5 s, then stalls again; the frames already
// in flight drain at whatever rate this machine gives the client (a loaded CI machine took more
// than the 0.5 s), so the newer frame may come in a later reading window. No time bound: every
// stall but each client's last (the test may end before it drains) must be followed, at some
// point, by a frame newer than any made before it resumed; the delays are reported.
let worstStale = 0, stallCount = 0, caughtUp = 0, checked = 0, madeMin = Infinity;
const delays = [];
for (const c of slow) {
  c.resumedAt.forEach((r, i) => {
    const after = c.frames.filter((f) => f.at >= r.at && f.at < r.at + 1000);
    worstStale = Math.max(worstStale, after.filter((f) => f.frame <= r.newest).length);
    madeMin = Math.min(madeMin, r.made);
    stallCount++;
    if (i === c.resumedAt.length - 1) return;
    checked++;
    const first = c.frames.find((f) => f.at >= r.at && f.frame > r.newest);
    if (first) {
      caughtUp++;
      delays.push(first.at - r.at);
    }
  });
}
delays.sort((a, b) => a - b);
const staleText = `at most ${worstStale} stale frames after a 1-s stall (at least ${madeMin} made, ` +
  `at most ${inFlight} can be in flight in this machine's buffers), ${stallCount} stalls`;
if (inFlight < madeMin) {
  ok(stallCount > 0 && worstStale <= inFlight && worstStale < madeMin,
    'after a stall a slow client gets only the frames already in flight, not the backlog', staleText);
} else {
  ok(true, 'after a stall a slow client does not get the backlog # SKIP the kernel buffers here hold a whole stall', staleText);
}
ok(checked > 0 && caughtUp === checked, 'after every stall the slow client catches up: it receives a frame newer than any made before it resumed',
  `${caughtUp} of ${checked} stalls (each client's last not checked); delay median ` +
  `${delays.length ? delays[delays.length >> 1] : '-'} ms, max ${delays.length ? delays[delays.length - 1] : '-'} ms`);
ok(clients.every((c) => c.errors === 0), 'no client got an error');
const mbps = clients.reduce((a, c) => a + c.bytes, 0) / SECONDS / 1e6;
ok(true, 'throughput', `${mbps.toFixed(1)} MB/s to ${CLIENTS} clients, send cost ${s.send_ns_per_character} ns/character`);
done();
