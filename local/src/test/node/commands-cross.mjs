// Issue 24, point 1: processes by pid across clients. Driven by OfficialSdkCommandsTest, one step
// per run against the sandbox in SANDBOX_ID, printing "step: result" lines:
//   start         starts a background command (stdin open) with the official SDK, prints its pid,
//                 and leaves it running
//   attach <pid>  lists, attaches to, writes to and kills a process the Java client started
import { Sandbox } from 'e2b'

const say = (step, value) => console.log(`${step}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
const sbx = await Sandbox.connect(process.env.SANDBOX_ID)
const [step, arg] = process.argv.slice(2)

if (step === 'start') {
  const h = await sbx.commands.run('while read l; do echo "js-got:$l"; done', { background: true, stdin: true, timeoutMs: 120_000 })
  say('pid', String(h.pid))
  await h.disconnect()
} else if (step === 'attach') {
  const pid = Number(arg)
  const p = (await sbx.commands.list()).find((x) => x.pid === pid)
  say('listed', p ? [p.cmd, ...p.args] : 'no')
  let out = ''
  const h = await sbx.commands.connect(pid, { onStdout: (d) => { out += d }, timeoutMs: 60_000 })
  await sbx.commands.sendStdin(pid, 'from-js\n')
  const until = Date.now() + 10_000
  while (!out.includes('\n') && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
  say('heard', out.trim())
  say('kill', String(await sbx.commands.kill(pid)))
  try {
    const r = await h.wait()
    say('wait', `exited ${r.exitCode}`)
  } catch (e) {
    say('wait', `${e.constructor.name} ${e.exitCode}`)
  }
  say('kill.again', String(await sbx.commands.kill(pid)))
} else {
  throw new Error(`unknown step ${step}`)
}
process.exit(0)
