// Issue 25, item 7: the code interpreter's languages through the official @e2b/code-interpreter
// SDK, as E2B's own SDK tests use them (bash, JavaScript, R and Java default contexts, contexts of a
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

  // E2B's R and Java env_vars and cwd tests, as they are written (R's values are displays: results[0], no main text)
  say('r.env', (await sbx.runCode('Sys.getenv("TEST_ENV_VAR")', { language: 'r' })).results[0]?.text.trim())
  say('r.envRun', (await sbx.runCode('Sys.getenv("FOO")', { envs: { FOO: 'bar' }, language: 'r' })).results[0]?.text.trim())
  say('r.envAfter', (await sbx.runCode('Sys.getenv("FOO", unset = "default")', { language: 'r' })).results[0]?.text.trim())
  say('r.envOverwrite', (await sbx.runCode('Sys.getenv("TEST_ENV_VAR")', { language: 'r', envs: { TEST_ENV_VAR: 'overwrite' } })).results[0]?.text.trim()
    + '|' + (await sbx.runCode('Sys.getenv("TEST_ENV_VAR")', { language: 'r' })).results[0]?.text.trim())
  say('r.cwd', (await sbx.runCode('getwd()', { language: 'r' })).results[0]?.text.trim())
  const rRun = await sbx.runCode('kept <- 41; cat("out\\n"); kept + 1', { language: 'r' })
  say('r.run', `${JSON.stringify(rRun.logs.stdout)}|${rRun.results.map((r) => r.text).join(',')}|${rRun.text}`)
  const rError = (await sbx.runCode('stop("boom")', { language: 'r' })).error
  say('r.error', `${rError?.name}|${JSON.stringify(rError?.value)}`)
  say('java.env', (await sbx.runCode('System.getProperty("TEST_ENV_VAR")', { language: 'java' })).results[0]?.text.trim())
  say('java.envRun', (await sbx.runCode('System.getProperty("FOO")', { envs: { FOO: 'bar' }, language: 'java' })).results[0]?.text.trim())
  say('java.envAfter', (await sbx.runCode('System.getProperty("FOO", "default")', { language: 'java' })).results[0]?.text.trim())
  say('java.envOverwrite', (await sbx.runCode('System.getProperty("TEST_ENV_VAR")', { language: 'java', envs: { TEST_ENV_VAR: 'overwrite' } })).results[0]?.text.trim()
    + '|' + (await sbx.runCode('System.getProperty("TEST_ENV_VAR")', { language: 'java' })).results[0]?.text.trim())
  say('java.cwd', (await sbx.runCode('System.getProperty("user.dir")', { language: 'java' })).results[0]?.text.trim())
  await sbx.runCode('int counted = 41;', { language: 'java' })
  const javaRun = await sbx.runCode('System.out.println("out"); counted + 1', { language: 'java' })
  say('java.run', `${JSON.stringify(javaRun.logs.stdout)}|${javaRun.text}`)
  const javaError = (await sbx.runCode('1 / 0', { language: 'java' })).error
  say('java.error', `${javaError?.name}|${javaError?.value}`)

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
    ['r', "keptR <- 'yes'", 'repeat Sys.sleep(0.1)', 'cat(keptR)'],
    ['java', 'String keptJava = "yes";', 'while (true) {}', 'keptJava'],
  ]) {
    const ctx = await sbx.createCodeContext({ language })
    await sbx.runCode(setup, { context: ctx })
    let outcome
    try {
      // a Java run gets 3 s: JShell cannot stop a snippet it is still compiling
      await sbx.runCode(blocking, { context: ctx, timeoutMs: language === 'java' ? 3_000 : 1_500 })
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
