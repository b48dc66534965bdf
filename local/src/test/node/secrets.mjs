// Issue 25, items 4 and 6: the secrets API and the fields the local runtime refuses, through the
// official SDK. Driven by OfficialSdkSecretsTest; prints "step: result" lines.
import { Sandbox, Secret } from 'e2b'

const say = (step, value) => console.log(`${step}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
const failure = (e) => `${e?.constructor?.name} ${e?.message}`
const name = `Sdk-Secret-${process.pid}`
const lower = name.toLowerCase()

const made = await Secret.create(name, 'first-value', { metadata: { owner: 'sdk' } })
say('create', `${made.name === lower} ${/^sec_[0-7][0-9a-z]{25}$/.test(made.secretId)} ${made.version} ${JSON.stringify(made.metadata)}`)
say('create.dates', String(made.createdAt instanceof Date && !isNaN(made.createdAt) && made.createdAt.getTime() === made.updatedAt.getTime()))
say('create.fields', Object.keys(made).sort().join(','))
const byId = await Secret.getInfo(made.secretId)
const byName = await Secret.getInfo(name.toUpperCase())
say('getInfo', `${byId.name === lower} ${byName.secretId === made.secretId}`)
say('exists', `${await Secret.exists(lower)} ${await Secret.exists('no-such-secret-anywhere')}`)
const updated = await Secret.update(lower, 'second-value', { metadata: {} })
say('update', `${updated.version} ${JSON.stringify(updated.metadata)} ${updated.updatedAt >= made.updatedAt}`)
try {
  await Secret.create(lower, 'again')
  say('create.again', 'accepted')
} catch (e) {
  say('create.again', failure(e))
}

// a listing, one per page, finds it
const paginator = Secret.list({ limit: 1 })
let found = false
let pages = 0
while (paginator.hasNext && pages < 10000) {
  const items = await paginator.nextItems()
  pages++
  if (items.length > 1) throw new Error('a page of more than its limit')
  found ||= items.some((s) => s.secretId === made.secretId)
}
say('list', String(found))

// rules that fill in the secret are accepted, and reported with the placeholder, never the value;
// a rule filling in a secret that does not exist is refused naming it; iam, mcp are refused naming them
try {
  const sbx = await Sandbox.create({
    network: { allowOut: ['api.example.com'], rules: { 'api.example.com': [{ transform: { headers: { Authorization: `Bearer ${Secret.fill(lower)}` } } }] } },
  })
  try {
    const info = await sbx.getInfo()
    say('rules', `accepted ${JSON.stringify(info.network?.rules)}`)
    say('rules.value', String(JSON.stringify(info).includes('second-value')))
  } finally {
    await sbx.kill()
  }
} catch (e) {
  say('rules', failure(e))
}
try {
  const sbx = await Sandbox.create({
    network: { allowOut: ['api.example.com'], rules: { 'api.example.com': [{ transform: { headers: { 'X-Key': Secret.fill('no-such-secret-anywhere') } } }] } },
  })
  await sbx.kill()
  say('rules.missing', 'accepted')
} catch (e) {
  say('rules.missing', failure(e))
}
try {
  const sbx = await Sandbox.create({ iam: { tokens: { aws: Secret.iamToken({ audience: 'sts.amazonaws.com', tokenType: 'JWT-SVID' }) } } })
  await sbx.kill()
  say('iam', 'accepted')
} catch (e) {
  say('iam', failure(e))
}
try {
  const sbx = await Sandbox.create({ network: { httpsPorts: [3000] } })
  await sbx.kill()
  say('httpsPorts', 'accepted')
} catch (e) {
  say('httpsPorts', failure(e))
}

say('destroy', `${await Secret.destroy(made.secretId)} ${await Secret.destroy(made.secretId)}`)
try {
  await Secret.getInfo(lower)
  say('destroyed', 'still there')
} catch (e) {
  say('destroyed', e?.constructor?.name)
}
say('done', 'ok')
