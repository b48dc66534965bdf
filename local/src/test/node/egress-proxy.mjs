// Issue 25, item 3: a sandbox's egressProxy through the official SDK against the local server.
// Driven by OfficialSdkEgressProxyTest; prints "step: result" lines.
import { Sandbox } from 'e2b'

const say = (step, value) => console.log(`${step}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
const failure = (e) => `${e?.constructor?.name} ${e?.message}`
const { PROXY_ADDRESS, PROXY_PASSWORD, ALLOWED_HOST } = process.env
const curl = async (sandbox) => (await sandbox.commands.run(`curl -s -m 15 http://${ALLOWED_HOST}/`)).stdout.trim()

const sandbox = await Sandbox.create({
  network: { allowOut: [ALLOWED_HOST], egressProxy: { address: PROXY_ADDRESS, username: 'sdk-user', password: PROXY_PASSWORD } },
})
try {
  say('tunneled', await curl(sandbox))
  say('info', (await sandbox.getInfo()).network?.egressProxy)
  say('info.raw.password', String(JSON.stringify(await (await fetch(`${process.env.E2B_API_URL}/sandboxes/${sandbox.sandboxId}`,
    { headers: { 'X-API-KEY': process.env.E2B_API_KEY } })).json()).includes(PROXY_PASSWORD)))
  await sandbox.updateNetwork({ allowOut: [ALLOWED_HOST] })
  say('cleared', String((await sandbox.getInfo()).network?.egressProxy))
  say('direct', await curl(sandbox))
  try {
    await sandbox.updateNetwork({ allowOut: [ALLOWED_HOST], egressProxy: { address: '127.0.0.1:1080' } })
    say('loopback', 'accepted')
  } catch (e) {
    say('loopback', failure(e))
  }
} finally {
  await sandbox.kill()
}
say('done', 'ok')
