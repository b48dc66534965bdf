// The official e2b SDK against a local server: medians of an echo round trip and of 50 MB of
// stdout, printed as one JSON line for bench.OfficialSdkBench, which measures raw Docker in the
// same run. E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY point the SDK at the server.
// With REPLAY=1 the SDK talks to envd through replay-proxy.mjs, a fake envd for the 50 MB command
// that streams it from memory in 32 KiB messages: the stdout figure is then the SDK's own ceiling.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { Sandbox } from 'e2b'

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const echoes = Number(process.env.ECHOES || 40)
const rounds = Number(process.env.ROUNDS || 5)
const bytes = Number(process.env.STDOUT_BYTES || 50_000_000)

const replay = process.env.REPLAY === '1'
let proxy = null
if (replay) {
  proxy = spawn(process.execPath, [new URL('replay-proxy.mjs', import.meta.url).pathname], {
    env: { ...process.env, REPLAY_TARGET: process.env.E2B_SANDBOX_URL, REPLAY_MARKER: '/dev/zero"', REPLAY_BYTES: String(bytes) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [first] = await once(proxy.stdout, 'data')
  process.env.E2B_SANDBOX_URL = `http://127.0.0.1:${String(first).trim()}`
}

const sbx = await Sandbox.create('base', { timeoutMs: 300_000 })
try {
  for (let i = 0; i < 5; i++) await sbx.commands.run('echo warm')
  const echo = []
  for (let i = 0; i < echoes; i++) {
    const t = performance.now()
    const r = await sbx.commands.run('echo hi')
    echo.push(performance.now() - t)
    if (r.stdout !== 'hi\n') throw new Error(`echo gave ${JSON.stringify(r.stdout)}`)
  }
  const stdout = []
  await sbx.commands.run(`head -c ${bytes} /dev/zero | wc -c`)
  const cpuBefore = process.cpuUsage()
  for (let i = 0; i < rounds; i++) {
    const t = performance.now()
    const r = await sbx.commands.run(`head -c ${bytes} /dev/zero`, { timeoutMs: 120_000 })
    const ms = performance.now() - t
    if (r.stdout.length !== bytes) throw new Error(`stdout gave ${r.stdout.length} bytes`)
    stdout.push(bytes / 1e6 / (ms / 1e3))
  }
  const cpu = process.cpuUsage(cpuBefore)
  // what the SDK's own process spends on the output: MB per second of its CPU time
  const stdoutCpuMBps = (bytes * rounds) / 1e6 / ((cpu.user + cpu.system) / 1e6)
  console.log(JSON.stringify({ echoMs: median(echo), stdoutMBps: median(stdout), stdoutCpuMBps }))
} finally {
  await sbx.kill()
  if (proxy) proxy.kill()
}
