"""fabricbus-slurm as a test process: started with -o overrides against one
fabricbusd and one SlurmCluster, stopped by pid, its log kept in its workdir.

    a = SlurmAdapter(broker, cluster, HoldDown="500ms").start()
    a.kill9(); a.start()                  # same StateFile: a crash and restart
    a.stop()                              # SIGTERM; asserts exit 0, no sanitizer report
"""
import os

import fbtest
from fbtest import BUILD

FABRICBUS_SLURM = os.path.join(BUILD, "adapters", "slurm", "fabricbus-slurm")


class SlurmAdapter(fbtest.Program):
    def __init__(self, broker, cluster, workdir=None, **overrides):
        self.broker, self.cluster = broker, cluster
        super().__init__(FABRICBUS_SLURM, workdir, {}, env=cluster.env)
        self.overrides = {
            "Broker": broker.http_addr,
            "BrokerAgent": broker.agent_addr,
            "StateFile": os.path.join(self.workdir, "state.json"),
            "LogLevel": "debug",
        }
        self.overrides.update(overrides)
