# Three WebSocket services for WebSocketProxyTest, on the sandbox's loopback:
# 8765 echoes each frame back (after a handshake that names the Host it saw),
# 8766 accepts and never answers, 8767 answers 101 and then sends frames without end.
import base64, hashlib, socket, struct, threading

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def head(c):
    d = b""
    while b"\r\n\r\n" not in d:
        x = c.recv(4096)
        if not x:
            return None
        d += x
    h, rest = d.split(b"\r\n\r\n", 1)
    hs = {}
    for line in h.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        hs[k.strip().lower()] = v.strip()
    return hs, rest


def switch(c, hs):
    # as RFC 6455 servers do: no switch unless the request asks for it
    if hs.get(b"upgrade", b"").lower() != b"websocket" or b"upgrade" not in hs.get(b"connection", b"").lower():
        c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        raise EOFError
    accept = base64.b64encode(hashlib.sha1(hs[b"sec-websocket-key"] + GUID).digest())
    c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Seen-Host: "
              + hs.get(b"host", b"") + b"\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")


class Reader:
    def __init__(self, c, rest):
        self.c, self.b = c, rest

    def take(self, k):
        while len(self.b) < k:
            x = self.c.recv(65536)
            if not x:
                raise EOFError
            self.b += x
        r, self.b = self.b[:k], self.b[k:]
        return r


def echo(c):
    r = head(c)
    if r is None:
        return
    hs, rest = r
    rd = Reader(c, rest)
    try:
        switch(c, hs)
        while True:
            b0, b1 = rd.take(2)
            n = b1 & 127
            if n == 126:
                n = struct.unpack(">H", rd.take(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", rd.take(8))[0]
            mask = rd.take(4) if b1 & 128 else b"\0\0\0\0"
            whole = 4 * (n // 4 + 1)
            m = int.from_bytes(mask * (n // 4 + 1), "big") >> (8 * (whole - n))
            p = (int.from_bytes(rd.take(n), "big") ^ m).to_bytes(n, "big")
            if n < 126:
                h = bytes([b0, n])
            elif n < 65536:
                h = bytes([b0, 126]) + struct.pack(">H", n)
            else:
                h = bytes([b0, 127]) + struct.pack(">Q", n)
            c.sendall(h + p)
            if b0 & 15 == 8:
                break
    except (EOFError, OSError):
        pass
    c.close()


held = []


def silent(c):
    held.append(c)
    with open("/tmp/silent-held", "w") as f:
        f.write(str(len(held)))


def flood(c):
    r = head(c)
    if r is None:
        return
    try:
        switch(c, r[0])
    except EOFError:
        c.close()
        return
    frame = bytes([0x82, 126, 0xFF, 0xFF]) + b"x" * 0xFFFF
    try:
        while True:
            c.sendall(frame)
    except OSError:
        c.close()


def serve(port, fn):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(256)
    while True:
        c, _ = s.accept()
        threading.Thread(target=fn, args=(c,), daemon=True).start()


for port, fn in ((8766, silent), (8767, flood)):
    threading.Thread(target=serve, args=(port, fn), daemon=True).start()
serve(8765, echo)
