"""End to end: 4 concurrent publishers send 100k events through a real
fabricbusd; `fabricbus tail` and a Python websockets client both receive
every one, in per-agent order, as valid Redfish Events."""
import asyncio
import os
import threading

from fbtest import (Broker, check_stream, publish_async, read_jsonl, run, tail_async,
                    ws_collect)

PUBLISHERS = 4
PER_PUBLISHER = 25000
TOTAL = PUBLISHERS * PER_PUBLISHER


def e2e_100k_events_four_publishers_reach_both_subscribers():
    # The queue bound is raised so that the Python client, which reads far
    # slower than the broker writes, is not dropped as a slow subscriber here
    # (test_slow_subscriber.py covers that path).
    b = Broker(WsRingEvents="131072", WsQueueEvents="120000").start()
    out = os.path.join(b.workdir, "tail.jsonl")
    tail = tail_async(b.http_addr, out, ["--since", "0", "--count", str(TOTAL), "--timeout", "600"])
    py_result = {}

    def python_subscriber():
        try:
            py_result["docs"] = asyncio.run(ws_collect(b.ws_url(since=0), TOTAL, 600))
        except Exception as e:  # reported by the main thread
            py_result["error"] = e

    t = threading.Thread(target=python_subscriber)
    t.start()
    agents = [f"e2e-pub{i}" for i in range(PUBLISHERS)]
    pubs = [publish_async(b.agent_addr, a, PER_PUBLISHER) for a in agents]
    for p, a in zip(pubs, agents):
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, f"publisher {a} exited {p.returncode}: {err}"
    assert tail.wait(timeout=900) == 0, f"fabricbus tail failed: {tail.stderr.read().decode()}"
    t.join(timeout=900)
    assert "error" not in py_result, py_result.get("error")

    seqs = check_stream(read_jsonl(out), TOTAL, agents)
    assert all(seqs[a] == PER_PUBLISHER for a in agents), seqs
    seqs = check_stream(py_result["docs"], TOTAL, agents)
    assert all(seqs[a] == PER_PUBLISHER for a in agents), seqs

    st = b.wait_status(lambda st: st["broker"]["events"]["total"] == TOTAL)
    assert st["broker"]["events"]["duplicates"] == 0, st["broker"]["events"]
    assert {a["id"] for a in st["broker"]["agents"]} == set(agents)
    assert b.stop() == 0, "fabricbusd did not exit cleanly:\n" + b.log()[-3000:]


if __name__ == "__main__":
    run(e2e_100k_events_four_publishers_reach_both_subscribers)
