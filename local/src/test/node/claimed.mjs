// Drives the official e2b SDK against a local server that has a warm pool member ready: the
// first create claims it, the second (with a volume mount, which always starts cold) does not.
// Prints "<warm|cold>.<field>: value" for what the SDK sees of each, with the sandbox's own id
// written as <id>, so the Java test can compare them field by field. The sandboxes are left
// running for the test to check where each came from, and to kill.
import { Sandbox, Volume } from 'e2b'

const say = (step, value) => console.log(`${step}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
const opts = { envs: { GREETING: 'hi there' }, metadata: { owner: 'claimed-test', n: '1' }, timeoutMs: 180_000 }

async function describe(tag, sbx) {
  const id = sbx.sandboxId
  const mine = (s) => s.split(id).join('<id>')
  say(`${tag}.id`, id)
  const who = await sbx.commands.run(
    'echo "$(hostname)|$(cat /etc/hostname)|$(grep -c "$(hostname)" /etc/hosts)|$(whoami)|$(id -u)|$(id -g)|$(pwd)|$HOME|${GREETING-unset}"')
  say(`${tag}.who`, mine(who.stdout.trim()))
  const asRoot = await sbx.commands.run('whoami; sudo -n true 2>&1 && echo sudo-ok', { user: 'root' })
  say(`${tag}.root`, asRoot.stdout.trim().split('\n').join('|'))
  const sudo = await sbx.commands.run('sudo -n whoami 2>&1')
  say(`${tag}.sudo`, sudo.stdout.trim())
  const env = await sbx.commands.run("env | cut -d= -f1 | grep -v '^GREETING$' | sort | tr '\\n' ,")
  say(`${tag}.envNames`, env.stdout.trim())
  const perCommand = await sbx.commands.run('echo "$GREETING|$EXTRA"', { envs: { EXTRA: 'per-command' } })
  say(`${tag}.envPerCommand`, perCommand.stdout.trim())
  const info = await Sandbox.getInfo(id)
  say(`${tag}.info`, `${info.templateId} ${info.state} cpu=${info.cpuCount} mem=${info.memoryMB}`)
  say(`${tag}.metadata`, JSON.stringify(Object.keys(info.metadata).sort().map((k) => [k, info.metadata[k]])))
  say(`${tag}.listed`, (await Sandbox.list({ query: { metadata: { owner: 'claimed-test' } } }).nextItems()).some((s) => s.sandboxId === id)
    ? 'found' : 'missing')
  await sbx.files.write('/home/user/claimed/a.txt', 'written through the sdk')
  say(`${tag}.files.read`, await sbx.files.read('/home/user/claimed/a.txt'))
  const entries = await sbx.files.list('/home/user/claimed')
  say(`${tag}.files.list`, entries.map((e) => `${e.name}:${e.type}`).join(','))
  const stat = await sbx.commands.run('stat -c "%U:%G %a" /home/user/claimed/a.txt; ls -A /home/user | sort | tr "\\n" ,')
  say(`${tag}.files.stat`, stat.stdout.trim().split('\n').join('|'))
  say(`${tag}.files.exists`, String(await sbx.files.exists('/home/user/claimed/none.txt')))
  const again = await Sandbox.connect(id)
  say(`${tag}.connect`, (await again.commands.run('echo $GREETING')).stdout.trim())
}

async function main() {
  const warm = await Sandbox.create('base', opts)
  const vol = await Volume.create(`claimed-${Math.random().toString(36).slice(2, 10)}`)
  const cold = await Sandbox.create('base', { ...opts, volumeMounts: { '/mnt/v': vol } })
  await describe('warm', warm)
  await describe('cold', cold)
  say('volume.id', vol.volumeId)
  say('done', 'ok')
}

main().catch((e) => {
  console.log(`FAILED: ${e.constructor.name}: ${e.message}`)
  process.exit(1)
})
