"""A private nginx for cairn-bench tests and measurements.

Starts nginx-light in the foreground (a child process, `daemon off`) on a
free 127.0.0.1 port with a generated config in a temp dir. It serves
  /small/<k>  small static files (k = 1..nsmall)
  /large/1    one large static file
  /dav/<k>    WebDAV PUT/DELETE/GET (nginx http_dav_module)
Use as a context manager; the process and the temp dir go away on exit.
Only the Python standard library is used.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    def __init__(self, small_size=100, nsmall=100, large_size=0, workers=1, tmp_root=None,
                 sendfile_max_chunk=None, open_file_cache=False):
        self.small_size = small_size
        self.nsmall = nsmall
        self.large_size = large_size
        self.workers = workers
        self.tmp_root = tmp_root
        # measurements: bytes per sendfile() call ("0": unlimited; nginx's
        # default is 2m), and an fd cache for /small and /large (not /dav,
        # whose files are replaced behind a cached fd)
        self.sendfile_max_chunk = sendfile_max_chunk
        self.open_file_cache = open_file_cache
        self.proc = None
        self.dir = None
        self.port = None

    def _write_tree(self):
        www = os.path.join(self.dir, "www")
        # nginx started as root serves as "nobody": the tree must be readable
        # and the DAV folder writable by it
        os.chmod(self.dir, 0o755)
        for sub in ("small", "large", "dav"):
            os.makedirs(os.path.join(www, sub), mode=0o755)
        os.chmod(os.path.join(www, "dav"), 0o777)
        body = (b"cairn-bench " * (self.small_size // 12 + 1))[: self.small_size]
        for k in range(1, self.nsmall + 1):
            with open(os.path.join(www, "small", str(k)), "wb") as f:
                f.write(body)
        if self.large_size:
            block = os.urandom(1 << 20)
            with open(os.path.join(www, "large", "1"), "wb") as f:
                left = self.large_size
                while left > 0:
                    n = min(left, len(block))
                    f.write(block[:n])
                    left -= n
        return www

    def _write_conf(self, www):
        d = self.dir
        chunk = (f"sendfile_max_chunk {self.sendfile_max_chunk};"
                 if self.sendfile_max_chunk is not None else "")
        cache = ("open_file_cache max=1000 inactive=600s; open_file_cache_valid 600s;"
                 if self.open_file_cache else "")
        conf = f"""
daemon off;
worker_processes {self.workers};
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    {chunk}
    tcp_nopush on;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{self.port} reuseport backlog=4096;
        root {www};
        location /small/ {{ {cache} }}
        location /large/ {{ {cache} }}
        location /dav/ {{
            dav_methods PUT DELETE;
            create_full_put_path on;
            client_max_body_size 0;
            client_body_buffer_size 1m;
        }}
    }}
}}
"""
        path = os.path.join(d, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        return path

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="cairn-bench-nginx-", dir=self.tmp_root)
        www = self._write_tree()
        for attempt in range(5):
            self.port = free_port()
            conf = self._write_conf(www)
            with open(os.path.join(self.dir, "stderr.log"), "wb") as err:
                self.proc = subprocess.Popen([NGINX, "-p", self.dir, "-c", conf],
                                             stdout=subprocess.DEVNULL, stderr=err)
            if self._wait_ready():
                return self
            self._stop()
        raise RuntimeError("nginx did not start: " + self.log())

    def _wait_ready(self):
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def log(self):
        out = ""
        for name in ("stderr.log", "error.log"):
            p = os.path.join(self.dir or "", name)
            if self.dir and os.path.exists(p):
                with open(p, errors="replace") as f:
                    out += f.read()[-2000:]
        return out

    def _stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __exit__(self, *exc):
        self._stop()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def dav_path(self, key):
        return os.path.join(self.dir, "www", "dav", str(key))
