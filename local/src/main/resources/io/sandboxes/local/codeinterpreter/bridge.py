#!/usr/bin/env python3
"""The local code interpreter: E2B's port-49999 protocol served over Jupyter kernels.

Part of the Sandboxes local runtime (the code-interpreter-v1 template). Standard library plus
jupyter_client; one ipykernel process per python context, started and signalled by this bridge
itself (no Jupyter server); a context of another language (bash, javascript, typescript, r, java)
is one process of that interpreter, driven by kernels.py beside this file. Endpoints: GET /health,
POST /execute (one JSON object per line), GET and POST /contexts, POST /contexts/{id}/restart,
DELETE /contexts/{id}.
"""
import datetime
import json
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from jupyter_client import BlockingKernelClient
from jupyter_client.connect import write_connection_file

import kernels

PORT = int(os.environ.get("SANDBOXES_BRIDGE_PORT", "49999"))
# where a context works unless asked otherwise, as E2B's (whose kernels, like these, run as root)
DEFAULT_CWD = "/home/user"
# The server's relay learns that a client went away (a runCode timeout closes its stream) only
# when a write to that client fails, which is the second write after the close: a quiet execution
# writes a keepalive this often, so a timed-out run is interrupted within a few tenths of a second
# and the next run in its context starts in under one (with 10 s between keepalives it waited about
# 20 s; CodeInterpreterLanguagesTest). A keepalive is 20 bytes: ten a second cost nothing.
KEEPALIVE_SECONDS = 0.1
POLL_SECONDS = 0.05
MAX_BODY = 32 * 1024 * 1024
KERNEL_READY_SECONDS = 60
INTERRUPT_GRACE_SECONDS = 10
# what a context can be, and the names E2B's server takes for them (it lowercases and strips first)
LANGUAGES = ("python", "javascript", "typescript", "bash", "r", "java")
ALIASES = {"js": "javascript", "ts": "typescript"}
MIME_KEYS = {
    "text/plain": "text", "text/html": "html", "text/markdown": "markdown", "image/svg+xml": "svg",
    "image/png": "png", "image/jpeg": "jpeg", "application/pdf": "pdf", "text/latex": "latex",
    "application/json": "json", "application/javascript": "javascript", "e2b/data": "data", "e2b/chart": "chart",
}
RUNTIME_DIR = tempfile.mkdtemp(prefix="sandboxes-kernels-")
# the e2b/data and e2b/chart formatters, loaded into each kernel (beside this file in the image)
RESULTS_MODULE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results.py")
KERNEL_SETUP = """
def _sandboxes_setup(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("sandboxes_results", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.install(get_ipython())
_sandboxes_setup(%r)
del _sandboxes_setup
""" % RESULTS_MODULE


class RequestError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def normalize_language(language):
    if not language:
        return "python"
    language = str(language).strip().lower()
    language = ALIASES.get(language, language)
    if language not in LANGUAGES:
        raise RequestError(400, "language '%s' is not supported by the local code interpreter (supported: %s; %s)"
                           % (language, ", ".join(LANGUAGES), ", ".join("%s means %s" % a for a in ALIASES.items())))
    return language


def new_context(language, cwd):
    """A context of that (normalized) language: a Jupyter kernel for python, a process of its own otherwise."""
    if language == "python":
        return Context(language, cwd)
    return kernels.ProcessContext(language, cwd, sys.modules[__name__])


class Context:
    """One kernel and the lock that lets one execution at a time run in it."""

    def __init__(self, language, cwd):
        self.id = str(uuid.uuid4())
        self.language = language
        self.cwd = cwd
        self.lock = threading.Lock()
        self.proc = None
        self.client = None
        self.connection_file = None
        self.start()

    def describe(self):
        return {"id": self.id, "language": self.language, "cwd": self.cwd}

    def start(self):
        if not os.path.isdir(self.cwd):
            raise RequestError(400, "working directory %s does not exist in the sandbox" % self.cwd)
        path = os.path.join(RUNTIME_DIR, "kernel-%s.json" % uuid.uuid4())
        write_connection_file(path, ip="127.0.0.1", key=uuid.uuid4().hex.encode())
        self.connection_file = path
        # its own session: an interrupt reaches the kernel alone, a kill takes its children too. With
        # JPY_PARENT_PID, ipykernel ends itself once this bridge is gone (killed, then started again)
        env = dict(os.environ, JPY_PARENT_PID=str(os.getpid()))
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "ipykernel_launcher", "-f", path], cwd=self.cwd, env=env,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         start_new_session=True)
        except OSError as e:
            os.unlink(path)
            raise RequestError(500, "Failed to set working directory %s: %s" % (self.cwd, e.strerror or e))
        client = BlockingKernelClient(connection_file=path)
        client.load_connection_file()
        client.start_channels()
        try:
            self._await_ready(client)
            self._setup(client)
        except Exception as e:  # noqa: BLE001 - any failure to come up is the same to the caller
            client.stop_channels()
            self.kill()
            raise RequestError(500, "the %s kernel did not start: %s" % (self.language, e))
        self.client = client

    def _await_ready(self, client):
        """Ready once a kernel_info request is answered on shell and seen on iopub (so no output is missed)."""
        deadline = time.monotonic() + KERNEL_READY_SECONDS
        asked = set()
        replied = False
        published = False
        while not (replied and published):
            if self.proc.poll() is not None:
                raise RuntimeError("the kernel exited with status %s" % self.proc.poll())
            if time.monotonic() > deadline:
                raise RuntimeError("no answer within %d s" % KERNEL_READY_SECONDS)
            asked.add(client.kernel_info())
            until = time.monotonic() + 1.0
            while time.monotonic() < until and not (replied and published):
                try:
                    msg = client.get_shell_msg(timeout=0.05)
                    replied = replied or msg["parent_header"].get("msg_id") in asked
                except queue.Empty:
                    pass
                try:
                    while True:
                        msg = client.get_iopub_msg(timeout=0.05)
                        published = published or msg["parent_header"].get("msg_id") in asked
                except queue.Empty:
                    pass

    def _setup(self, client):
        """Loads the rich-result formatters; a kernel without them is not started (its charts would be missing)."""
        msg_id = client.execute(KERNEL_SETUP, silent=True, store_history=False, allow_stdin=False)
        deadline = time.monotonic() + KERNEL_READY_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("the kernel exited with status %s during its setup" % self.proc.poll())
            try:
                msg = client.get_shell_msg(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                content = msg["content"]
                if content.get("status") != "ok":
                    raise RuntimeError("its setup failed: %s: %s" % (content.get("ename"), content.get("evalue")))
                return
        raise RuntimeError("its setup did not finish within %d s" % KERNEL_READY_SECONDS)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def interrupt(self):
        if self.alive():
            try:
                os.kill(self.proc.pid, signal.SIGINT)
            except OSError:
                pass

    def kill(self):
        if self.client is not None:
            try:
                self.client.stop_channels()
            except Exception:  # noqa: BLE001
                pass
            self.client = None
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
        if self.connection_file:
            try:
                os.unlink(self.connection_file)
            except OSError:
                pass

    def restart(self):
        self.interrupt()
        with self.lock:
            self.kill()
            self.start()

    def _run_silently(self, code):
        msg_id = self.client.execute(code, silent=True, store_history=False, allow_stdin=False)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.alive():
            try:
                msg = self.client.get_iopub_msg(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status" \
                    and msg["content"].get("execution_state") == "idle":
                return

    def execute(self, code, env_vars, emit, client_gone):
        """Runs code, passing each output to emit; emit raising OSError means the client left."""
        with self.lock:
            if not self.alive():
                emit(dead_kernel_error(self))
                return
            restore = None
            if env_vars:
                restore = "import os as _o\nfor _k, _v in %r.items():\n  (_o.environ.pop(_k, None) if _v is None else _o.environ.__setitem__(_k, _v))\ndel _o" \
                          % {k: os.environ.get(k) for k in env_vars}
                self._run_silently("import os as _o; _o.environ.update(%r); del _o" % dict(env_vars))
            try:
                self._execute(code, emit, client_gone)
            finally:
                if restore and self.alive():
                    self._run_silently(restore)
                self._drain_shell()

    def _execute(self, code, emit, client_gone):
        # executions reach a kernel one at a time (the context's lock), so there is never a queue
        # for an error to stop; asked to stop on errors, the kernel aborts whatever arrives in the
        # moment after one, and that is the taking back of env vars, or the next run itself
        msg_id = self.client.execute(code, store_history=True, allow_stdin=False, stop_on_error=False)
        gone = False
        gone_at = 0.0
        last_write = time.monotonic()
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=POLL_SECONDS)
            except queue.Empty:
                if not self.alive():
                    if not gone:
                        emit(dead_kernel_error(self))
                    return
                if gone:
                    if time.monotonic() - gone_at > INTERRUPT_GRACE_SECONDS:
                        return  # the interrupted code ignores SIGINT; the next execution waits behind it in the kernel
                    continue
                if client_gone():
                    gone, gone_at = True, time.monotonic()
                    self.interrupt()
                elif time.monotonic() - last_write >= KEEPALIVE_SECONDS:
                    if self._emit(emit, {"type": "keepalive"}):
                        last_write = time.monotonic()
                    else:
                        gone, gone_at = True, time.monotonic()
                        self.interrupt()
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            content = msg["content"]
            out = None
            if kind == "status" and content.get("execution_state") == "idle":
                return
            if kind == "stream":
                out = {"type": "stderr" if content.get("name") == "stderr" else "stdout", "text": content.get("text", ""),
                       "timestamp": now()}
            elif kind in ("execute_result", "display_data"):
                out = result(content.get("data", {}), kind == "execute_result")
            elif kind == "error":
                out = {"type": "error", "name": content.get("ename", ""), "value": content.get("evalue", ""),
                       "traceback": "\n".join(content.get("traceback", []))}
            elif kind == "execute_input":
                out = {"type": "number_of_executions", "execution_count": content.get("execution_count", 0)}
            if out is not None and not gone:
                if self._emit(emit, out):
                    last_write = time.monotonic()
                else:
                    gone, gone_at = True, time.monotonic()
                    self.interrupt()

    @staticmethod
    def _emit(emit, obj):
        try:
            emit(obj)
            return True
        except OSError:
            return False

    def _drain_shell(self):
        if self.client is None:
            return
        while True:
            try:
                self.client.get_shell_msg(timeout=0)
            except queue.Empty:
                return
            except Exception:  # noqa: BLE001
                return


def dead_kernel_error(ctx):
    code = ctx.proc.poll() if ctx.proc is not None else None
    return {"type": "error", "name": "DeadKernelError",
            "value": "the kernel of context %s died (exit status %s); restart the context to go on" % (ctx.id, code),
            "traceback": ""}


def result(data, main):
    out = {"type": "result", "is_main_result": main}
    extra = {}
    for mime, value in data.items():
        key = MIME_KEYS.get(mime)
        if key is None:
            extra[mime] = value
            continue
        if key in ("png", "jpeg") and isinstance(value, str):
            value = value.strip()
        # E2B's server does this to every text/plain: 'a' (a str's repr) is a; the rest is kept as given
        if key == "text" and isinstance(value, str) and value and (
                (value.startswith("'") and value.endswith("'")) or (value.startswith('"') and value.endswith('"'))):
            value = value[1:-1]
        out[key] = value
    if extra:
        out["extra"] = extra
    return out


class Reserved:
    """A default context listed before its process runs: it starts on its first use, with this id."""

    def __init__(self, language, cwd):
        self.id = str(uuid.uuid4())
        self.language = language
        self.cwd = cwd

    def describe(self):
        return {"id": self.id, "language": self.language, "cwd": self.cwd}


class Contexts:
    def __init__(self):
        self.lock = threading.Lock()
        self.by_id = {}
        self.default = {}
        self.creating = {language: threading.Lock() for language in LANGUAGES}

    def create(self, language, cwd):
        ctx = new_context(language, cwd)
        with self.lock:
            self.by_id[ctx.id] = ctx
        return ctx

    def reserve_default(self, language):
        """Lists the language's default context now and starts it on its first use, as E2B lists
        JavaScript's beside Python's from the start (without a node process in every sandbox)."""
        with self.lock:
            if language not in self.default:
                ctx = Reserved(language, DEFAULT_CWD)
                self.by_id[ctx.id] = ctx
                self.default[language] = ctx

    def _started(self, reserved):
        """The context a reserved one stands for, started now under the same id."""
        with self.creating[reserved.language]:
            with self.lock:
                ctx = self.by_id.get(reserved.id)
            if ctx is None:
                raise RequestError(404, "Context %s not found" % reserved.id)
            if not isinstance(ctx, Reserved):
                return ctx
            ctx = new_context(ctx.language, ctx.cwd)
            ctx.id = reserved.id
            with self.lock:
                if reserved.id not in self.by_id:  # removed while it started
                    ctx.kill()
                    raise RequestError(404, "Context %s not found" % reserved.id)
                self.by_id[ctx.id] = ctx
                if self.default.get(ctx.language) is reserved:
                    self.default[ctx.language] = ctx
            return ctx

    def get(self, context_id):
        with self.lock:
            ctx = self.by_id.get(context_id)
        if ctx is None:
            raise RequestError(404, "Context %s not found" % context_id)
        return self._started(ctx) if isinstance(ctx, Reserved) else ctx

    def default_for(self, language):
        """The language's default context, made on its first use (python's when the bridge starts), as E2B's server does."""
        with self.lock:
            ctx = self.default.get(language)
            present = ctx is not None and ctx.id in self.by_id
        if present:
            return self._started(ctx) if isinstance(ctx, Reserved) else ctx
        with self.creating[language]:
            with self.lock:
                ctx = self.default.get(language)
                if ctx is not None and ctx.id in self.by_id and not isinstance(ctx, Reserved):
                    return ctx
            ctx = self.create(language, DEFAULT_CWD)
            with self.lock:
                self.default[language] = ctx
            return ctx

    def remove(self, context_id):
        with self.lock:
            ctx = self.by_id.pop(context_id, None)
        if ctx is None:
            raise RequestError(404, "Context %s not found" % context_id)
        if isinstance(ctx, Reserved):
            return
        ctx.interrupt()
        with ctx.lock:
            ctx.kill()

    def list(self):
        with self.lock:
            return [c.describe() for c in self.by_id.values()]


CONTEXTS = Contexts()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "sandboxes-code-interpreter"

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        # events are small writes: without this, each waits for the previous one's delayed ACK
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise RequestError(411, "a request body needs a Content-Length")
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY:
            raise RequestError(413, "request body over %d bytes" % MAX_BODY)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return {}
        try:
            body = json.loads(raw)
        except ValueError as e:
            raise RequestError(400, "the body is not JSON: %s" % e)
        if not isinstance(body, dict):
            raise RequestError(400, "the body must be a JSON object")
        return body

    def _send(self, status, payload, content_type="application/json"):
        data = payload if isinstance(payload, bytes) else (
            payload.encode() if content_type.startswith("text/") else json.dumps(payload).encode())
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _dispatch(self, method):
        try:
            path = self.path.split("?", 1)[0].rstrip("/") or "/"
            parts = [p for p in path.split("/") if p]
            if method == "GET" and path == "/health":
                return self._send(200, "OK")
            if path == "/execute" and method == "POST":
                return self._execute(self._body())
            if path == "/contexts" and method == "POST":
                body = self._body()
                ctx = CONTEXTS.create(normalize_language(body.get("language")), body.get("cwd") or DEFAULT_CWD)
                return self._send(200, ctx.describe())
            if path == "/contexts" and method == "GET":
                return self._send(200, CONTEXTS.list())
            if len(parts) == 3 and parts[0] == "contexts" and parts[2] == "restart" and method == "POST":
                self._body()
                CONTEXTS.get(parts[1]).restart()
                return self._send(200, None)
            if len(parts) == 2 and parts[0] == "contexts" and method == "DELETE":
                CONTEXTS.remove(parts[1])
                return self._send(200, None)
            raise RequestError(404, "no %s %s here" % (method, path))
        except RequestError as e:
            self._send(e.status, str(e), "text/plain; charset=utf-8")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def _execute(self, body):
        code = body.get("code")
        if not isinstance(code, str):
            raise RequestError(400, "code must be a string")
        if body.get("context_id") and body.get("language"):
            raise RequestError(400, "Only one of context_id or language can be provided")
        env_vars = body.get("env_vars") or {}
        if not isinstance(env_vars, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env_vars.items()):
            raise RequestError(400, "env_vars must map names to strings")
        if body.get("context_id"):
            ctx = CONTEXTS.get(str(body["context_id"]))
        else:
            ctx = CONTEXTS.default_for(normalize_language(body.get("language")))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

        def emit(obj):
            data = (json.dumps(obj) + "\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        try:
            ctx.execute(code, env_vars, emit, self._client_gone)
            emit({"type": "end_of_execution"})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _client_gone(self):
        """True when the client closed its side: no request may follow, so it stopped waiting."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True


def main():
    CONTEXTS.default_for("python")
    CONTEXTS.reserve_default("javascript")
    server = ThreadingHTTPServer(("0.0.0.0", PORT), Handler)
    server.daemon_threads = True
    print("code interpreter listening on %d" % PORT, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
