// Issue 21, class 6: the official SDK's COPY of folders, uploaded as it packs them (folders
// without sizes), must match the hash the server checks them against. Driven by
// OfficialSdkCopyTest: builds TEMPLATE_NAME from the context in CONTEXT and prints one line.
import { Template } from 'e2b'

const t = Template({ fileContextPath: process.env.CONTEXT })
  .fromTemplate('base')
  .copy('app', '/opt/app')
  .copy('.', '/opt/all/')
try {
  const built = await Template.build(t, process.env.TEMPLATE_NAME, { onBuildLogs: () => {} })
  console.log(`built: ${built.name}`)
} catch (e) {
  console.log(`error: ${e.constructor.name} ${e.message}`)
  process.exitCode = 1
}
