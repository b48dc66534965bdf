// Issue 25, item 7: the code interpreter's languages through the official @e2b/code-interpreter
// SDK, as E2B's own SDK tests use them (bash and JavaScript default contexts, contexts of a
// language, results' text, a timed-out run). Driven by OfficialSdkCodeLanguagesTest; prints
// "step: result" lines.
import { Sandbox } from '@e2b/code-interpreter'

const say = (step, value) => console.log(`${step}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
const failure = (e) => `${e?.constructor?.name} ${e?.message}`

const sbx = await Sandbox.create({ timeoutMs: 180_000, envs: { TEST_ENV_VAR: 'supertest' } })
try {
  // E2B's defaultKernels, env_vars and cwd tests, as they are written
  say('js.log', (await sbx.runCode('console.log("Hello World!")', { language: 'js' })).logs.stdout)
  say('js.esm', (await sbx.runCode("\n    import { readFileSync } from 'fs'\n    console.log(typeof readFileSync)\n    ", { language: 'js' })).logs.stdout)
  say('js.await', (await sbx.runCode("\n    await Promise.resolve('Hello World!')\n    ", { language: 'js' })).text)
  say('js.cwd', (await sbx.runCode('process.cwd()', { language: 'js' })).text)
  say('js.env', (await sbx.runCode('process.env.TEST_ENV_VAR', { language: 'javascript' })).results[0]?.text.trim())
  say('js.envRun', (await sbx.runCode('process.env.FOO', { envs: { FOO: 'bar' }, language: 'javascript' })).results[0]?.text.trim())
  say('js.envAfter', (await sbx.runCode("process.env.FOO || 'default'", { language: 'javascript' })).results[0]?.text.trim())
  await sbx.runCode('let kept = 20', { language: 'javascript' })
  say('js.state', (await sbx.runCode('kept * 2 + 2', { language: 'js' })).text)
  const jsError = (await sbx.runCode('undefinedThing + 1', { language: 'js' })).error
  say('js.error', `${jsError?.name}|${jsError?.value}|${jsError?.traceback.includes('ReferenceError: undefinedThing is not defined')}`)

  say('bash.env', (await sbx.runCode('echo $TEST_ENV_VAR', { language: 'bash' })).logs.stdout[0])
  say('bash.envRun', (await sbx.runCode('echo $FOO', { envs: { FOO: 'bar' }, language: 'bash' })).logs.stdout[0])
  say('bash.envAfter', (await sbx.runCode('echo ${FOO:-default}', { language: 'bash' })).logs.stdout[0])
  say('bash.cwd', (await sbx.runCode('pwd', { language: 'bash' })).logs.stdout.join().trim())
  await sbx.runCode('COUNT=41; bump() { COUNT=$((COUNT + 1)); }; cd /tmp', { language: 'bash' })
  say('bash.state', (await sbx.runCode('bump; echo "$COUNT $(pwd)"', { language: 'bash' })).logs.stdout.join('').trim())
  const bashError = (await sbx.runCode('echo partial; exit_with() { return $1; }; exit_with 4', { language: 'bash' }))
  say('bash.error', `${bashError.logs.stdout.join('').trim()}|${JSON.stringify(bashError.error?.name)}|${bashError.error?.value}`)

  // contexts of a language
  const js = await sbx.createCodeContext({ language: 'js', cwd: '/tmp' })
  const bash = await sbx.createCodeContext({ language: 'bash' })
  say('ctx.languages', `${js.language} ${js.cwd} ${bash.language} ${bash.cwd}`)
  await sbx.runCode('var inJs = "only here"', { context: js })
  say('ctx.separate', `${(await sbx.runCode('inJs', { context: js })).text}|${(await sbx.runCode('typeof inJs', { language: 'js' })).text}`)
  say('ctx.listed', (await sbx.listCodeContexts()).filter((c) => c.id === js.id || c.id === bash.id).map((c) => c.language).sort().join(','))
  await sbx.restartCodeContext(js)
  say('ctx.restart', (await sbx.runCode('typeof inJs', { context: js })).text)

  // results' text as E2B's server gives it: a str's quotes stripped, other reprs whole
  const texts = []
  for (const code of ["'a'", '1.0', "['a', 1]", 'None']) {
    const r = await sbx.runCode(code)
    texts.push(r.results.length ? r.text : '(no result)')
  }
  say('py.texts', texts.join('|'))

  // a timed-out run gives its context back promptly, for each language
  for (const [language, setup, blocking, check] of [
    ['python', "kept = 'yes'", 'import time\nwhile True: time.sleep(0.1)', 'kept'],
    ['bash', 'KEPT=yes', 'sleep 600', 'echo $KEPT'],
    ['js', "var keptJs = 'yes'", 'while (true) {}', 'keptJs'],
  ]) {
    const ctx = await sbx.createCodeContext({ language })
    await sbx.runCode(setup, { context: ctx })
    let outcome
    try {
      await sbx.runCode(blocking, { context: ctx, timeoutMs: 1_500 })
      outcome = 'no timeout'
    } catch (e) {
      outcome = e.constructor.name
    }
    const started = Date.now()
    const next = await sbx.runCode(check, { context: ctx, timeoutMs: 30_000 })
    const took = Date.now() - started
    say(`timeout.${language}`, `${outcome} ${(next.text ?? next.logs.stdout.join('')).trim()} ${took < 4_000 ? 'promptly' : `${took} ms`}`)
  }

  try {
    await sbx.runCode('1', { language: 'cobol' })
    say('unknown', 'ran')
  } catch (e) {
    say('unknown', failure(e))
  }
  say('done', 'ok')
} finally {
  await sbx.kill()
}
