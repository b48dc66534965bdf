// A loopback HTTP proxy in front of a local server's envd port, for bench.OfficialSdkBench: it
// passes every request through, except that a process Start whose request body contains MARKER
// is answered by a fake envd from memory: a start event, REPLAY_BYTES of stdout (zeros) in
// messages of 32 KiB, an end event, as envd would stream them. Pointing the official SDK at it
// measures what the SDK itself can take in when the server costs nothing, the ceiling any server
// can reach with that SDK. Prints its port on stdout once it listens.
import http from 'node:http'

const target = new URL(process.env.REPLAY_TARGET)
const marker = process.env.REPLAY_MARKER || 'head -c'
const total = Number(process.env.REPLAY_BYTES || 50_000_000)

function envelope(flags, json) {
  const payload = Buffer.from(JSON.stringify(json))
  const head = Buffer.alloc(5)
  head.writeUInt8(flags, 0)
  head.writeUInt32BE(payload.length, 1)
  return Buffer.concat([head, payload])
}

// the whole answer, built once: what envd sends for a command printing `total` bytes
const fake = (() => {
  const parts = [envelope(0, { event: { start: { pid: 4242 } } })]
  const piece = 32 * 1024
  const full = Buffer.alloc(piece).toString('base64')
  for (let sent = 0; sent < total; sent += piece) {
    const n = Math.min(piece, total - sent)
    parts.push(envelope(0, { event: { data: { stdout: n === piece ? full : Buffer.alloc(n).toString('base64') } } }))
  }
  parts.push(envelope(0, { event: { end: { exited: true, status: 'exit status 0' } } }))
  parts.push(envelope(2, {}))
  return Buffer.concat(parts)
})()

function forward(req, body, res) {
  const upstream = http.request({
    host: target.hostname, port: target.port, method: req.method, path: req.url,
    headers: { ...req.headers, host: target.host },
  }, (up) => {
    res.writeHead(up.statusCode, up.headers)
    up.on('data', (c) => res.write(c))
    up.on('end', () => res.end())
  })
  upstream.on('error', (e) => { res.destroy(e) })
  upstream.end(body)
}

const server = http.createServer((req, res) => {
  const parts = []
  req.on('data', (c) => parts.push(c))
  req.on('end', () => {
    const body = Buffer.concat(parts)
    if (req.url === '/process.Process/Start' && body.includes(marker)) {
      res.writeHead(200, { 'content-type': 'application/connect+json' })
      // in pieces of the size a socket would deliver, so the SDK parses as it would off the wire
      for (let i = 0; i < fake.length; i += 1 << 16) res.write(fake.subarray(i, i + (1 << 16)))
      res.end()
      return
    }
    forward(req, body, res)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
