// The official e2b SDK against a local server: medians of an echo round trip and of 50 MB of
// stdout, printed as one JSON line for bench.OfficialSdkBench, which measures raw Docker in the
// same run. E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY point the SDK at the server.
// The SDK's own ceiling is taken in the same process, its rounds interleaved with ours: a second
// handle on the same sandbox talks to envd through replay-proxy.mjs, a fake envd for the 50 MB
// command that streams it from memory in 32 KiB messages.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import net from 'node:net'
import { Sandbox } from 'e2b'

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const echoes = Number(process.env.ECHOES || 40)
// rounds of the three echo paths before any is counted: the SDK's and Node's JIT, the connections,
// and the server's own JIT, which compiles its exec path over the first few hundred calls, as a
// server that has run for a while has (bench.ExecBench warms the Java client up the same way)
const warmups = Number(process.env.WARMUPS || 150)
const rounds = Number(process.env.ROUNDS || 7)
const bytes = Number(process.env.STDOUT_BYTES || 50_000_000)

const proxy = spawn(process.execPath, [new URL('replay-proxy.mjs', import.meta.url).pathname], {
  env: { ...process.env, REPLAY_TARGET: process.env.E2B_SANDBOX_URL, REPLAY_MARKER: '/dev/zero"', REPLAY_BYTES: String(bytes) },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const [first] = await once(proxy.stdout, 'data')
const replayUrl = `http://127.0.0.1:${String(first).trim()}`

// The same process.Process/Start request as the SDK's commands.run('echo hi') makes, as Connect
// JSON: the command in a login shell, the body one enveloped message.
function startRequest() {
  const json = Buffer.from(JSON.stringify({ process: { cmd: '/bin/bash', args: ['-l', '-c', 'echo hi'], envs: {} }, stdin: false }))
  const envelope = Buffer.alloc(5 + json.length)
  envelope.writeUInt8(0, 0)
  envelope.writeUInt32BE(json.length, 1)
  json.copy(envelope, 5)
  const headers = {
    'Content-Type': 'application/connect+json', 'Connect-Protocol-Version': '1', 'Connect-Timeout-Ms': '60000',
    'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': sbx.envdAccessToken,
  }
  return { url: new URL('/process.Process/Start', sbx.envdApiUrl), envelope, headers }
}

// "aGkK" is base64 of "hi\n"; the end event closes the process's stream
const echoed = (text) => text.includes('"aGkK"') && text.includes('"end"')

// Node's own fetch (undici) with that request, the body read whole and not parsed: what any
// client in Node pays before the SDK's layers
async function fetchEcho(req) {
  const r = await fetch(req.url, { method: 'POST', headers: req.headers, body: req.envelope })
  const text = Buffer.from(await r.arrayBuffer()).toString('latin1')
  if (r.status !== 200 || !echoed(text)) throw new Error(`fetch echo gave ${r.status} ${text}`)
}

// A chunked answer's body (one message may come in several chunks)
function dechunked(answer) {
  let at = answer.indexOf('\r\n\r\n') + 4
  let body = ''
  for (;;) {
    const eol = answer.indexOf('\r\n', at)
    const size = parseInt(answer.slice(at, eol), 16)
    if (!(size > 0)) return body
    body += answer.slice(eol + 2, eol + 2 + size)
    at = eol + 2 + size + 2
  }
}

// The request as prebuilt bytes on a kept-alive socket, the answer read to its last chunk: the
// server's time as Node sees it, with no HTTP client at all
function socketClient(req) {
  const head = `POST ${req.url.pathname} HTTP/1.1\r\nHost: ${req.url.host}\r\n`
    + Object.entries(req.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')
    + `Content-Length: ${req.envelope.length}\r\n\r\n`
  const bytes = Buffer.concat([Buffer.from(head, 'latin1'), req.envelope])
  const socket = net.connect(Number(req.url.port), req.url.hostname)
  socket.setNoDelay(true)
  let pending = null
  let got = ''
  socket.on('data', (d) => {
    got += d.toString('latin1')
    if (pending && got.endsWith('\r\n0\r\n\r\n')) {
      const done = pending
      pending = null
      const text = got
      got = ''
      if (!text.startsWith('HTTP/1.1 200') || !echoed(dechunked(text))) done.reject(new Error(`socket echo gave ${text}`))
      else done.resolve()
    }
  })
  return {
    call: () => new Promise((resolve, reject) => { pending = { resolve, reject }; socket.write(bytes) }),
    close: () => socket.destroy(),
  }
}

const sbx = await Sandbox.create('base', { timeoutMs: 300_000 })
try {
  const req = startRequest()
  const raw = socketClient(req)
  const ops = [
    async () => {
      const r = await sbx.commands.run('echo hi')
      if (r.stdout !== 'hi\n') throw new Error(`echo gave ${JSON.stringify(r.stdout)}`)
    },
    () => fetchEcho(req),
    () => raw.call(),
  ]
  const times = ops.map(() => [])
  // warmed up first, then the three interleaved, the order turned each round
  for (let i = 0; i < warmups; i++) for (const op of ops) await op()
  for (let i = 0; i < echoes; i++) {
    for (let j = 0; j < ops.length; j++) {
      const k = (i + j) % ops.length
      const t = performance.now()
      await ops[k]()
      times[k].push(performance.now() - t)
    }
  }
  raw.close()
  const [echo, fetchMs, socketMs] = times
  // the same sandbox through the fake envd: the SDK's ceiling, its rounds interleaved with ours
  const replayed = await Sandbox.connect(sbx.sandboxId, { sandboxUrl: replayUrl })
  const sides = [sbx, replayed].map((handle) => ({ handle, mbps: [], cpuMicros: 0 }))
  const stdoutOnce = async (side) => {
    const cpuBefore = process.cpuUsage()
    const t = performance.now()
    const r = await side.handle.commands.run(`head -c ${bytes} /dev/zero`, { timeoutMs: 120_000 })
    const ms = performance.now() - t
    const cpu = process.cpuUsage(cpuBefore)
    if (r.stdout.length !== bytes) throw new Error(`stdout gave ${r.stdout.length} bytes`)
    side.mbps.push(bytes / 1e6 / (ms / 1e3))
    side.cpuMicros += cpu.user + cpu.system
  }
  for (const side of sides) {
    await stdoutOnce(side) // warm-up of each path, not counted
    side.mbps.length = 0
    side.cpuMicros = 0
  }
  for (let i = 0; i < rounds; i++) {
    for (let j = 0; j < sides.length; j++) await stdoutOnce(sides[(i + j) % sides.length])
  }
  // what the SDK's own process spends on the output: MB per second of its CPU time
  const cpuMBps = (side) => (bytes * rounds) / 1e6 / (side.cpuMicros / 1e6)
  const [ours, ceiling] = sides
  console.log(JSON.stringify({ echoMs: median(echo), fetchEchoMs: median(fetchMs), socketEchoMs: median(socketMs),
    stdoutMBps: median(ours.mbps), stdoutCpuMBps: cpuMBps(ours),
    ceilingMBps: median(ceiling.mbps), ceilingCpuMBps: cpuMBps(ceiling) }))
} finally {
  await sbx.kill()
  proxy.kill()
}
