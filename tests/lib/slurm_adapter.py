"""fabricbus-slurm as a test process: started with -o overrides against one
fabricbusd and one SlurmCluster, stopped by pid, its log kept in its workdir.

    a = SlurmAdapter(broker, cluster, HoldDown="500ms").start()
    a.kill9(); a.start()                  # same StateFile: a crash and restart
    a.stop()                              # SIGTERM; asserts exit 0, no sanitizer report
"""
import os
import signal
import subprocess
import tempfile
import time

import fbtest
from fbtest import BUILD, assert_no_sanitizer_report, stop_gracefully, track

FABRICBUS_SLURM = os.path.join(BUILD, "adapters", "slurm", "fabricbus-slurm")


class SlurmAdapter:
    def __init__(self, broker, cluster, workdir=None, **overrides):
        self.broker, self.cluster = broker, cluster
        self.workdir = workdir or tempfile.mkdtemp(prefix="fb-slurm-adapter-")
        fbtest._workdirs.append(self.workdir)  # removed by fbtest.run() after a clean run
        self.overrides = {
            "Broker": broker.http_addr,
            "BrokerAgent": broker.agent_addr,
            "StateFile": os.path.join(self.workdir, "state.json"),
            "LogLevel": "debug",
        }
        self.overrides.update(overrides)
        self.log_path = os.path.join(self.workdir, "fabricbus-slurm.log")
        self.proc = None

    def args(self):
        a = [FABRICBUS_SLURM]
        for k, v in self.overrides.items():
            a += ["-o", f"{k}={v}"]
        return a

    def start(self):
        assert os.access(FABRICBUS_SLURM, os.X_OK), f"{FABRICBUS_SLURM} not built"
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.args(), stdout=log, stderr=subprocess.STDOUT,
                                               env=self.cluster.env, cwd=self.workdir))
        return self

    def log(self):
        return fbtest.read_text(self.log_path)

    def wait_log(self, text, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log():
                return
            assert self.proc.poll() is None, f"fabricbus-slurm exited {self.proc.returncode}:\n{self.log()[-3000:]}"
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} in the adapter log within {timeout}s:\n{self.log()[-3000:]}")

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self, check=True):
        if self.proc is None:
            return 0
        rc = stop_gracefully(self.proc, "fabricbus-slurm")
        self.proc = None
        if check:
            out = self.log()
            assert rc == 0, f"fabricbus-slurm exited with {rc}:\n{out[-3000:]}"
            assert_no_sanitizer_report(out, "fabricbus-slurm")
        return rc
