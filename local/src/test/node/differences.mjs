// Issue 25: differences from E2B that users' own flows found, through the official SDK. Driven by
// OfficialSdkDifferencesTest, one step per run, printing "step: result" lines:
//   multiwrite  several files in one files.write call (one multipart request), and one whose
//               first part is refused while the later parts are still on their way
//   watchkill   a watch whose sandbox is killed: how the SDK's onExit reports its end
//   watchgone   a watch whose folder is deleted: the events it hears, and that it goes on
//   snapshot    createSnapshot under a name that exists while a sandbox made from it runs
//   runuser     a template whose RUN step runs as a user the image does not have
//   identity    E2B's identity variables inside a sandbox, which the sandbox's own envs cannot replace
//   connectEnded commands.connect to a background command that has already ended
//   templateId  a sandbox created from a built template's name: its templateID, alias and listing
import { Sandbox, Template } from 'e2b'

const say = (step, value) => console.log(`${step}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
const failure = (e) => `${e.constructor.name}: ${e.message}${e.cause ? ` (${e.cause.message ?? e.cause})` : ''}`
const [step] = process.argv.slice(2)

if (step === 'multiwrite') {
  const sbx = await Sandbox.create()
  try {
    const files = []
    for (let i = 0; i < 10; i++) files.push({ path: i % 2 === 0 ? `/tmp/multi/${i}/f${i}.txt` : `multi/f${i}.txt`, data: `file ${i}` })
    const infos = await sbx.files.write(files)
    say('multiwrite.paths', infos.map((f) => f.path).join(','))
    const back = []
    for (const info of infos) back.push(await sbx.files.read(info.path))
    say('multiwrite.read', back.join('|'))
    // as E2B's envd: written as root, then given to the user with the folders it made (the
    // official suite's "write multiple files" writes under /0, which only root may create)
    const under0 = await sbx.files.write([{ path: '/0/js/a.txt', data: 'a' }, { path: '/0/js/b/c.txt', data: 'c' }])
    const owners = []
    for (const p of ['/0', '/0/js', '/0/js/a.txt', '/0/js/b', '/0/js/b/c.txt']) owners.push((await sbx.files.getInfo(p)).owner)
    say('multiwrite.under0', under0.map((f) => f.path).join(',') + ' ' + owners.join(','))
    // the first part is refused (a read-only mount, which root may not write either) while 960 KiB of later
    // parts are still on their way; whether a server that stops reading there breaks the
    // connection before the client reads its answer is a race, so it is tried 8 times
    const big = 'x'.repeat(64 * 1024)
    const refused = [{ path: '/sys/refused.txt', data: 'no' }]
    for (let i = 0; i < 15; i++) refused.push({ path: `later/${i}.txt`, data: big })
    const outcomes = new Set()
    for (let i = 0; i < 8; i++) {
      try {
        await sbx.files.write(refused)
        outcomes.add('written')
      } catch (e) {
        outcomes.add(failure(e))
      }
    }
    say('multiwrite.refused', [...outcomes].join(' / '))
    say('multiwrite.laterWritten', String(await sbx.files.exists('later/0.txt')))
  } finally {
    await sbx.kill()
  }
} else if (step === 'watchkill') {
  const sbx = await Sandbox.create()
  let exited
  const exit = new Promise((resolve) => { exited = resolve })
  const seen = []
  await sbx.files.makeDir('/home/user/watched')
  await sbx.files.watchDir('/home/user/watched', (e) => seen.push(`${e.name}:${e.type}`), { timeoutMs: 0, onExit: (err) => exited(err) })
  await sbx.files.write('/home/user/watched/before-kill.txt', 'x')
  const until = Date.now() + 10_000
  while (!seen.some((e) => e.startsWith('before-kill.txt')) && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
  say('watchkill.event', seen[0] ?? 'none')
  await sbx.kill()
  const err = await Promise.race([exit, new Promise((r) => setTimeout(() => r('no exit within 30 s'), 30_000))])
  say('watchkill.exit', err === undefined ? 'clean end' : typeof err === 'string' ? err
    : `${err.constructor.name}${/killed or reached its end of life/.test(err.message) ? ' (killed)' : `: ${err.message}`}`)
} else if (step === 'watchgone') {
  const sbx = await Sandbox.create()
  try {
    let exited = 'running'
    const seen = []
    await sbx.files.makeDir('/home/user/gone/sub')
    const w = await sbx.files.watchDir('/home/user/gone', (e) => seen.push(`${e.name}:${e.type}`), { timeoutMs: 0, onExit: (err) => { exited = err ? err.message : 'clean end' } })
    await sbx.commands.run('rm -rf /home/user/gone')
    const until = Date.now() + 10_000
    while (!seen.some((e) => e.startsWith('.:')) && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
    say('watchgone.events', seen.join(','))
    say('watchgone.afterRemoval', exited)
    await w.stop()
  } finally {
    await sbx.kill()
  }
} else if (step === 'snapshot') {
  const name = `differences-${Date.now().toString(36)}`
  const sbx = await Sandbox.create()
  const made = [sbx]
  try {
    await sbx.files.write('/home/user/state.txt', 'version 1')
    const first = await sbx.createSnapshot({ name })
    const child = await Sandbox.create(name)
    made.push(child)
    await sbx.files.write('/home/user/state.txt', 'version 2')
    try {
      const again = await sbx.createSnapshot({ name })
      say('snapshot.again', again.snapshotId === first.snapshotId ? 'same id' : `${first.snapshotId} then ${again.snapshotId}`)
    } catch (e) {
      say('snapshot.again', failure(e))
    }
    const newer = await Sandbox.create(name)
    made.push(newer)
    say('snapshot.contents', `${await newer.files.read('/home/user/state.txt')}|${await child.files.read('/home/user/state.txt')}`)
    for (const s of made.splice(1)) await s.kill()
    say('snapshot.delete', String(await Sandbox.deleteSnapshot(first.snapshotId)))
  } finally {
    for (const s of made) await s.kill()
  }
} else if (step === 'runuser') {
  try {
    await Template.build(Template().fromTemplate('base').skipCache().runCmd('whoami', { user: 'root123' }),
      `differences-user-${Date.now().toString(36)}`)
    say('runuser', 'built')
  } catch (e) {
    say('runuser', `${e.constructor.name}: ${e.message}`)
  }
} else if (step === 'identity') {
  const sbx = await Sandbox.create({ envs: { E2B_SANDBOX_ID: 'spoofed', MINE: 'kept' } })
  try {
    const r = await sbx.commands.run('echo "$E2B_SANDBOX|$E2B_SANDBOX_ID|$E2B_TEMPLATE_ID|$MINE"')
    say('identity', r.stdout.trim().replace(sbx.sandboxId, '<id>'))
    const own = await sbx.commands.run('echo "$E2B_SANDBOX_ID"', { envs: { E2B_SANDBOX_ID: 'asked-by-the-command' } })
    say('identity.command', own.stdout.trim())
    const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: () => {} })
    say('identity.pty', 'started')
    await sbx.pty.kill(pty.pid)
  } finally {
    await sbx.kill()
  }
} else if (step === 'connectEnded') {
  const sbx = await Sandbox.create()
  try {
    const h = await sbx.commands.run('echo out; exit 3', { background: true })
    const until = Date.now() + 20_000
    while ((await sbx.commands.list()).some((p) => p.pid === h.pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100))
    try {
      const r = await (await sbx.commands.connect(h.pid)).wait()
      say('connectEnded', `exit ${r.exitCode}`)
    } catch (e) {
      say('connectEnded', `${e.constructor.name}${e.exitCode !== undefined ? ` ${e.exitCode}` : `: ${e.message}`}`)
    }
    try {
      await sbx.commands.connect(999999)
      say('connectMissing', 'connected')
    } catch (e) {
      say('connectMissing', e.constructor.name)
    }
  } finally {
    await sbx.kill()
  }
} else if (step === 'templateId') {
  const name = `differences-tpl-${Date.now().toString(36)}`
  const built = await Template.build(Template().fromTemplate('base').runCmd('echo built'), name)
  const sbx = await Sandbox.create(name)
  try {
    const info = await sbx.getInfo()
    say('templateId.info', `${info.templateId === built.templateId ? 'the id' : info.templateId} ${info.name === name ? 'the name' : info.name}`)
    const listed = await Sandbox.list({ query: { template: built.templateId } }).nextItems()
    say('templateId.listed', listed.some((s) => s.sandboxId === sbx.sandboxId) ? 'found' : 'missing')
    const env = (await sbx.commands.run('echo $E2B_TEMPLATE_ID')).stdout.trim()
    say('templateId.env', env === built.templateId ? 'the id' : env)
  } finally {
    await sbx.kill()
    await Sandbox.deleteSnapshot(built.templateId)
  }
} else {
  throw new Error(`unknown step ${step}`)
}
process.exit(0)
