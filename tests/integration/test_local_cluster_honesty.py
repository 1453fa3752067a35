"""cairn-local tells the truth: `up` fails (non-zero, naming the process and
the end of its log) when a node cannot start because its port is taken;
`down` never signals a process it did not start, even when a stale pid file
names it; Ctrl-C stops a foreground cluster also when its output is piped
(`cairn-local up | tee log`)."""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_local_cluster import BIN, LOCAL, free_block, run  # noqa: E402


def pids_of(d):
    out = {}
    run_dir = os.path.join(d, "run")
    for f in os.listdir(run_dir) if os.path.isdir(run_dir) else []:
        if f.endswith(".pid"):
            with open(os.path.join(run_dir, f)) as fh:
                out[f[:-4]] = int(fh.read().strip() or 0)
    return out


def gone(pid, secs=15):
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # a zombie child of ours counts as gone
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def test_port_taken(d, base, common, transport, port):
    """node2's port taken by another process: its protocol port over tcp://,
    its metrics port (base+102) over ipc:// (the only port it binds)."""
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind(("127.0.0.1", port))
    holder.listen(4)
    try:
        p = run(LOCAL, "up", "-d", "--no-build", "--nodes", "3", "--gateway-port", str(base + 4),
                "--base-port", str(base), "--transport", transport, *common, check=False)
    finally:
        holder.close()
    assert p.returncode != 0, "up -d succeeded with node2's port taken:\n" + p.stdout
    assert "node2" in p.stderr and "node2.log" in p.stderr, p.stderr
    assert "up failed" in p.stderr, p.stderr
    st = run(LOCAL, "status", *common, check=False)
    assert " up (pid" not in st.stdout, "processes left after a failed up:\n" + st.stdout
    print("ok   up fails on a taken port (%s):\n" % transport + "\n".join("     " + l for l in
                                                          p.stderr.splitlines()[-6:]))


def test_stale_pid(d, base, common):
    run(LOCAL, "up", "-d", "--no-build", "--nodes", "3", "--gateway-port", str(base + 4),
        "--base-port", str(base), *common)
    started = pids_of(d)
    run(LOCAL, "down", *common)
    for name, pid in started.items():
        assert gone(pid), "%s (pid %d) still running after down" % (name, pid)
    foreign = subprocess.Popen(["sleep", "60"])
    try:
        os.makedirs(os.path.join(d, "run"), exist_ok=True)
        for name in ("node1", "gateway"):
            with open(os.path.join(d, "run", name + ".pid"), "w") as f:
                f.write("%d\n" % foreign.pid)
        st = run(LOCAL, "status", *common, check=False)
        assert " up (pid" not in st.stdout, "a foreign pid shown as up:\n" + st.stdout
        run(LOCAL, "down", *common)
        time.sleep(0.3)
        assert foreign.poll() is None, "down signalled a process it did not start"
    finally:
        foreign.kill()
        foreign.wait()
    print("ok   down leaves a foreign pid from a stale pid file alone")


def test_ctrl_c_piped(d, base, common):
    cmd = "%s up --no-build --nodes 3 --gateway-port %d --base-port %d %s | cat" % (
        LOCAL, base + 4, base, " ".join(common))
    # a terminal's shell starts the pipeline with SIGINT at its default; a
    # harness run in the background (CI) may have it ignored, and bash cannot
    # trap a signal ignored at its start, so it is restored here
    p = subprocess.Popen(["bash", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        out = ""
        while "Ctrl-C stops" not in out:
            line = p.stdout.readline()
            assert line and time.monotonic() < deadline, "no foreground line:\n" + out
            out += line
        started = pids_of(d)
        assert len(started) == 4, started
        os.killpg(p.pid, signal.SIGINT)   # what the terminal sends: the whole pipeline
        p.wait(60)
        for name, pid in started.items():
            assert gone(pid), "%s (pid %d) survived Ctrl-C of a piped up" % (name, pid)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        run(LOCAL, "down", *common, check=False)
    print("ok   Ctrl-C stops a foreground cluster whose output is piped")


def main():
    d = tempfile.mkdtemp(prefix="cairn-local-h-")
    base = free_block()
    common = ["--dir", d, "--build", os.path.dirname(BIN)]
    try:
        test_port_taken(d, base, common, "tcp", base + 2)
        test_port_taken(d, base, common, "ipc", base + 102)
        test_stale_pid(d, base, common)
        test_ctrl_c_piped(d, base, common)
    finally:
        run(LOCAL, "down", *common, check=False)
        subprocess.run(["rm", "-rf", d])
    print("all 3 passed")


if __name__ == "__main__":
    main()
