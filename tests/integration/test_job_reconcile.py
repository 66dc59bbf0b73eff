"""Job registrations reconciled with Slurm (docs/slurm.md, "Job registrations"):
fabricbus-slurm with JobReconcileInterval deletes from the broker the
registrations of jobs the real slurmctld says have ended, or has not known for
two rounds (an epilog that never ran), keeps those of running jobs and of ids
beyond Slurm's 32-bit job numbers, and deletes nothing while slurmctld is down.

Before this work every such registration stayed until the broker's JobTtl
(7 days by default).
"""
import json
import time
import urllib.request

import fbtest
from slurm import SlurmCluster
from slurm_adapter import SlurmAdapter

DONE = ("", "COMPLETED", "COMPLETING")


def post_job(b, jid, nodes):
    body = json.dumps({"JobId": jid, "User": "root", "Nodes": nodes}).encode()
    req = urllib.request.Request(f"http://{b.http_addr}/fabric/jobs", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status in (200, 201), r.status


def registered(b):
    with urllib.request.urlopen(f"http://{b.http_addr}/fabric/map", timeout=10) as r:
        m = json.load(r)
    return {j for n in m["Nodes"].values() for j in n.get("Jobs", [])}


def wait_registered(b, want, timeout, what):
    return fbtest.wait_for(lambda: registered(b), lambda s: s == want, timeout, what,
                           show=lambda s: repr(sorted(s)))


def ended_and_unknown_jobs_are_removed_running_ones_kept():
    cluster = SlurmCluster(nodes=2).start()
    b = fbtest.Broker().start()
    a = None
    try:
        running = cluster.sbatch("-w", "node001", "--wrap", "sleep 600")
        cluster.wait_job(running, "RUNNING")
        ended = cluster.sbatch("-w", "node002", "--wrap", "true")
        fbtest.wait_for(lambda: cluster.job_state(ended), lambda s: s in DONE, 60,
                        f"job {ended} ends")
        for jid, node in ((running, "node001"), (ended, "node002"), ("999999", "node002"),
                          ("99999999999", "node002")):
            post_job(b, jid, [node])
        a = SlurmAdapter(b, cluster, JobReconcileInterval="1s", RetryInterval="500ms").start()
        wait_registered(b, {running, "99999999999"}, 60, "ended and unknown registrations removed")
        log = a.log()
        assert f"job {ended}: registration removed from the broker: slurmctld says the job " \
               "has ended" in log, log[-3000:]
        assert "job 999999: registration removed from the broker: slurmctld has not known" \
               in log, log[-3000:]
        # a few more rounds: the running job's registration stays
        time.sleep(3)
        assert registered(b) == {running, "99999999999"}, registered(b)
        assert f"job {running}:" not in a.log()

        # slurmctld down: rounds fail and nothing is deleted
        cluster.stop_ctld()
        post_job(b, "999998", ["node002"])
        a.wait_log("no registration removed this round", timeout=120)
        a.wait_log("no registration removed this round", timeout=120, count=2)
        assert registered(b) == {running, "99999999999", "999998"}, registered(b)
        cluster.start_ctld()
        wait_registered(b, {running, "99999999999"}, 120, "the unknown job removed once slurmctld is back")
        assert cluster.job_state(running) == "RUNNING"
    finally:
        if a:
            a.stop()
        cluster.cancel_all()
        cluster.stop()
        assert b.stop() == 0


def interval_zero_is_off():
    cluster = SlurmCluster(nodes=1).start()
    b = fbtest.Broker().start()
    a = None
    try:
        post_job(b, "999997", ["node001"])
        a = SlurmAdapter(b, cluster, JobReconcileInterval="0", RetryInterval="500ms").start()
        time.sleep(3)
        assert a.proc.poll() is None, a.log()[-3000:]
        assert registered(b) == {"999997"}, registered(b)
        assert "JobReconcileInterval" not in a.log(), a.log()[-3000:]
    finally:
        if a:
            a.stop()
        cluster.stop()
        assert b.stop() == 0


ALL = [ended_and_unknown_jobs_are_removed_running_ones_kept, interval_zero_is_off]

if __name__ == "__main__":
    fbtest.main(ALL)
