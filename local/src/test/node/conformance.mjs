// Drives the official e2b SDK against an E2B-compatible server named by E2B_API_URL,
// E2B_SANDBOX_URL and E2B_API_KEY. Prints one line per step, "step: result", which the Java
// test asserts on; any unexpected failure prints "FAILED: ..." and exits non-zero.
import { Sandbox, CommandExitError, SandboxNotFoundError, NotFoundError } from 'e2b'

const say = (step, value) => console.log(`${step}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)

async function main() {
  const sbx = await Sandbox.create('base', {
    metadata: { suite: 'conformance', who: 'node sdk' },
    envs: { CONF_VAR: 'from-create' },
    timeoutMs: 120_000,
  })
  say('created', sbx.sandboxId.length > 0 ? 'yes' : 'no')

  const hello = await sbx.commands.run('echo "hello $CONF_VAR" && whoami')
  say('run.stdout', hello.stdout.trim().split('\n').join('|'))
  say('run.exitCode', hello.exitCode)

  try {
    await sbx.commands.run('echo out; echo err >&2; exit 7')
    say('nonzero', 'no error raised')
  } catch (e) {
    if (e instanceof CommandExitError) {
      say('nonzero', `CommandExitError exitCode=${e.exitCode} stdout=${e.stdout.trim()} stderr=${e.stderr.trim()}`)
    } else {
      say('nonzero', `unexpected ${e.constructor.name}: ${e.message}`)
    }
  }

  const bg = await sbx.commands.run('sleep 1; echo background done', { background: true })
  say('background.pid', bg.pid > 0 ? 'positive' : String(bg.pid))
  const waited = await bg.wait()
  say('background.wait', `${waited.exitCode} ${waited.stdout.trim()}`)

  const info = await sbx.files.write('/home/user/conf/data.txt', 'written by the node sdk')
  say('files.write', info.path)
  say('files.read', await sbx.files.read('/home/user/conf/data.txt'))
  const entries = await sbx.files.list('/home/user/conf')
  say('files.list', entries.map((e) => `${e.name}:${e.type}`).join(','))
  say('files.exists', await sbx.files.exists('/home/user/conf/missing.txt'))

  const paginator = Sandbox.list({ query: { metadata: { suite: 'conformance' } } })
  const listed = await paginator.nextItems()
  say('list', listed.some((s) => s.sandboxId === sbx.sandboxId) ? 'found' : `missing among ${listed.length}`)
  say('list.metadata', listed.find((s) => s.sandboxId === sbx.sandboxId)?.metadata?.who ?? 'none')

  const got = await Sandbox.getInfo(sbx.sandboxId)
  say('getInfo', `${got.sandboxId === sbx.sandboxId} ${got.templateId} ${got.state} ${got.metadata.suite}`)

  const again = await Sandbox.connect(sbx.sandboxId)
  say('connect', (await again.commands.run('echo $CONF_VAR')).stdout.trim())

  say('kill', await sbx.kill())
  say('kill.again', await Sandbox.kill(sbx.sandboxId))

  for (const [step, call] of [
    ['missing.connect', () => Sandbox.connect('doesnotexist00000000')],
    ['missing.getInfo', () => Sandbox.getInfo('doesnotexist00000000')],
  ]) {
    try {
      await call()
      say(step, 'no error raised')
    } catch (e) {
      say(step, e instanceof SandboxNotFoundError || e instanceof NotFoundError ? e.constructor.name : `unexpected ${e.constructor.name}: ${e.message}`)
    }
  }
  say('done', 'ok')
}

main().catch((e) => {
  console.log(`FAILED: ${e && e.constructor ? e.constructor.name : ''} ${e && e.stack ? e.stack : e}`)
  process.exit(1)
})
