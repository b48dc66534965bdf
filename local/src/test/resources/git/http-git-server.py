# A git server over HTTP with Basic authentication, for tests: each request is handed to
# `git http-backend` as a CGI request. Arguments: port, project root; the expected username and
# password come from the environment (GIT_SERVER_USERNAME, GIT_SERVER_PASSWORD).
import base64
import http.server
import os
import subprocess
import sys

PORT, ROOT = int(sys.argv[1]), sys.argv[2]
USER = os.environ["GIT_SERVER_USERNAME"]
EXPECTED = "Basic " + base64.b64encode((USER + ":" + os.environ["GIT_SERVER_PASSWORD"]).encode()).decode()


class Handler(http.server.BaseHTTPRequestHandler):
    def serve(self):
        if self.headers.get("Authorization") != EXPECTED:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_SERVER_")}
        env.update(GIT_PROJECT_ROOT=ROOT, GIT_HTTP_EXPORT_ALL="1", REQUEST_METHOD=self.command, PATH_INFO=path,
                   QUERY_STRING=query, CONTENT_TYPE=self.headers.get("Content-Type", ""), CONTENT_LENGTH=str(length),
                   REMOTE_USER=USER, REMOTE_ADDR="127.0.0.1")
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    do_GET = serve
    do_POST = serve


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
