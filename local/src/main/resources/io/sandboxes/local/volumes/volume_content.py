# The volume content API's file operations, run by the server inside a volume's helper instance
# (the volume mounted at ROOT, nothing else there). argv: OP PATH [key=value ...]; a result is
# JSON on stdout; a refusal is {"status", "message"} on stderr with exit code 2. Paths are the
# volume's own: "/" is ROOT, and ".." cannot climb out of it (cleaned lexically first).
import errno, json, os, posixpath, stat, sys
from datetime import datetime, timezone

ROOT = "/volume"
DIR_MODE, FILE_MODE, OWNER = 0o777, 0o666, 9090


class Refused(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def clean(p):
    return posixpath.normpath("/" + p.lstrip("/")) if p else "/"


def real(vpath):
    return ROOT if vpath == "/" else ROOT + vpath


def when(t):
    return datetime.fromtimestamp(t, timezone.utc).isoformat().replace("+00:00", "Z")


def entry(vpath):
    full = real(vpath)
    st = os.lstat(full)
    kind = "directory" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "symlink" if stat.S_ISLNK(st.st_mode) else "unknown"
    out = {"name": posixpath.basename(vpath) if vpath != "/" else "/", "path": vpath, "type": kind, "size": st.st_size,
           "mode": st.st_mode & 0o777, "uid": st.st_uid, "gid": st.st_gid,
           "atime": when(st.st_atime), "mtime": when(st.st_mtime), "ctime": when(st.st_ctime)}
    if kind == "symlink":
        out["target"] = os.readlink(full)
    return out


def failed(e, what):
    if isinstance(e, FileExistsError):
        return Refused(409, what + ": the path already exists")
    if isinstance(e, FileNotFoundError):
        return Refused(404, what + ": the path was not found")
    if isinstance(e, NotADirectoryError):
        return Refused(400, what + ": a component of the path is not a directory")
    if isinstance(e, IsADirectoryError):
        return Refused(400, what + ": the path is a directory")
    if isinstance(e, OSError) and e.errno == errno.ENOSPC:
        return Refused(507, what + ": the volume is full")
    return e


def number(opts, key, default):
    v = opts.get(key)
    return default if v is None else int(v)


def ensure_dirs(vdir, uid, gid):
    made = []
    cur = vdir
    while not os.path.lexists(real(cur)):
        made.append(cur)
        if cur == "/":
            break
        cur = posixpath.dirname(cur)
    os.makedirs(real(vdir), DIR_MODE, exist_ok=True)
    for d in reversed(made):
        os.chmod(real(d), DIR_MODE)
        os.chown(real(d), uid, gid)


def listing(vpath, depth, out):
    names = sorted(os.listdir(real(vpath)))
    for n in names:
        child = posixpath.join(vpath, n)
        try:
            e = entry(child)
        except FileNotFoundError:
            continue
        out.append(e)
        if e["type"] == "directory" and depth > 1:
            try:
                listing(child, depth - 1, out)
            except FileNotFoundError:
                pass


def main(op, vpath, opts):
    if op == "stat":
        try:
            return entry(vpath)
        except OSError as e:
            raise failed(e, "stat")
    if op == "list":
        depth = max(number(opts, "depth", 1), 1)
        if depth > 10:
            raise Refused(400, "depth must be from 1 to 10")
        out = []
        try:
            listing(vpath, depth, out)
        except OSError as e:
            raise failed(e, "list")
        return out
    uid, gid = number(opts, "uid", OWNER), number(opts, "gid", OWNER)
    if op == "mkdir":
        mode = number(opts, "mode", DIR_MODE)
        force = opts.get("force") == "true"
        try:
            if force:
                ensure_dirs(posixpath.dirname(vpath), uid, gid)
            try:
                os.mkdir(real(vpath), mode)
                os.chown(real(vpath), uid, gid)
                os.chmod(real(vpath), mode)
            except FileExistsError:
                if not force or not stat.S_ISDIR(os.stat(real(vpath)).st_mode):
                    raise
            return entry(vpath)
        except OSError as e:
            raise failed(e, "create directory")
    if op == "write":
        mode = number(opts, "mode", FILE_MODE)
        force = opts.get("force") == "true"
        try:
            if force:
                ensure_dirs(posixpath.dirname(vpath), uid, gid)
            flags = os.O_CREAT | os.O_WRONLY | (os.O_TRUNC if force else os.O_EXCL)
            fd = os.open(real(vpath), flags, mode & 0o777)
            with os.fdopen(fd, "wb") as f:
                while True:
                    chunk = sys.stdin.buffer.read(1 << 20)
                    if not chunk:
                        break
                    f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            os.chown(real(vpath), uid, gid)
            os.chmod(real(vpath), mode)
            return entry(vpath)
        except OSError as e:
            raise failed(e, "write file")
    if op == "update":
        try:
            os.lstat(real(vpath))
            if "mode" in opts:
                os.chmod(real(vpath), int(opts["mode"]))
            if "uid" in opts or "gid" in opts:
                os.chown(real(vpath), int(opts.get("uid", -1)), int(opts.get("gid", -1)))
            return entry(vpath)
        except OSError as e:
            raise failed(e, "update")
    if op == "delete":
        if vpath == "/":
            raise Refused(400, "the volume's root cannot be deleted")
        try:
            full = real(vpath)
            st = os.lstat(full)
            if stat.S_ISDIR(st.st_mode):
                import shutil
                shutil.rmtree(full)
            else:
                os.unlink(full)
            return {}
        except OSError as e:
            raise failed(e, "delete")
    if op == "read":
        try:
            f = open(real(vpath), "rb")
        except OSError as e:
            raise failed(e, "read file")
        with f:
            out = sys.stdout.buffer
            out.write(b"OK\n")
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
            out.flush()
        return None
    raise Refused(400, "unknown operation")


if __name__ == "__main__":
    try:
        op, vpath = sys.argv[1], clean(sys.argv[2])
        opts = dict(a.split("=", 1) for a in sys.argv[3:])
        result = main(op, vpath, opts)
        if result is not None:
            sys.stdout.write(json.dumps(result))
    except Refused as r:
        sys.stderr.write(json.dumps({"status": r.status, "message": str(r)}))
        sys.exit(2)
