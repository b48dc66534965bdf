// Drives the official e2b SDK against an E2B-compatible server named by E2B_API_URL,
// E2B_SANDBOX_URL and E2B_API_KEY. Prints one line per step, "step: result", which the Java
// test asserts on; any unexpected failure prints "FAILED: ..." and exits non-zero.
import { Sandbox, Volume, CommandExitError, SandboxNotFoundError, NotFoundError, Template } from 'e2b'
import http from 'node:http'
import { Sandbox as CodeInterpreter } from '@e2b/code-interpreter'

const suffix = Math.random().toString(36).slice(2, 10)
const enc = (s) => new TextEncoder().encode(s)
async function waitFor(check, limitMs = 20_000) {
  const until = Date.now() + limitMs
  while (Date.now() < until) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`condition not met within ${limitMs} ms: ${check}`)
}

const say = (step, value) => console.log(`${step}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)

// fork (issue 13, item 4): a parent of its own, forked twice by the static form and once by the
// instance form; each fork has the parent's files, env and metadata and diverges; a killed
// parent cannot be forked
async function forkSteps() {
  const parent = await Sandbox.create('base', {
    metadata: { suite: 'conformance-fork', role: 'parent' },
    envs: { FORK_VAR: 'from-the-parent' },
    timeoutMs: 120_000,
  })
  await parent.files.write('/home/user/fork/before.txt', 'written before the fork')
  const sleeper = (await parent.commands.run('nohup sleep 600 >/dev/null 2>&1 & echo $!')).stdout.trim()
  const forks = await Sandbox.fork(parent.sandboxId, { count: 2, timeoutMs: 90_000 })
  say('fork.count', `${forks.length} ${forks.every((f) => f instanceof Sandbox) ? 'sandboxes' : forks.map((f) => f.message).join('; ')}`)
  const ids = new Set([parent.sandboxId, ...forks.map((f) => f.sandboxId)])
  say('fork.ids', ids.size === 3 ? 'distinct' : [...ids].join(','))
  say('fork.files', (await Promise.all(forks.map((f) => f.files.read('/home/user/fork/before.txt')))).join('|'))
  say('fork.env', (await Promise.all(forks.map(async (f) => (await f.commands.run('echo $FORK_VAR')).stdout.trim()))).join('|'))
  say('fork.metadata', (await Promise.all(forks.map(async (f) => (await Sandbox.getInfo(f.sandboxId)).metadata.role))).join('|'))
  await forks[0].files.write('/home/user/fork/mine.txt', 'only in the first fork')
  await forks[1].files.write('/home/user/fork/before.txt', 'changed by the second fork')
  say('fork.diverge', [
    await parent.files.exists('/home/user/fork/mine.txt'),
    await forks[1].files.exists('/home/user/fork/mine.txt'),
    await parent.files.read('/home/user/fork/before.txt'),
    await forks[0].files.read('/home/user/fork/before.txt'),
  ].join('|'))
  const parentInfo = await Sandbox.getInfo(parent.sandboxId)
  const alive = (await parent.commands.run(`ps -o args= -p ${sleeper}`)).stdout.trim() === 'sleep 600'
  say('fork.parent', `${parentInfo.state} ${alive ? 'process alive' : 'process gone'}`)
  const [one] = await parent.fork({ timeoutMs: 60_000 })
  say('fork.instance', one instanceof Sandbox ? await one.files.read('/home/user/fork/before.txt') : `error ${one.message}`)
  say('fork.kill', (await Promise.all([...forks, one].map((f) => f.kill()))).join('|'))
  await parent.kill()
  try {
    await Sandbox.fork(parent.sandboxId, { count: 1 })
    say('fork.killedParent', 'forked a killed sandbox')
  } catch (e) {
    say('fork.killedParent', e.constructor.name)
  }
}

// A recorder in front of the server on loopback: every request the SDK sends is noted (method,
// path, headers) and passed on unchanged, so what the server is sent can be looked at.
async function recorder(target) {
  const seen = []
  const hop = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'])
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method, path: req.url, headers: { ...req.headers } })
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', async () => {
      try {
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !hop.has(k)))
        const body = chunks.length ? Buffer.concat(chunks) : undefined
        const r = await fetch(new URL(req.url, target), { method: req.method, headers, body })
        const back = Object.fromEntries([...r.headers].filter(([k]) => !hop.has(k) && k !== 'content-encoding'))
        res.writeHead(r.status, back)
        res.end(Buffer.from(await r.arrayBuffer()))
      } catch (e) {
        res.writeHead(599)
        res.end(String(e))
      }
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${server.address().port}`, seen, close: () => server.close() }
}

// cloud-mode items of issue 13 that the SDK can observe: which paths create and connect use, the
// identity headers the server is sent, and that listings leave deadlines alone (the SDK's own,
// and the Java client's provider.list() that the Java test ran before this script)
async function identitySteps() {
  const api = await recorder(process.env.E2B_API_URL)
  const envd = await recorder(process.env.E2B_SANDBOX_URL)
  const via = { apiUrl: api.url, sandboxUrl: envd.url }
  const s = await Sandbox.create('base', { ...via, metadata: { suite: 'conformance-identity' }, timeoutMs: 60_000 })
  await s.files.write('/home/user/id.txt', 'identity')
  await s.files.read('/home/user/id.txt')
  await Sandbox.connect(s.sandboxId, { ...via, timeoutMs: 30_000 })
  const created = api.seen.find((r) => r.method === 'POST' && r.path.endsWith('/sandboxes'))
  const connected = api.seen.find((r) => r.method === 'POST' && r.path.endsWith('/connect'))
  say('fid.identity.paths', `${created?.path} ${connected?.path.replace(s.sandboxId, '{id}')}`)
  const identity = ['user-agent', 'browser', 'lang', 'lang_version', 'package_version', 'publisher', 'sdk_runtime', 'system']
  const names = (reqs) => [...new Set(reqs.flatMap((r) => identity.filter((h) => h in r.headers)))].sort().join(',')
  const agents = (reqs) => [...new Set(reqs.map((r) => (r.headers['user-agent'] ?? 'none').split('/')[0]))].join(',')
  say('fid.identity.apiHeaders', names(api.seen))
  say('fid.identity.apiEveryRequest', api.seen.every((r) => identity.every((h) => h in r.headers)))
  say('fid.identity.apiAgent', agents(api.seen))
  say('fid.identity.envdHeaders', names(envd.seen))
  say('fid.identity.envdAgent', agents(envd.seen))

  // the SDK's own listing: every page, then the deadline is where it was
  const before = (await Sandbox.getInfo(s.sandboxId)).endAt.getTime()
  const pages = Sandbox.list({ ...via, limit: 1 })
  let rows = 0
  while (pages.hasNext) rows += (await pages.nextItems()).length
  const after = (await Sandbox.getInfo(s.sandboxId)).endAt.getTime()
  say('fid.list.deadline', rows >= 1 && after === before ? 'unchanged' : `rows ${rows}, moved by ${after - before} ms`)
  await s.kill()
  api.close()
  envd.close()

  const javaId = process.env.JAVA_LISTED_ID
  if (javaId) {
    const endAt = (await Sandbox.getInfo(javaId)).endAt.getTime()
    const expected = Date.parse(process.env.JAVA_LISTED_END_AT)
    say('fid.javaList.deadline', endAt === expected ? 'unchanged' : `moved by ${endAt - expected} ms`)
  }
}

// templates (issue 14): the SDK's Template.build against the local build API: a COPY of a local
// file (uploaded), RUN, ENV and WORKDIR on base; a sandbox from the alias sees all four; a
// failing RUN is a BuildError with its exit code; delete goes through the snapshot call's path
async function templateSteps() {
  const fs = await import('node:fs/promises')
  const os = await import('node:os')
  const path = await import('node:path')
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'conf-tpl-'))
  await fs.writeFile(path.join(dir, 'hello.txt'), 'copied by the sdk')
  const name = `conf-tpl-${suffix}`
  const logs = []
  const t = Template({ fileContextPath: dir })
    .fromTemplate('base')
    .copy('hello.txt', '/home/user/app/')
    .runCmd('echo built-by-the-sdk > /home/user/app/built.txt')
    .setEnvs({ TPL_VAR: 'from-the-template' })
    .setWorkdir('/home/user/app')
  const built = await Template.build(t, name, { onBuildLogs: (e) => logs.push(e.message) })
  say('tpl.build', built.name === name && built.templateId ? 'built' : JSON.stringify(built))
  // the server's own lines (not the SDK's), hashes and the time taken masked: the test pins them to E2B's shapes
  const serverLines = (ls) => ls.filter((l) => /^(CACHED )?\[(base|builder \d+\/\d+|finalize)\] |^Build (finished, took|failed: )/.test(l))
    .map((l) => l.replace(/\[[0-9a-f]{64}\]/g, '[<hash>]').replace(/took \d+s$/, 'took <n>s'))
  say('tpl.logs', logs.some((l) => l.includes("Uploaded 'hello.txt'")) ? serverLines(logs).join(' | ') : logs.join(' | '))
  say('tpl.exists', `${await Template.exists(name)} ${await Template.exists(`${name}-never-built`)}`)
  const sbx = await Sandbox.create(name, { timeoutMs: 60_000 })
  const r = await sbx.commands.run('cat hello.txt; echo; cat built.txt; echo "$TPL_VAR"; pwd; whoami')
  say('tpl.sandbox', r.stdout.trim().split('\n').join('|'))
  say('tpl.sandboxFile', await sbx.files.read('/home/user/app/hello.txt'))
  await sbx.kill()
  const again = []
  await Template.build(t, name, { onBuildLogs: (e) => again.push(e.message) })
  say('tpl.rebuild', again.some((l) => l.includes('already cached')) && again.filter((l) => l.startsWith('CACHED [builder ')).length === 3
    ? 'upload skipped, steps cached' : again.join(' | '))
  // tags: a build by name:tag moves only that tag; assign, list and remove them; create from name:tag
  // and a COPY of a glob: the SDK uploads the matches; the folder before the pattern lands in the destination
  await fs.writeFile(path.join(dir, 'second.txt'), 'matched too')
  await fs.writeFile(path.join(dir, 'skipped.md'), 'not matched')
  const tagged = await Template.build(Template({ fileContextPath: dir }).fromTemplate('base').copy('*.txt', '/home/user/globbed/')
    .runCmd(`echo tagged-${suffix} > /home/user/which.txt`), `${name}:v2`, { tags: ['beta'] })
  say('tpl.buildTags', tagged.tags.slice().sort().join(','))
  const readWhich = async (ref) => {
    const s = await Sandbox.create(ref, { timeoutMs: 60_000 })
    try {
      const which = (await s.commands.run('cat /home/user/which.txt 2>/dev/null || echo first-build')).stdout.trim()
      return which === `tagged-${suffix}` ? 'tagged-build' : which
    } finally {
      await s.kill()
    }
  }
  say('tpl.tagSandbox', `${await readWhich(`${name}:v2`)} ${await readWhich(name)}`)
  {
    const g = await Sandbox.create(`${name}:beta`, { timeoutMs: 60_000 })
    say('tpl.glob', (await g.commands.run('cd /home/user/globbed && ls | tr "\\n" " "; cat second.txt')).stdout.trim())
    await g.kill()
  }
  const assigned = await Template.assignTags(`${name}:beta`, ['prod', 'Prod'])
  say('tpl.assignTags', `${assigned.buildId === tagged.buildId} ${assigned.tags.join(',')}`)
  say('tpl.getTags', (await Template.getTags(name)).map((t) => `${t.tag}=${t.buildId === tagged.buildId ? 'v2' : 'first'}`).sort().join(','))
  say('tpl.prodSandbox', await readWhich(`${name}:prod`))
  await Template.removeTags(name, ['prod', 'beta'])
  say('tpl.removeTags', (await Template.getTags(name)).map((t) => t.tag).sort().join(','))
  try {
    await Template.removeTags(name, 'default')
    say('tpl.removeDefault', 'removed')
  } catch (e) {
    say('tpl.removeDefault', `${e.constructor.name}: ${e.message}`)
  }
  try {
    await Sandbox.create(`${name}:prod`)
    say('tpl.removedTag', 'created')
  } catch (e) {
    say('tpl.removedTag', `${e.constructor.name}${/404/.test(e.message) ? ' (404)' : `: ${e.message}`}`)
  }
  try {
    await Template.build(Template().fromTemplate('base').runCmd(`echo failing-now-${suffix}; exit 4`), `${name}-fail`)
    say('tpl.fail', 'built')
  } catch (e) {
    say('tpl.fail', `${e.constructor.name}: ${e.message}`)
  }
  say('tpl.failExists', String(await Template.exists(`${name}-fail`)))
  say('tpl.delete', String(await Sandbox.deleteSnapshot(built.templateId)))
  try {
    await Sandbox.create(name)
    say('tpl.deleted', 'created')
  } catch (e) {
    say('tpl.deleted', `${e.constructor.name}${/404.*not found/.test(e.message) ? ' (404 not found)' : `: ${e.message}`}`)
  }
}

// the code interpreter (issue 15): @e2b/code-interpreter against the local code-interpreter-v1
// template: streamed output, a matplotlib PNG, an exception with its traceback, state kept in a
// context and apart across contexts, the contexts API, and a timeout
async function codeInterpreterSteps() {
  const ci = await CodeInterpreter.create({ timeoutMs: 180_000 })
  const streamed = []
  const first = await ci.runCode('import sys\nprint("out one")\nprint("err one", file=sys.stderr)\nx = 41\nx + 1', {
    onStdout: (m) => streamed.push(`out:${m.line.trim()}`),
    onStderr: (m) => streamed.push(`err:${m.line.trim()}`),
  })
  say('ci.text', `${first.text} ${first.executionCount > 0 ? 'counted' : 'uncounted'}`)
  say('ci.streamed', streamed.join('|'))
  say('ci.logs', `${first.logs.stdout.join('').trim()}|${first.logs.stderr.join('').trim()}`)
  say('ci.state', (await ci.runCode('x * 2')).text)
  const chart = await ci.runCode('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.show()')
  const png = chart.results.find((r) => r.png)
  const bytes = png ? Buffer.from(png.png, 'base64') : Buffer.alloc(0)
  say('ci.png', bytes.length > 1000 && bytes.subarray(1, 4).toString() === 'PNG' ? 'png' : `no png: ${JSON.stringify(chart.results.map((r) => r.formats()))}`)
  const line = png?.chart
  say('ci.chart.line', line ? `${line.type} ${line.elements.length} ${JSON.stringify(line.elements[0]?.points)}` : 'no chart')
  const barRun = await ci.runCode("import matplotlib.pyplot as plt\nplt.bar(['a', 'b', 'c'], [3, 5, 2], label='sold')\nplt.title('Sales')\nplt.xlabel('Shop')\nplt.ylabel('Amount (EUR)')\nplt.show()")
  const bar = barRun.results.find((r) => r.chart)?.chart
  say('ci.chart.bar', bar ? `${bar.type} ${bar.title} ${bar.x_label}|${bar.y_label}|${bar.y_unit} ${bar.elements.map((e) => `${e.group}:${e.label}=${e.value}`).join(',')}` : `no chart: ${JSON.stringify(barRun.results.map((r) => r.formats()))} ${barRun.error?.value}`)
  const frame = await ci.runCode('import pandas as pd\npd.DataFrame({"n": [1, 2], "s": ["x", None]})')
  say('ci.data', frame.results[0]?.data ? JSON.stringify(frame.results[0].data) : `no data: ${JSON.stringify(frame.results.map((r) => r.formats()))}`)
  const errors = []
  const failed = await ci.runCode('def boom():\n    raise ValueError("bad value")\nboom()', { onError: (e) => errors.push(e.name) })
  say('ci.error', `${failed.error?.name} ${failed.error?.value} ${failed.error?.traceback.replace(/\x1b\[[;\d]*m/g, '').includes('----> 3 boom()') ? 'traceback' : 'no traceback'} ${errors.join(',')}`)

  const a = await ci.createCodeContext()
  const b = await ci.createCodeContext({ cwd: '/tmp' })
  await ci.runCode('secret = "only in a"', { context: a })
  say('ci.context.separate', `${(await ci.runCode('secret', { context: a })).text}|${(await ci.runCode('"secret" in dir()', { context: b })).text}`)
  say('ci.context.cwd', `${a.language} ${a.cwd} ${(await ci.runCode('import os; os.getcwd()', { context: b })).text}`)
  const listed = (await ci.listCodeContexts()).map((c) => c.id)
  say('ci.context.list', listed.includes(a.id) && listed.includes(b.id) ? 'both' : listed.join(','))
  await ci.restartCodeContext(a)
  say('ci.context.restart', (await ci.runCode('secret', { context: a })).error?.name ?? 'state kept')
  await ci.removeCodeContext(b.id)
  say('ci.context.remove', (await ci.listCodeContexts()).some((c) => c.id === b.id) ? 'still listed' : 'gone')
  try {
    await ci.runCode('1', { context: b })
    say('ci.context.removedRun', 'ran')
  } catch (e) {
    say('ci.context.removedRun', e.constructor.name)
  }
  const started = Date.now()
  try {
    await ci.runCode('import time\nwhile True: time.sleep(0.1)', { context: a, timeoutMs: 2_000 })
    say('ci.timeout', 'no error raised')
  } catch (e) {
    say('ci.timeout', `${e.constructor.name} ${Date.now() - started < 10_000 ? 'promptly' : `after ${Date.now() - started} ms`}`)
  }
  // the timed-out loop was interrupted: the context answers again well before another 60 s
  const next = Date.now()
  const after = await ci.runCode('"after the timeout"', { context: a, timeoutMs: 30_000 })
  say('ci.afterTimeout', `${after.text} ${Date.now() - next < 15_000 ? 'promptly' : `after ${Date.now() - next} ms`}`)
  await ci.kill()
}

async function main() {
  await identitySteps()
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

  // a background command, disconnected, then re-attached by pid: it kept running meanwhile
  const ticker = await sbx.commands.run('for i in 1 2 3 4 5 6; do echo tick-$i; sleep 0.4; done', { background: true })
  await ticker.disconnect()
  const reattached = await sbx.commands.connect(ticker.pid)
  const ticked = await reattached.wait()
  say('reattach', ticked.stdout.includes('tick-6') && ticked.exitCode === 0 ? 'got the later output and the exit' : `unexpected: ${JSON.stringify(ticked)}`)

  // a terminal: input, its size, a resize, kill
  let screen = ''
  const pty = await sbx.pty.create({ cols: 80, rows: 24, timeoutMs: 60_000, onData: (d) => { screen += new TextDecoder().decode(d) } })
  await sbx.pty.sendInput(pty.pid, enc('stty size\n'))
  await waitFor(() => screen.includes('24 80'))
  await sbx.pty.resize(pty.pid, { cols: 100, rows: 30 })
  await sbx.pty.sendInput(pty.pid, enc('stty size\n'))
  await waitFor(() => screen.includes('30 100'))
  say('pty.resize', 'stty saw 24 80 then 30 100')
  say('pty.kill', await sbx.pty.kill(pty.pid))

  // watching a folder
  await sbx.files.makeDir('/home/user/watched')
  const events = []
  const watcher = await sbx.files.watchDir('/home/user/watched', (e) => { events.push(`${e.name}:${e.type}`) })
  await sbx.files.write('/home/user/watched/new.txt', 'x')
  await waitFor(() => events.includes('new.txt:create'))
  await watcher.stop()
  say('watchDir', 'new.txt:create')

  // pause keeps memory: a process is still alive after resume
  const sleeper = (await sbx.commands.run('nohup sleep 600 >/dev/null 2>&1 & echo $!')).stdout.trim()
  say('pause', await sbx.pause())
  say('pause.again', await sbx.pause())
  say('paused.state', (await Sandbox.getInfo(sbx.sandboxId)).state)
  const resumed = await Sandbox.connect(sbx.sandboxId)
  say('resume.process', (await resumed.commands.run(`ps -o args= -p ${sleeper}`)).stdout.trim() === 'sleep 600' ? 'alive' : 'gone')
  say('resumed.state', (await Sandbox.getInfo(sbx.sandboxId)).state)

  // snapshots: create, list, create from, delete refused while in use, delete
  const snap = await sbx.createSnapshot({ name: `conformance-${suffix}` })
  say('snapshot.id', snap.snapshotId === `conformance-${suffix}:default` ? 'name:default' : snap.snapshotId)
  const snaps = await Sandbox.listSnapshots({ sandboxId: sbx.sandboxId }).nextItems()
  say('snapshot.list', snaps.some((s) => s.snapshotId === snap.snapshotId) ? 'found' : 'missing')
  const child = await Sandbox.create(snap.snapshotId, { timeoutMs: 120_000 })
  say('snapshot.child', await child.files.read('/home/user/conf/data.txt'))
  try {
    await Sandbox.deleteSnapshot(snap.snapshotId)
    say('snapshot.deleteInUse', 'deleted while in use')
  } catch (e) {
    say('snapshot.deleteInUse', `refused (${e.constructor.name})`)
  }
  await child.kill()
  say('snapshot.delete', await Sandbox.deleteSnapshot(snap.snapshotId))

  // volumes: data outlives the sandbox that wrote it
  const vol = await Volume.create(`conformance-${suffix}`)
  const writer = await Sandbox.create('base', { volumeMounts: { '/mnt/vol': vol }, timeoutMs: 120_000 })
  await writer.commands.run('echo persisted > /mnt/vol/f.txt')
  await writer.kill()
  const reader = await Sandbox.create('base', { volumeMounts: { '/mnt/vol': vol.name }, timeoutMs: 120_000 })
  say('volume.survives', (await reader.commands.run('cat /mnt/vol/f.txt')).stdout.trim())
  await reader.kill()
  say('volume.listed', (await Volume.list()).some((v) => v.volumeId === vol.volumeId) ? 'found' : 'missing')
  say('volume.destroy', await Volume.destroy(vol.volumeId))

  // setTimeout, then the server kills it at the deadline
  const short = await Sandbox.create('base', { timeoutMs: 120_000 })
  await short.setTimeout(2_000)
  await waitFor(async () => !(await short.isRunning()), 30_000)
  try {
    await Sandbox.getInfo(short.sandboxId)
    say('deadline', 'still there')
  } catch (e) {
    say('deadline', e.constructor.name)
  }

  // egress: an allow-list lets the allowed witness through and blocks the denied one
  const allowedWitness = process.env.WITNESS_ALLOWED
  const deniedWitness = process.env.WITNESS_DENIED
  const guarded = await Sandbox.create('base', { network: { allowOut: [allowedWitness], denyOut: ['0.0.0.0/0'] }, timeoutMs: 120_000 })
  const probe = async (host) => {
    try {
      return (await guarded.commands.run(`curl -s -o /dev/null -m 5 -w '%{http_code}' http://${host}/`)).stdout.trim()
    } catch (e) {
      return e instanceof CommandExitError ? `${e.stdout.trim()} (curl exit ${e.exitCode})` : `unexpected ${e.constructor.name}`
    }
  }
  say('egress.allowed', await probe(allowedWitness))
  say('egress.denied', (await probe(deniedWitness)).split(' ')[0])
  await guarded.kill()

  // a port inside the sandbox, reached through the local server's forwarding (not part of E2B's API)
  await sbx.commands.run('cd /home/user/conf && python3 -m http.server 8000', { background: true })
  const forward = await fetch(`${process.env.E2B_API_URL}/local/sandboxes/${sbx.sandboxId}/ports/8000`, {
    method: 'POST',
    headers: { 'X-API-KEY': process.env.E2B_API_KEY },
  })
  const { url } = await forward.json()
  let page = ''
  await waitFor(async () => {
    try {
      page = await (await fetch(`${url}/data.txt`)).text()
      return true
    } catch {
      return false
    }
  })
  say('preview', page)

  // a command running when its sandbox is killed: the stream breaks, and the SDK finds out why
  const doomed = await Sandbox.create('base', { timeoutMs: 120_000 })
  const running = doomed.commands.run('echo started; sleep 60; echo finished')
  const outcome = running.then(() => 'finished', (e) => e)
  await waitFor(async () => (await doomed.commands.run('pgrep -f "sleep 60" || true')).stdout.trim() !== '')
  await doomed.kill()
  const ended = await outcome
  say('killDuringCommand', ended === 'finished' ? 'finished'
    : `${ended.constructor.name}${/killed or reached its end of life/.test(ended.message) ? ' (killed)' : `: ${ended.message}`}`)

  // ---- fidelity (issue 13: listing, signed URLs, metrics range, alias lookup, base tools, egress note) ----
  {
    const tag = `fid-${suffix}`
    const made = []
    const make = async (template) => {
      const s = await Sandbox.create(template, { metadata: { fid: tag }, timeoutMs: 120_000 })
      made.push(s)
      return s
    }
    const first = await make('base')
    const fsnap = await first.createSnapshot({ name: tag })
    const second = await make('base')
    const third = await make(fsnap.snapshotId)
    const ids = made.map((s) => s.sandboxId)
    const listAll = async (opts = {}) => {
      const pages = Sandbox.list({ ...opts, query: { metadata: { fid: tag }, ...(opts.query ?? {}) } })
      const out = []
      while (pages.hasNext) out.push(...(await pages.nextItems()))
      return out.map((s) => ids.indexOf(s.sandboxId)).join(',')
    }
    say('fid.list.desc', await listAll())
    say('fid.list.asc', await listAll({ order: 'asc' }))
    say('fid.list.ascPaged', await listAll({ order: 'asc', limit: 1 }))
    say('fid.list.descPaged', await listAll({ limit: 2 }))
    const secondStarted = (await Sandbox.getInfo(second.sandboxId)).startedAt
    say('fid.list.startedAfter', await listAll({ query: { startedAfter: secondStarted }, order: 'asc' }))
    say('fid.list.template', await listAll({ query: { template: tag } }))
    say('fid.list.templateBase', await listAll({ query: { template: 'base' }, order: 'asc' }))

    // pre-signed URLs: a fresh one works, an expired one says so (downloads and uploads)
    await first.files.write('/home/user/fid.txt', 'signed')
    const fresh = await fetch(await first.downloadUrl('/home/user/fid.txt', { useSignatureExpiration: 60 }))
    say('fid.signed.fresh', `${fresh.status} ${await fresh.text()}`)
    const oldDown = await first.downloadUrl('/home/user/fid.txt', { useSignatureExpiration: 1 })
    const oldUp = await first.uploadUrl('/home/user/up.txt', { useSignatureExpiration: 1 })
    const expiry = Number(new URL(oldDown).searchParams.get('signature_expiration'))
    await waitFor(() => Date.now() > expiry * 1000 + 300)
    const down = await fetch(oldDown)
    say('fid.signed.expiredDownload', `${down.status} ${(await down.json()).message}`)
    const form = new FormData()
    form.append('file', new Blob(['late']), 'up.txt')
    const up = await fetch(oldUp, { method: 'POST', body: form })
    say('fid.signed.expiredUpload', `${up.status} ${(await up.json()).message}`)
    say('fid.signed.notWritten', await first.files.exists('/home/user/up.txt'))

    // metrics: a range before the sandbox existed is empty; a narrow range gives only its samples
    const longAgo = new Date(Date.now() - 3_600_000)
    say('fid.metrics.beforeCreate', (await first.getMetrics({ start: longAgo, end: new Date(longAgo.getTime() + 60_000) })).length)
    let samples = []
    const seconds = (list) => new Set(list.map((m) => Math.floor(m.timestamp.getTime() / 1000))).size
    await waitFor(async () => seconds(samples = await first.getMetrics()) >= 2, 40_000)
    const second0 = Math.floor(samples[0].timestamp.getTime() / 1000) * 1000
    const narrow = await first.getMetrics({ start: new Date(second0), end: new Date(second0) })
    const inSecond = (m) => Math.floor(m.timestamp.getTime() / 1000) * 1000 === second0
    say('fid.metrics.range', narrow.length >= 1 && narrow.length < samples.length && narrow.every(inSecond)
      ? 'only the samples in range' : `unexpected: ${narrow.length} of ${samples.length}`)

    // template alias lookup
    say('fid.alias.base', await Template.exists('base'))
    say('fid.alias.snapshot', await Template.exists(tag))
    say('fid.alias.missing', await Template.exists(`no-such-${suffix}`))

    // the base template's tools
    const tools = await second.commands.run('git --version >/dev/null && node -e "console.log(6 * 7)"'
      + ' && python3 -m venv /tmp/venv && /tmp/venv/bin/pip --version >/dev/null && pip3 --version >/dev/null && echo tools-ok',
      { timeoutMs: 180_000 }) // a venv with pip takes well over the default 60 s on a loaded machine
    say('fid.tools', tools.stdout.trim().split('\n').join('|'))

    // which egress applies is in the sandbox's log (SDK 2.51 sends allow_internet_access only when told)
    const egressLog = async (id) => {
      const logs = await (await fetch(`${process.env.E2B_API_URL}/v2/sandboxes/${id}/logs`, {
        headers: { 'X-API-KEY': process.env.E2B_API_KEY },
      })).json()
      return logs.logs.find((l) => l.message.startsWith('egress: '))?.message ?? 'none'
    }
    say('fid.egressLog.default', await egressLog(second.sandboxId))
    const closed = await Sandbox.create('base', { allowInternetAccess: false, timeoutMs: 60_000 })
    say('fid.egressLog.closed', await egressLog(closed.sandboxId))
    await closed.kill()

    for (const s of made) await s.kill()
    await Sandbox.deleteSnapshot(fsnap.snapshotId)
  }
  // ---- end of fidelity ----
  await forkSteps()
  await templateSteps()
  await codeInterpreterSteps()

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
