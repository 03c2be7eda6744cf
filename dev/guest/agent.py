# bootlet's test node agent: the host's only way in (the guest has no network). It reads one JSON
# request a line from a virtio-serial port and answers each with one JSON line, as commands end:
#   {"id": 7, "argv": ["systemctl", "is-active", "kubelet"], "input": "...", "timeoutMs": 60000}
#   {"id": 7, "code": 0, "signal": null, "stdout": "active\n", "stderr": "", "timedOut": false}
# Commands run concurrently; none of them is the agent's child for longer than it runs.
import json
import os
import subprocess
import threading
import time

PORT = '/dev/virtio-ports/org.bootlet.agent'
write_lock = threading.Lock()


def answer(fd, msg):
    data = (json.dumps(msg) + '\n').encode()
    with write_lock:
        view = memoryview(data)
        while view:
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                time.sleep(0.01)
                continue
            view = view[n:]


def run(fd, req):
    out = {'id': req.get('id'), 'code': None, 'signal': None, 'stdout': '', 'stderr': '', 'timedOut': False}
    try:
        proc = subprocess.Popen(
            req['argv'],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        timeout = req.get('timeoutMs')
        try:
            stdout, stderr = proc.communicate(
                (req.get('input') or '').encode(), timeout=None if timeout is None else timeout / 1000
            )
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            stdout, stderr = proc.communicate()
            out['timedOut'] = True
        rc = proc.returncode
        if rc < 0:
            out['signal'] = -rc
        else:
            out['code'] = rc
        out['stdout'] = stdout.decode('utf-8', 'replace')
        out['stderr'] = stderr.decode('utf-8', 'replace')
    except Exception as e:  # a command that could not start is an answer too
        out['code'] = 127
        out['stderr'] = f'agent: {e}'
    answer(fd, out)


def serve():
    while not os.path.exists(PORT):
        time.sleep(0.2)
    fd = os.open(PORT, os.O_RDWR)
    buf = b''
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            # The host is not connected: nothing to read until it is.
            time.sleep(0.2)
            continue
        buf += chunk
        while b'\n' in buf:
            line, buf = buf.split(b'\n', 1)
            if not line.strip():
                continue
            try:
                req = json.loads(line)
            except ValueError:
                continue
            threading.Thread(target=run, args=(fd, req), daemon=True).start()


serve()
