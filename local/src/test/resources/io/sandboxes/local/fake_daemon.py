#!/usr/bin/env python3
"""A hostile sandbox daemon, for the host's tests and benchmark.

Run as root inside a real sandbox: it stops the real daemon's worker (SIGSTOP, so the supervisor
does not start another), connects to the mounted socket as any process in the sandbox can, says
HELLO as protocol FAKE_PROTOCOL (default 3, the host's own) with worker pid 424242 (so the host's
side can tell it connected), and then answers the host's requests the way MODE says:

  silent        reads every request and answers none
  deaf          never reads a byte after its HELLO
  zero-flood    answers PROC_START, then floods zero-length PROC_OUTPUT frames, ignoring credit
  flood         answers PROC_START, then sends 1-byte PROC_OUTPUT frames as fast as its credit allows
  many-entries  answers FILE_STAT with two entries
  long-name     answers FILE_STAT with an entry named by 1 000 000 bytes
  big-answers   answers FILE_LIST with 3000 entries of 60 KiB each (valid ones), whatever the host says
  watch-flood   answers FILE_STAT with a folder and WATCH with valid 4000-byte events, as fast as its credit allows
  watch-crafted answers FILE_STAT with a folder and WATCH with 250 events whose 4081-byte names
                are made to make a backtracking pattern slow, then one named "marker"
  spoof         answers every request with an OK on a stream the host never opened
  bad-disk      answers FILE_STATFS with a file system of 0 bytes
  reconnect     connects, says HELLO and hangs up, 200 times in a row; writes the seconds that took to /tmp/fake.done

Anything a mode does not cover is answered with an ERROR (unsupported), except a FILE_STATFS to a
fake of protocol 2, which hangs up as a real daemon of 2 does on a type it does not know. When the host hangs up,
or FAKE_LIFETIME seconds (default 120) have passed, it lets the real worker go on (SIGCONT) and
exits, so the sandbox has its daemon back.
"""
import atexit
import os
import socket
import struct
import sys
import threading
import time

PING, CANCEL, CREDIT = 0x01, 0x02, 0x03
PROC_START, FILE_STAT, FILE_LIST, WATCH, FILE_STATFS = 0x10, 0x20, 0x21, 0x2A, 0x2D
HELLO, OK, ERROR = 0x40, 0x41, 0x42
PROC_STARTED, PROC_OUTPUT = 0x50, 0x51
ENTRY, WATCH_EVENT, FS_INFO = 0x60, 0x63, 0x66
INITIAL_CREDIT, FRAME_COST = 8192, 128
SOCKET = "/run/sandboxes/envd.sock"

mode = sys.argv[1]
protocol = int(os.environ.get("FAKE_PROTOCOL", "3"))
time.sleep(float(os.environ.get("FAKE_DELAY", "1")))  # lets the exec that started us finish first
os.system("pkill -STOP -x envd-worker")
atexit.register(lambda: os.system("pkill -CONT -x envd-worker"))


def lifetime():
    time.sleep(float(os.environ.get("FAKE_LIFETIME", "120")))
    os.system("pkill -CONT -x envd-worker")
    os._exit(0)


threading.Thread(target=lifetime, daemon=True).start()


def u32(v):
    return struct.pack(">I", v)


def string(b):
    return u32(len(b)) + b


def frame(stream, typ, payload=b"", flags=0):
    return struct.pack(">IIBBH", len(payload), stream, typ, flags, 0) + payload


def hello():
    return frame(0, HELLO, struct.pack(">H", protocol) + u32(424242) + u32(0) + u32(1 << 20) + u32(1 << 20)
                 + u32(INITIAL_CREDIT) + u32(FRAME_COST))


def entry(name=b"f", path=b"/f", meta=(), kind=1):
    return (string(name) + string(path) + bytes([kind]) + u32(0o100644 if kind == 1 else 0o40755) + struct.pack(">q", 1) + u32(0) + u32(0)
            + string(b"root") + string(b"root") + struct.pack(">q", 0) + u32(0) + string(b"") + bytes([0]) + u32(0)
            + struct.pack(">q", 0) + u32(len(meta)) + b"".join(string(k) + string(v) for k, v in meta))


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(SOCKET)
    return s


if mode == "reconnect":
    began = time.monotonic()
    for _ in range(200):
        try:
            s = connect()
            s.sendall(hello())
            s.close()
        except OSError:
            time.sleep(0.01)
    with open("/tmp/fake.done", "w") as done:
        done.write("%.2f\n" % (time.monotonic() - began))
    sys.exit(0)

sock = connect()
lock = threading.Lock()
credit = {}
credit_changed = threading.Condition()


def send(data):
    with lock:
        sock.sendall(data)


def take_credit(stream, cost):
    """Waits until the host has given the stream credit for cost."""
    with credit_changed:
        while credit.get(stream, 0) < cost:
            credit_changed.wait()
        credit[stream] -= cost


def recv_exact(n):
    b = bytearray()
    while len(b) < n:
        chunk = sock.recv(n - len(b))
        if not chunk:
            sys.exit(0)
        b += chunk
    return bytes(b)


def zero_flood(stream):
    blob = frame(stream, PROC_OUTPUT, b"\x01") * 10000
    for _ in range(1000):
        send(blob)


def flood(stream):
    one = frame(stream, PROC_OUTPUT, b"\x01x")
    while True:
        take_credit(stream, 1 + FRAME_COST)
        send(one)


def big_answers(stream):
    big = frame(stream, ENTRY, entry(meta=[(b"user.e2b.k", b"v" * 60000)]))
    for _ in range(3000):
        send(big)
    send(frame(stream, OK))


def watch_flood(stream):
    send(frame(stream, WATCH_EVENT, bytes([0]) + string(b"")))
    n = 0
    while True:
        n += 1
        payload = bytes([1]) + string(("%08d" % n).encode() + b"n" * 3992)
        take_credit(stream, len(payload) + FRAME_COST)
        send(frame(stream, WATCH_EVENT, payload))


def watch_crafted(stream):
    send(frame(stream, WATCH_EVENT, bytes([0]) + string(b"")))
    for name in [b"/." * 2040 + b"x"] * 250 + [b"marker"]:
        payload = bytes([1]) + string(name)
        take_credit(stream, len(payload) + FRAME_COST)
        send(frame(stream, WATCH_EVENT, payload))


send(hello())
if mode == "deaf":
    while True:
        time.sleep(3600)

while True:
    header = recv_exact(12)
    length, stream, typ = struct.unpack(">IIB", header[:9])
    payload = recv_exact(length)
    if typ == CREDIT:
        with credit_changed:
            credit[stream] = credit.get(stream, INITIAL_CREDIT) + struct.unpack(">I", payload)[0]
            credit_changed.notify_all()
        continue
    if typ == FILE_STATFS and protocol < 3:
        sys.exit("a FILE_STATFS sent to a daemon of protocol %d" % protocol)
    if typ == CANCEL or mode == "silent":
        continue
    with credit_changed:
        credit.setdefault(stream, INITIAL_CREDIT)
    if mode == "spoof":
        send(frame(0x7FFFFFF0, OK))
    elif typ == PING:
        send(frame(stream, OK))
    elif typ == PROC_START and mode in ("zero-flood", "flood"):
        send(frame(stream, PROC_STARTED, u32(1000 + stream)))
        threading.Thread(target=zero_flood if mode == "zero-flood" else flood, args=(stream,), daemon=True).start()
    elif typ == FILE_STAT and mode == "many-entries":
        send(frame(stream, ENTRY, entry()) + frame(stream, ENTRY, entry()) + frame(stream, OK))
    elif typ == FILE_STAT and mode == "long-name":
        send(frame(stream, ENTRY, entry(name=b"n" * 1000000)) + frame(stream, OK))
    elif typ == FILE_LIST and mode == "big-answers":
        threading.Thread(target=big_answers, args=(stream,), daemon=True).start()
    elif typ == FILE_STAT and mode in ("watch-flood", "watch-crafted"):
        send(frame(stream, ENTRY, entry(name=b"tmp", path=b"/tmp", kind=2)) + frame(stream, OK))
    elif typ == WATCH and mode == "watch-flood":
        threading.Thread(target=watch_flood, args=(stream,), daemon=True).start()
    elif typ == WATCH and mode == "watch-crafted":
        threading.Thread(target=watch_crafted, args=(stream,), daemon=True).start()
    elif typ == FILE_STATFS and mode == "bad-disk":
        send(frame(stream, FS_INFO, struct.pack(">qqq", 0, 5, 0)) + frame(stream, OK))
    else:
        send(frame(stream, ERROR, struct.pack(">Hi", 10, 0) + string(b"the fake daemon does not do that")))
