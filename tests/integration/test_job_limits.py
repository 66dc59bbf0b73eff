"""The job registry's bounds (issue 14): JobNodesMax per job (413), JobsMax
and JobMembersMax in all (429), each refusal naming its key; JobTtl forgets a
job that nobody registers again, and a re-registration keeps it
(broker/fabric/jobs.c, fabric_map.c, http/ws_fabric.c).

Only fabricbusd and HTTP: no chain needed.

    /usr/bin/python3 tests/integration/test_job_limits.py [test_name ...]
"""
import json
import time

from fbtest import Broker, assert_no_sanitizer_report, main, wait_for
from test_fabric_map import http

TTL = 5


def register(br, job, nodes):
    return http(br, "POST", "/fabric/jobs",
                json.dumps({"JobId": str(job), "User": "alice", "Nodes": nodes}))


def registry(br):
    return br.status()["broker"]["fabric_map"]


def job_registry_refuses_past_each_bound():
    br = Broker(JobsMax=3, JobMembersMax=10, JobNodesMax=4, JobTtl="0").start()
    status, body = register(br, 1, ["a", "b", "c", "d", "e"])
    assert status == 413, (status, body)
    assert "JobNodesMax" in json.dumps(body) and "at most 4" in json.dumps(body), body
    for job in (1, 2, 3):
        status, body = register(br, job, ["a", "b", "c"])
        assert status == 201, (job, status, body)
    status, body = register(br, 4, ["x"])
    assert status == 429 and "JobsMax" in json.dumps(body), (status, body)
    # Replacing counts the old registration out first: 9 - 3 + 4 = 10 fits.
    status, body = register(br, 3, ["a", "b", "c", "d"])
    assert status == 200, (status, body)
    status, body = register(br, 2, ["a", "b", "c", "d"])
    assert status == 429 and "JobMembersMax" in json.dumps(body), (status, body)
    br.wait_status(lambda s: (s["broker"]["fabric_map"]["jobs"],
                              s["broker"]["fabric_map"]["job_members"]) == (3, 10))
    status, _ = http(br, "DELETE", "/fabric/jobs/1")
    assert status == 204
    status, body = register(br, 4, ["x"])
    assert status == 201, (status, body)
    # Two refusals for the totals in a minute: one warning (rate-limited).
    assert br.log().count("not registered") == 1, br.log()[-3000:]
    assert br.stop() == 0, br.log()[-3000:]
    assert_no_sanitizer_report(br.log(), "fabricbusd")


def job_registry_expires_what_is_not_registered_again():
    br = Broker(JobTtl=f"{TTL}s").start()
    for job in (1, 2, 3):
        assert register(br, job, [f"n{job}", "shared"])[0] == 201
    # Job 2 is registered again (a SPANK step start) every second; 1 and 3
    # are not, and go once JobTtl has passed.
    t0 = time.monotonic()
    while time.monotonic() - t0 < 3 * TTL:
        assert register(br, 2, ["n2", "shared"])[0] == 200
        st = registry(br)
        if st["jobs"] == 1:
            break
        time.sleep(1)
    assert st["jobs"] == 1 and st["jobs_expired"] == 2, st
    assert time.monotonic() - t0 >= TTL - 1, "expired before JobTtl"
    assert "2 jobs expired" in br.log() or "1 jobs expired" in br.log(), br.log()[-2000:]
    status, m = http(br, "GET", "/fabric/map")
    assert status == 200
    # Job 2 stays while it is registered again; left alone, it goes too.
    wait_for(lambda: registry(br), lambda s: s["jobs"] == 0, 6 * TTL, "job 2 never expired",
             show=json.dumps)
    assert br.stop() == 0, br.log()[-3000:]
    assert_no_sanitizer_report(br.log(), "fabricbusd")


ALL = [job_registry_refuses_past_each_bound, job_registry_expires_what_is_not_registered_again]

if __name__ == "__main__":
    main(ALL)
