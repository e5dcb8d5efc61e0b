// Helpers shared by the browser, load and fixture tests: start `crowdblend serve` on an
// ephemeral loopback port, TAP output, polling.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

let count = 0, failed = 0;

export function ok(cond, name, detail = '') {
  count++;
  if (!cond) failed++;
  console.log(`${cond ? 'ok' : 'not ok'} ${count} - ${name}${detail ? ` # ${detail}` : ''}`);
  return cond;
}

export function done() {
  console.log(`1..${count}`);
  process.exitCode = failed ? 1 : 0;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function until(fn, timeoutMs, what) {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

// Starts the server; resolves to { port, proc, summary() } once it listens.
export function serve(binary, args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(binary, ['serve', '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    let summaryResolve;
    const summary = new Promise((r) => { summaryResolve = r; });
    proc.stdout.on('data', (d) => {
      out += d.toString();
      const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m && !proc.port) {
        proc.port = Number(m[1]);
        resolve({ port: proc.port, proc, summary: () => summary, pid: proc.pid });
      }
    });
    proc.on('exit', (code, signal) => {
      const line = out.split('\n').find((l) => l.startsWith('{"summary"'));
      summaryResolve({ code, signal, summary: line ? JSON.parse(line) : null, out });
      if (!proc.port) reject(new Error(`crowdblend serve exited (${code}) before listening: ${out}`));
    });
  });
}

export function rssKb(pid) {
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}
