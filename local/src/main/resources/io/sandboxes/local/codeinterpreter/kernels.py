"""The local code interpreter's contexts beyond Python: one persistent process each.

Part of the Sandboxes local runtime (the code-interpreter-v1 template); bridge.py makes a
ProcessContext for a context whose language is bash, javascript, typescript, r or java. No Jupyter
kernel for these comes from Debian, so the bridge drives the interpreter itself:

* bash: an interactive bash (so an interrupt abandons the running command and bash reads on, its
  variables, functions and cwd kept) reading one command line at a time on its stdin; each run's
  code is a file it sources with stdin from /dev/null.
* javascript: node running jskernel.js (beside this file), which reads one JSON request per line
  on a pipe and evaluates it in its global context (state kept, top-level await, import).
* typescript: the same, each run transpiled first (Debian's node-typescript; types are dropped,
  not checked).
* r: Rscript running rkernel.R, java: the JVM running JavaKernel (JShell in its own process,
  compiled when the image is built); each reads one request per line on a pipe, its fields
  hex-encoded (neither has JSON to hand).

Each run ends with a line on a control pipe (the run's token, and its exit status or result or
error) and the token between two 0x1e bytes written to stdout and to stderr: the bridge passes
on the output up to each stream's mark, so output written before the run ended is never cut off.
An interrupt is SIGINT to the process group. bash, interrupted while it waits for a command,
may drop the lines it had read ahead (the end of the run among them): they are sent again. A run
that does not end within INTERRUPT_GRACE seconds after the interrupt is a stuck process (node
busy in code that runs after an await, a command that ignores SIGINT): it is killed and started
again, its state lost as in a restart, so that its context takes the next run at once.
"""
import codecs
import json
import os
import pty
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
JS_KERNEL = os.path.join(HERE, "jskernel.js")
R_KERNEL = os.path.join(HERE, "rkernel.R")
JAVA_CLASSES = os.path.join(HERE, "java")
# one small JVM: a context's heap grows as its code asks, the serial collector keeps it compact
JAVA = ["java", "-XX:+UseSerialGC", "-cp", JAVA_CLASSES, "JavaKernel"]
READY_SECONDS = 30
INTERRUPT_GRACE = 0.6
# R and the JVM take an interrupt in their own time (R at its next check, the JVM on a thread it
# starts for the signal): on a loaded machine more than 0.6 s, and killing them loses the state
SLOW_INTERRUPT_GRACE = {"r": 2.0, "java": 2.0}
# a Java context that heard the interrupt while JShell compiles the run's code (a line of '~' and
# the token) stops the code as it would start: the compiler is given this long to finish
COMPILING_GRACE = 30.0
RESEND_AFTER = 0.3
STALE_MARK = re.compile(rb"\x1e[0-9a-f]{32}\x1e")
CHUNK = 64 * 1024
# the most unread output held while no run reads it (a background job writing between runs):
# beyond it the reader waits, and with it the writer
QUEUE_CHUNKS = 256
# run before bash: makes SIGINT's action the default (a bridge started in the background may have
# it ignored, and a shell cannot undo an ignore it inherits: its jobs could never be interrupted)
SIGINT_DEFAULT = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])"
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
BASH_RC = r"""
exec 251>&1 252>&2
PS1=''
PS2=''
PROMPT_COMMAND=''
set +o history +H
export PAGER=cat
__sandboxes_done() {
  printf '\036%s\036' "$1" >&251
  printf '\036%s\036' "$1" >&252
  printf '%s %s\n' "$1" "$2" >&"$SANDBOXES_CONTROL_FD"
}
"""


class ProcessContext:
    """A bash or node process, the lock that lets one execution at a time run in it, and its output readers."""

    def __init__(self, language, cwd, hooks):
        """hooks: the bridge's RequestError, dead_kernel_error(ctx), result(data, main) and KEEPALIVE_SECONDS."""
        self.id = str(uuid.uuid4())
        self.language = language
        self.cwd = cwd
        self.lock = threading.Lock()
        self.proc = None
        self.count = 0
        self._request_error = hooks.RequestError
        self._dead_error = hooks.dead_kernel_error
        self._result = hooks.result
        self._keepalive = hooks.KEEPALIVE_SECONDS
        self.start()

    def describe(self):
        return {"id": self.id, "language": self.language, "cwd": self.cwd}

    def start(self):
        if not os.path.isdir(self.cwd):
            raise self._request_error(400, "working directory %s does not exist in the sandbox" % self.cwd)
        self.dir = tempfile.mkdtemp(prefix="sandboxes-%s-" % self.language)
        self.events = queue.Queue(QUEUE_CHUNKS)
        control_r, control_w = os.pipe()
        env = dict(os.environ)
        if self.language == "bash":
            rc = os.path.join(self.dir, "rc")
            with open(rc, "w") as f:
                f.write(BASH_RC)
            env["SANDBOXES_CONTROL_FD"] = str(control_w)
            # the rc keeps the output pipes as 251 and 252 too, for the end marks, whatever the code redirects.
            # Its stdin is a terminal of its own (in a session of its own, bash takes it as its controlling
            # one): so bash runs with job control, as E2B's bash kernel does, each job its own process group
            terminal, stdin = pty.openpty()
            attrs = termios.tcgetattr(stdin)
            attrs[3] &= ~termios.ECHO
            termios.tcsetattr(stdin, termios.TCSANOW, attrs)
            cmd = [sys.executable, "-c", SIGINT_DEFAULT, "bash", "--noprofile", "--noediting", "--rcfile", rc, "-i"]
            fds = (control_w,)
        else:
            commands_r, commands_w = os.pipe()
            descriptors = [str(commands_r), str(control_w)]
            if self.language == "r":
                cmd = [sys.executable, "-c", SIGINT_DEFAULT, "Rscript", "--vanilla", R_KERNEL] + descriptors
            elif self.language == "java":
                # the JVM takes SIGINT for its own only when it was not ignored at its start
                cmd = [sys.executable, "-c", SIGINT_DEFAULT] + JAVA + descriptors
            else:
                cmd = ["node", JS_KERNEL] + descriptors + (["typescript"] if self.language == "typescript" else [])
            stdin = subprocess.DEVNULL
            fds = (commands_r, control_w)
        try:
            self.proc = subprocess.Popen(cmd, cwd=self.cwd, env=env, stdin=stdin, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, pass_fds=fds, start_new_session=True)
        except OSError as e:
            os.close(control_r)
            os.close(control_w)
            raise self._request_error(500, "the %s kernel did not start: %s" % (self.language, e))
        finally:
            os.close(stdin if self.language == "bash" else commands_r)
        os.close(control_w)
        if self.language == "bash":
            self.terminal = terminal
            self.commands = os.fdopen(os.dup(terminal), "wb", buffering=0)
            # what is written to the terminal (a program that opens /dev/tty) is read and dropped
            threading.Thread(target=self._drain, args=(os.fdopen(terminal, "rb", buffering=0),), daemon=True).start()
        else:
            self.commands = os.fdopen(commands_w, "wb", buffering=0)
        for name, stream in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr),
                             ("control", os.fdopen(control_r, "rb", buffering=0))):
            threading.Thread(target=self._read, args=(name, stream), daemon=True).start()
        # a first, empty run: it ends once the interpreter reads requests, and eats what it printed starting
        done = self._run("", {}, lambda obj: None, lambda: False, READY_SECONDS)
        if not done or not self.alive():
            self.kill()
            raise self._request_error(500, "the %s kernel did not start (no answer within %d s)" % (self.language, READY_SECONDS))
        self.count = 0

    @staticmethod
    def _drain(stream):
        try:
            while stream.read(CHUNK):
                pass
        except OSError:
            pass  # EIO: every process that had the terminal is gone
        finally:
            stream.close()

    def _read(self, name, stream):
        proc = self.proc
        try:
            while True:
                data = stream.read1(CHUNK) if hasattr(stream, "read1") else stream.read(CHUNK)
                if not data:
                    break
                self.events.put((proc, name, data))
        except (OSError, ValueError):
            pass
        self.events.put((proc, name, None))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def interrupt(self):
        """SIGINT to what runs in the foreground: bash's foreground job (or bash), node and its children."""
        if self.alive():
            try:
                group = os.tcgetpgrp(self.terminal) if self.language == "bash" else self.proc.pid
                os.killpg(group, signal.SIGINT)
            except OSError:
                pass

    def _signal_shell(self):
        try:
            os.kill(self.proc.pid, signal.SIGINT)
        except OSError:
            pass

    def kill(self):
        if self.proc is not None:
            # its whole session: bash's jobs have process groups of their own
            for pid in session_members(self.proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            self.proc.wait()
            for s in (self.commands, self.proc.stdout, self.proc.stderr):
                try:
                    if s is not None:
                        s.close()
                except OSError:
                    pass
        shutil.rmtree(getattr(self, "dir", "") or "/nonexistent", ignore_errors=True)

    def restart(self):
        self.interrupt()
        with self.lock:
            self.kill()
            self.start()

    def execute(self, code, env_vars, emit, client_gone):
        """Runs code, passing each output to emit; emit raising OSError means the client left."""
        with self.lock:
            if not self.alive():
                emit(self._dead_error(self))
                return
            bad = [k for k in env_vars if not ENV_NAME.match(k)] if self.language == "bash" else []
            if bad:
                emit({"type": "error", "name": "ValueError",
                      "value": "not a name bash can export: %s" % ", ".join(map(repr, bad)), "traceback": ""})
                return
            self.count += 1
            emit({"type": "number_of_executions", "execution_count": self.count})
            if not self._run(code, env_vars, emit, client_gone, None, self._keepalive):
                # interrupted and still running after the grace: the process is stuck, start it again
                self.kill()
                try:
                    self.start()
                except Exception:  # noqa: BLE001 - left dead: the next run says so
                    pass

    def _send(self, token, code, env_vars):
        if self.language == "bash":
            code_file = os.path.join(self.dir, "code-%s.sh" % token)
            env_file = os.path.join(self.dir, "env-%s.sh" % token)
            restore_file = os.path.join(self.dir, "restore-%s.sh" % token)
            with open(code_file, "w") as f:
                f.write(code)
            with open(env_file, "w") as f:
                f.writelines("export %s=%s\n" % (k, shlex.quote(v)) for k, v in env_vars.items())
            with open(restore_file, "w") as f:
                for k in env_vars:
                    old = os.environ.get(k)
                    f.write(("unset %s\n" % k) if old is None else ("export %s=%s\n" % (k, shlex.quote(old))))
                f.write("rm -f %s %s %s\n" % (shlex.quote(code_file), shlex.quote(env_file), shlex.quote(restore_file)))
            # one line each: an interrupt abandons the line running (the code), and bash reads the next
            lines = "source %s\nsource %s </dev/null\n__sandboxes_status=$?\n%s\n" % (
                shlex.quote(env_file), shlex.quote(code_file), self._ending(token, "$__sandboxes_status"))
            data = lines.encode()
        elif self.language in ("r", "java"):
            fields = [code] + [x for pair in env_vars.items() for x in pair]
            data = (" ".join([token] + ["x" + f.encode("utf-8", "surrogatepass").hex() for f in fields]) + "\n").encode()
        else:
            restore = {k: os.environ.get(k) for k in env_vars}
            data = (json.dumps({"token": token, "code": code, "env": env_vars, "restore": restore}) + "\n").encode()
        self.commands.write(data)
        self.commands.flush()

    def _ending(self, token, status):
        restore_file = shlex.quote(os.path.join(self.dir, "restore-%s.sh" % token))
        return "[ -f %s ] && source %s; __sandboxes_done %s %s" % (restore_file, restore_file, token, status)

    def _run(self, code, env_vars, emit, client_gone, limit=None, keepalive=None):
        """One run to its end marks; False when it was interrupted and did not end within the grace, or no answer came within limit."""
        token = uuid.uuid4().hex
        mark = b"\x1e" + token.encode() + b"\x1e"
        pending = {"stdout": b"", "stderr": b""}
        decoders = {n: codecs.getincrementaldecoder("utf-8")("replace") for n in pending}
        marked = set()
        control = b""
        answer = None
        gone = False
        gone_at = 0.0
        compiling = False
        steps = 0
        started = time.monotonic()
        last_write = started
        proc = self.proc
        try:
            self._send(token, code, env_vars)
        except OSError:
            emit(self._dead_error(self))
            return True

        def out(obj):
            nonlocal gone, gone_at, last_write
            if gone:
                return
            try:
                emit(obj)
                last_write = time.monotonic()
            except OSError:
                gone, gone_at = True, time.monotonic()
                self.interrupt()

        while answer is None or len(marked) < 2:
            try:
                source, name, data = self.events.get(timeout=0.05)
            except queue.Empty:
                if not self.alive():
                    out(self._dead_error(self))
                    return True
                now = time.monotonic()
                if limit is not None and now - started > limit:
                    return False
                if gone:
                    grace = COMPILING_GRACE if compiling else SLOW_INTERRUPT_GRACE.get(self.language, INTERRUPT_GRACE)
                    if now - gone_at > grace:
                        return False
                    if self.language == "bash" and steps == 0 and now - gone_at > RESEND_AFTER / 2:
                        # still running: a loop that went on after its job died; SIGINT to bash itself leaves it
                        steps = 1
                        self._signal_shell()
                    elif self.language == "bash" and steps == 1 and now - gone_at > RESEND_AFTER:
                        # and the end of the run again, in case bash dropped the lines it had read
                        steps = 2
                        try:
                            self.commands.write(("%s\n" % self._ending(token, 130)).encode())
                            self.commands.flush()
                        except OSError:
                            pass
                    continue
                if client_gone():
                    gone, gone_at = True, now
                    self.interrupt()
                elif keepalive is not None and now - last_write >= keepalive:
                    out({"type": "keepalive"})
                continue
            if source is not proc:
                continue
            if data is None:
                if name == "control":
                    self.proc.wait()
                    out(self._dead_error(self))
                    return True
                continue
            if name == "control":
                control += data
                while b"\n" in control:
                    line, control = control.split(b"\n", 1)
                    if line.startswith(token.encode()):
                        answer = line[len(token):].strip()
                    elif line == b"~" + token.encode():
                        compiling = True
                continue
            if name in marked:
                continue  # written after this run's end (a background job): not this run's
            buf = STALE_MARK.sub(lambda m: m.group(0) if m.group(0) == mark else b"", pending[name] + data)
            i = buf.find(mark)
            if i >= 0:
                text, pending[name] = buf[:i], b""
                marked.add(name)
            else:
                # hold back what could be the start of the mark
                keep = 0
                for k in range(min(len(mark) - 1, len(buf)), 0, -1):
                    if mark.startswith(buf[-k:]):
                        keep = k
                        break
                text, pending[name] = (buf[:-keep], buf[-keep:]) if keep else (buf, b"")
            decoded = decoders[name].decode(text, final=name in marked)
            if decoded:
                out({"type": name, "text": decoded, "timestamp": _now()})
        if not gone:
            for event in self._answer(answer):
                out(event)
        return True

    def _answer(self, answer):
        if self.language == "bash":
            try:
                status = int(answer)
            except ValueError:
                status = 1
            # bash_kernel's shape, which E2B's bash contexts have: no name, the exit status as the value
            return [] if status == 0 else [{"type": "error", "name": "", "value": str(status), "traceback": ""}]
        reply = json.loads(answer.decode("utf-8", "replace"))
        # R's values are displays, as IRkernel sends them (none is the main result), shown before an error
        events = [self._result(d, False) for d in reply.get("displays") or []]
        if "error" in reply:
            e = reply["error"]
            return events + [{"type": "error", "name": e.get("name", ""), "value": e.get("value", ""),
                              "traceback": e.get("traceback", "")}]
        if "result" in reply and reply["result"] is not None:
            events.append(self._result(reply["result"], True))
        return events


def session_members(sid):
    """The processes of a session (the session leader among them), read from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as f:
                stat = f.read()
            fields = stat[stat.rindex(b")") + 2:].split()
            if int(fields[3]) == sid:  # state, ppid, pgrp, session
                members.append(int(entry))
        except (OSError, ValueError, IndexError):
            pass
    if sid not in members:
        members.append(sid)
    return members


def _now():
    import datetime
    return datetime.datetime.now(datetime.timezone.utc).isoformat()
