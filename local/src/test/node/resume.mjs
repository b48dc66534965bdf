// Drives the official e2b SDK against a local server: a sandbox created with
// lifecycle { onTimeout: 'pause', autoResume: true } serves a file on port 8000; once paused, a
// request to the host getHost(8000) names (sent to the server's sandbox address, with that Host
// header, as wildcard DNS would send it) resumes it and is answered. One without autoResume
// answers E2B's 502 and stays paused. Prints "step: value" lines for the Java test.
import { Sandbox } from 'e2b'
import http from 'node:http'

const say = (step, value) => console.log(`${step}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
const at = new URL(process.env.E2B_SANDBOX_URL)

function get(host, path) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: at.hostname, port: at.port, path, method: 'GET', headers: { host } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d) => { body += d })
      res.on('end', () => resolve({ status: res.statusCode, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

const sbx = await Sandbox.create({ timeoutMs: 180_000, lifecycle: { onTimeout: 'pause', autoResume: true } })
const plain = await Sandbox.create({ timeoutMs: 180_000, lifecycle: { onTimeout: 'pause' } })
try {
  const mine = (s) => s.split(sbx.sandboxId).join('<id>')
  say('lifecycle', (await Sandbox.getInfo(sbx.sandboxId)).lifecycle)
  await sbx.files.write('/home/user/site/hello.txt', 'hello via getHost')
  await sbx.commands.run('cd /home/user/site && python3 -m http.server 8000 --bind 127.0.0.1', { background: true })
  let up = 0
  for (let i = 0; i < 150 && up !== 200; i++) {
    up = (await get(sbx.getHost(8000), '/hello.txt').catch(() => ({ status: 0 }))).status
    if (up !== 200) await new Promise((r) => setTimeout(r, 200))
  }
  say('up', String(up))
  say('host', mine(sbx.getHost(8000)))
  await sbx.pause()
  say('paused', (await Sandbox.getInfo(sbx.sandboxId)).state)
  const woke = await get(sbx.getHost(8000), '/hello.txt')
  say('woke', `${woke.status} ${woke.body}`)
  say('after', (await Sandbox.getInfo(sbx.sandboxId)).state)
  say('command', (await sbx.commands.run('echo still here')).stdout.trim())

  await plain.pause()
  const refused = await get(plain.getHost(8000), '/')
  say('plain', `${refused.status} ${JSON.parse(refused.body).code}`)
  say('plain.state', (await Sandbox.getInfo(plain.sandboxId)).state)
  say('done', 'ok')
} finally {
  await sbx.kill()
  await plain.kill()
}
