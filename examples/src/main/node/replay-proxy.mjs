// A loopback HTTP proxy in front of a local server's envd port, for bench.OfficialSdkBench: it
// passes every request through, except that the answer to a process Start whose request body
// contains MARKER is recorded the first time and then replayed from memory. Pointing the official
// SDK at it measures what the SDK itself can take in when the server costs nothing, the ceiling
// any server can reach with that SDK. Prints its port on stdout once it listens.
import http from 'node:http'

const target = new URL(process.env.REPLAY_TARGET)
const marker = process.env.REPLAY_MARKER || 'head -c'
let recorded = null

function forward(req, body, res, record) {
  const upstream = http.request({
    host: target.hostname, port: target.port, method: req.method, path: req.url,
    headers: { ...req.headers, host: target.host },
  }, (up) => {
    const chunks = []
    res.writeHead(up.statusCode, up.headers)
    up.on('data', (c) => { if (record) chunks.push(c); res.write(c) })
    up.on('end', () => {
      res.end()
      if (record && up.statusCode === 200) recorded = { status: up.statusCode, headers: up.headers, body: Buffer.concat(chunks) }
    })
  })
  upstream.on('error', (e) => { res.destroy(e) })
  upstream.end(body)
}

const server = http.createServer((req, res) => {
  const parts = []
  req.on('data', (c) => parts.push(c))
  req.on('end', () => {
    const body = Buffer.concat(parts)
    const replayable = req.url === '/process.Process/Start' && body.includes(marker)
    if (replayable && recorded) {
      res.writeHead(recorded.status, recorded.headers)
      // in pieces of the size a socket would deliver, so the SDK parses as it would off the wire
      for (let i = 0; i < recorded.body.length; i += 1 << 16) res.write(recorded.body.subarray(i, i + (1 << 16)))
      res.end()
      return
    }
    forward(req, body, res, replayable)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
