// Issue 25, item 5: the volume content API through the official SDK, with E2B_VOLUME_API_URL
// pointing at the local server. Driven by OfficialSdkVolumeContentTest; prints "step: result" lines.
import { Volume } from 'e2b'

const say = (step, value) => console.log(`${step}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
const failure = (e) => `${e?.constructor?.name} ${e?.message}`
const vol = await Volume.create(`node-content-${process.pid}`)
try {
  const dir = await vol.makeDir('/notes/inner', { force: true })
  say('makeDir', `${dir.type} ${dir.path} ${dir.mode.toString(8)}`)
  const written = await vol.writeFile('/notes/a.txt', 'written by the node sdk')
  say('writeFile', `${written.type} ${written.size} ${written.uid} ${written.mtime instanceof Date}`)
  say('readFile', await vol.readFile('/notes/a.txt'))
  const bytes = await vol.readFile('/notes/a.txt', { format: 'bytes' })
  say('readBytes', String(bytes.length))
  say('list', (await vol.list('/', { depth: 2 })).map((e) => e.path).join(','))
  say('getInfo', (await vol.getInfo('/notes')).type)
  say('exists', `${await vol.exists('/notes/a.txt')} ${await vol.exists('/nope')}`)
  say('updateMetadata', (await vol.updateMetadata('/notes/a.txt', { mode: 0o600 })).mode.toString(8))
  try {
    await vol.readFile('/nope')
    say('missing', 'read')
  } catch (e) {
    say('missing', e?.constructor?.name)
  }
  const connected = await Volume.connect(vol.volumeId)
  say('connect', await connected.readFile('/notes/a.txt'))
  const forged = new Volume(vol.volumeId, vol.name, 'not-the-token')
  try {
    await forged.list('/')
    say('forged', 'listed')
  } catch (e) {
    say('forged', failure(e))
  }
  await vol.remove('/notes')
  say('removed', String(await vol.exists('/notes')))
} finally {
  say('destroy', String(await Volume.destroy(vol.volumeId)))
}
say('done', 'ok')
