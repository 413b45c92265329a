"""The tests' process starter (see process-starter.ts): a small process that starts the
processes its parent asks for, as Node's `spawn` would in the parent, and sends back what
they do (their pid, output, exit and close) in order. It exits when its parent closes its
input.

Python, not Node, because Python starts a process with vfork: the parent's page tables are
not copied, so a start costs it about 0.3 ms of CPU, against about 5 ms for Node's spawn
from a bare Node process (fork). docs/testing.md, "The process starter".

Frames both ways: a 4-byte big-endian length and that much JSON (the message), then a
4-byte length and that many raw bytes (a child's output, or its input).
"""

import errno
import json
import os
import selectors
import signal
import subprocess
import sys

sel = selectors.DefaultSelector()
out = sys.stdout.buffer
running = {}  # the parent's id -> Child


def send(message, payload=b""):
    head = json.dumps(message, separators=(",", ":")).encode()
    out.write(
        len(head).to_bytes(4, "big") + head + len(payload).to_bytes(4, "big") + payload
    )
    out.flush()


class Child:
    def __init__(self, ident, proc):
        self.id = ident
        self.proc = proc
        self.open_streams = 0
        self.exited = False
        self.closed = False
        self.pending = None  # input still to write, then stdin is closed

    def stream_ended(self):
        self.open_streams -= 1
        self.maybe_close()

    def maybe_close(self):
        if self.exited and self.open_streams == 0 and not self.closed:
            self.closed = True
            self.drop_stdin()
            running.pop(self.id, None)
            send({"id": self.id, "ev": "close", **self.status})

    def check_exit(self):
        if self.exited or self.proc.poll() is None:
            return
        code = self.proc.returncode
        self.status = (
            {"code": None, "signal": signal_name(-code)}
            if code < 0
            else {"code": code, "signal": None}
        )
        self.exited = True
        send({"id": self.id, "ev": "exit", **self.status})
        self.maybe_close()

    def drop_stdin(self):
        stdin = self.proc.stdin
        if stdin is not None and not stdin.closed:
            try:
                sel.unregister(stdin)
            except (KeyError, ValueError):
                pass
            try:
                stdin.close()
            except OSError:
                pass


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


def node_error(command, error):
    code = errno.errorcode.get(error.errno, "UNKNOWN") if error.errno else "UNKNOWN"
    return {
        "message": f"spawn {command} {code}",
        "code": code,
        "errno": -(error.errno or 0),
        "syscall": f"spawn {command}",
        "path": command,
    }


def spawn(m):
    ident, command = m["id"], m["command"]
    options = {}
    if m.get("uid") is not None:
        # Node drops the supplementary groups when it sets the user, as this does.
        options = {"user": m["uid"], "group": m.get("gid"), "extra_groups": []}
    try:
        proc = subprocess.Popen(
            [command, *m["args"]],
            cwd=m["cwd"],
            env=m["env"],
            stdin=subprocess.PIPE if m["stdin"] == "pipe" else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=m["detached"],
            **options,
        )
    except OSError as error:
        send({"id": ident, "ev": "error", "error": node_error(command, error)})
        # Node closes a child that could not start too, after its error.
        send({"id": ident, "ev": "close", "code": -(error.errno or 0), "signal": None})
        return
    child = Child(ident, proc)
    running[ident] = child
    send({"id": ident, "ev": "spawn", "pid": proc.pid})
    for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        os.set_blocking(stream.fileno(), False)
        sel.register(stream, selectors.EVENT_READ, (child, name))
        child.open_streams += 1
    if proc.stdin is not None:
        os.set_blocking(proc.stdin.fileno(), False)
    child.check_exit()


def write_input(child):
    stdin = child.proc.stdin
    try:
        while child.pending:
            n = os.write(stdin.fileno(), child.pending)
            child.pending = child.pending[n:]
    except BlockingIOError:
        return
    except OSError:
        # The child exited without reading it all, as Node ignores.
        child.pending = b""
    child.pending = None
    child.drop_stdin()


def control(m, payload):
    child = running.get(m["id"])
    if m["op"] == "spawn":
        spawn(m)
    elif child is None:
        return
    elif m["op"] == "stdin":
        stdin = child.proc.stdin
        if stdin is None or stdin.closed or child.pending is not None:
            return
        child.pending = payload
        write_input(child)
        if child.pending is not None:
            sel.register(stdin, selectors.EVENT_WRITE, (child, "stdin"))
    elif m["op"] == "kill":
        try:
            pid = child.proc.pid
            # A detached child leads its own group, as the parent's own kill would reach it.
            os.kill(-pid if m.get("group") else pid, signal.Signals[m["signal"]])
        except (OSError, KeyError):
            pass


class Control:
    """The parent's frames, read as they come."""

    def __init__(self):
        self.buffer = b""

    def feed(self):
        chunk = os.read(0, 1 << 16)
        if not chunk:
            sys.exit(0)
        self.buffer += chunk
        while True:
            b = self.buffer
            if len(b) < 4:
                return
            head_end = 4 + int.from_bytes(b[:4], "big")
            if len(b) < head_end + 4:
                return
            end = head_end + 4 + int.from_bytes(b[head_end : head_end + 4], "big")
            if len(b) < end:
                return
            message = json.loads(b[4:head_end])
            payload = b[head_end + 4 : end]
            self.buffer = b[end:]
            control(message, payload)


def main():
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    os.set_blocking(0, False)
    parent = Control()
    sel.register(0, selectors.EVENT_READ, "control")
    sel.register(wake_read, selectors.EVENT_READ, "wake")
    while True:
        for key, _ in sel.select():
            what = key.data
            if what == "control":
                try:
                    parent.feed()
                except BlockingIOError:
                    pass
            elif what == "wake":
                try:
                    os.read(wake_read, 4096)
                except BlockingIOError:
                    pass
                for child in list(running.values()):
                    child.check_exit()
            else:
                child, name = what
                if name == "stdin":
                    write_input(child)
                    continue
                try:
                    chunk = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if chunk:
                    send({"id": child.id, "ev": "data", "stream": name}, chunk)
                else:
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
                    child.stream_ended()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
