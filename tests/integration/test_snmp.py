"""fabricbus-agent-snmp against real net-snmp peers (tests/lib/snmp.py).

The script re-runs itself inside a network namespace of its own
(fbtsnmp-main: broker, agent and this script on its loopback); each switch
stand-in is snmpd in a namespace of its own with veth ports, reached over a
veth management link. Every namespace is deleted at the end, pass or fail.

- snmp_trap_link_down_up_names_switch_and_port: pulling swp1's cable makes
  snmpd send a real linkDown; the broker emits DownstreamLinkDropped for
  Switches/sw1/Ports/<ifIndex> with the port's name; plugging it back gives
  DownstreamLinkEstablished; `ip link set swp2 down` (administratively down)
  is a port_state at OK, not a link failure.
- snmp_poll_sees_link_change_with_traps_off: the same switch without traps;
  the GETBULK poller sees the same down and up; snmpd restarted (sysUpTime
  back) is seen as a restart, makes no counter event, and the next change
  still names the port.
- snmp_poll_resync_after_restart: the poller reports each port's baseline
  (a topology event) to a broker that has none; swp1 taken down while the
  agent is stopped gives, after it restarts, a link_down with
  Oem.Fabricbus.Resync (the broker's map said up), and swp1 restored while it
  was stopped again gives a resync link_up; swp2, unchanged, gives none.
  (snmpd caches ifTable for a few seconds: a port whose first reading was
  stale, such as the management link just created, may get a resync event
  of its own, which is right: the broker was told the stale state.)
- snmp_poll_v3_authpriv: the poller over SNMPv3 authPriv (Poll=ADDRESS v3
  USER): with the engine id discovered at start, and with it given on the
  User= line, it sees swp1 go down and up; a wrong key makes every round
  fail, so the switch is reported unreachable and no link event is made.
- snmp_v3_authpriv_accepted_wrong_rejected: snmpd's authPriv v3 traps are
  accepted; a wrong key, user, engine id, or a noAuthNoPriv trap, and a
  wrong v1/v2c community, are refused, counted, and make no event; a v2c
  INFORM is acknowledged (snmpinform exits 0) and becomes an event; 200
  garbage datagrams are counted as malformed and the agent goes on.
- snmp_storm_every_trap_is_an_event: parallel senders (net-snmp's library,
  tests/bench/snmp_flood.c) flood the agent; every trap sent is an event at
  the broker, or is in the agent's documented drop counters.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \
     /usr/bin/python3 tests/integration/test_snmp.py [test_name ...]
"""
import json
import os
import random
import socket
import subprocess
import sys
import time

import snmp

snmp.enter_own_netns(__name__)

from fbtest import Broker, Tail, assert_no_sanitizer_report, check_redfish_event, free_port, \
    oem, origin, rec, run  # noqa: E402

FABRIC = "ETH"
ENV = dict(os.environ, MIBS="")


def _start(trap_port, v3=None, traps=True):
    sw = snmp.SnmpSwitch("sw1", 1, trap_port=trap_port if traps else None, v3=v3).start()
    return sw


def _port_event(kind, sw, port):
    path = f"/redfish/v1/Fabrics/{FABRIC}/Switches/{sw.name}/Ports/{sw.ifindex(port)}"
    return lambda d: oem(d).get("Kind") == kind and origin(d) == path


def _finish(agent, broker, tail, sw):
    if tail:
        tail.stop()
    rc = agent.stop() if agent and agent.proc else 0
    if agent and agent.proc:
        assert_no_sanitizer_report(agent.log(), "fabricbus-agent-snmp")
    if sw:
        sw.stop()
    if broker:
        broker.stop()
    return rc


def snmp_trap_link_down_up_names_switch_and_port():
    broker = tail = agent = sw = None
    try:
        broker = Broker(FabricName=FABRIC).start()
        tail = Tail(broker.http_addr, os.path.join(broker.workdir, "tail.err"))
        port = free_port()
        sw = _start(port)
        # Poll= with a long interval: the first round learns ifIndex -> ifName.
        agent = snmp.Agent(broker.agent_addr, ["Community=public", f"Switch={sw.addr} sw1 host",
                                               f"Poll={sw.addr} public"],
                           ["--fabric", FABRIC, "--listen", f"udp:{sw.agent_side}:{port}",
                            "--poll-interval", "600000"]).start()
        time.sleep(1.0)  # the first poll round (names) is done well within this
        t0 = time.monotonic()
        sw.cable("swp1", up=False)
        d = tail.wait_for(_port_event("link_down", sw, "swp1"), timeout=20, what="swp1 link_down")
        check_redfish_event(d)
        print(f"  linkDown -> {rec(d)['MessageId']} {origin(d)} after "
              f"{(time.monotonic() - t0) * 1000:.0f} ms: {json.dumps(oem(d))}", flush=True)
        assert rec(d)["MessageId"] == "Fabric.1.0.DownstreamLinkDropped", rec(d)
        assert oem(d).get("Device") == "swp1", json.dumps(oem(d))
        assert oem(d).get("Address") == sw.addr, json.dumps(oem(d))
        assert oem(d).get("Technology") == "ethernet", json.dumps(oem(d))
        assert rec(d)["MessageArgs"] == ["sw1", str(sw.ifindex("swp1"))], rec(d)
        sw.cable("swp1", up=True)
        d = tail.wait_for(_port_event("link_up", sw, "swp1"), timeout=20, what="swp1 link_up")
        assert rec(d)["MessageId"] == "Fabric.1.0.DownstreamLinkEstablished", rec(d)
        # An operator's shutdown: not a fault, nothing a scheduler drains on.
        sw.admin("swp2", up=False)
        d = tail.wait_for(_port_event("port_state", sw, "swp2"), timeout=20,
                          what="swp2 admin-down port_state")
        assert rec(d)["MessageSeverity"] == "OK", rec(d)
        assert not any(_port_event("link_down", sw, "swp2")(x) for x in tail.events), \
            "admin down reported as a link failure"
        st = agent.stats()
        print(f"  agent: {st}", flush=True)
        assert st["bad_community"] == 0 and st["malformed"] == 0 and st["dropped"] == 0, st
    finally:
        rc = _finish(agent, broker, tail, sw)
    assert rc == 0, f"agent exited {rc}"


def _poll_only(parts, resync=False):
    """A broker with a tail, sw1 without traps and a poll-only agent (300 ms
    rounds; with resync, --map at the broker), each put into parts as it
    starts (for _finish_parts)."""
    parts["broker"] = broker = Broker(FabricName=FABRIC).start()
    extra = ["--map", broker.http_addr] if resync else []
    parts["tail"] = Tail(broker.http_addr, os.path.join(broker.workdir, "tail.err"))
    parts["sw"] = sw = _start(None, traps=False)
    parts["agent"] = snmp.Agent(broker.agent_addr, [f"Switch={sw.addr} sw1 host",
                                                    f"Poll={sw.addr} public"],
                                ["--fabric", FABRIC, "--no-traps", "--poll-interval", "300"] +
                                extra).start()
    return broker, parts["tail"], sw, parts["agent"]


def _finish_parts(parts):
    return _finish(parts.get("agent"), parts.get("broker"), parts.get("tail"), parts.get("sw"))


def snmp_poll_sees_link_change_with_traps_off():
    parts = {}
    try:
        broker, tail, sw, agent = _poll_only(parts)
        time.sleep(1.0)  # baseline rounds
        sw.cable("swp1", up=False)
        d = tail.wait_for(_port_event("link_down", sw, "swp1"), timeout=15,
                          what="polled swp1 link_down")
        check_redfish_event(d)
        assert oem(d).get("Device") == "swp1", json.dumps(oem(d))
        assert "poll:" in oem(d).get("Text", ""), json.dumps(oem(d))
        assert rec(d)["MessageId"] == "Fabric.1.0.DownstreamLinkDropped", rec(d)
        sw.cable("swp1", up=True)
        tail.wait_for(_port_event("link_up", sw, "swp1"), timeout=15, what="polled swp1 link_up")
        # Only the changed ports: swp2 never went anywhere.
        assert not any(_port_event("link_down", sw, "swp2")(x) for x in tail.events)
        # The switch's SNMP agent restarts: sysUpTime goes back, counters
        # start over without a false rate, names are learned again.
        n = len(tail.events)
        sw.restart_snmpd()
        deadline = time.monotonic() + 15
        while "restarted; counters start over" not in agent.log():
            assert time.monotonic() < deadline, f"restart not seen: {agent.log()[-2000:]}"
            time.sleep(0.2)
        time.sleep(1.0)
        sw.cable("swp1", up=False)
        d = tail.wait_for(lambda d: _port_event("link_down", sw, "swp1")(d) and
                          tail.events.index(d) >= n, timeout=15, what="link_down after restart")
        assert oem(d).get("Device") == "swp1", json.dumps(oem(d))
        assert not any(oem(x).get("Kind") == "counter_threshold" for x in tail.events), \
            "a restart made a counter rate"
        st = agent.stats()
        assert st["packets"] == 0 and st["poll_events"] >= 2, st
    finally:
        rc = _finish_parts(parts)
    assert rc == 0, f"agent exited {rc}"


def snmp_poll_resync_after_restart():
    parts = {}
    try:
        broker, tail, sw, agent = _poll_only(parts, resync=True)
        # A fresh broker has no state of the ports: the first round's
        # resync reports their baseline.
        tail.wait_for(_port_event("topology", sw, "swp1"), timeout=15, what="swp1 baseline")
        tail.wait_for(_port_event("topology", sw, "swp2"), timeout=15, what="swp2 baseline")
        time.sleep(0.5)  # the map is rendered at most every 100 ms
        for up in (False, True):
            assert agent.stop() == 0, "agent exited non-zero"
            n = len(tail.events)
            sw.cable("swp1", up=up)
            time.sleep(1.5)  # the link state settles in snmpd's view (it caches ifTable)
            agent.start()
            kind = "link_up" if up else "link_down"
            d = tail.wait_for(lambda d: _port_event(kind, sw, "swp1")(d) and
                              tail.events.index(d) >= n, timeout=15, what=f"resync {kind}")
            check_redfish_event(d)
            assert oem(d).get("Resync") is True, json.dumps(oem(d))
            assert "found at resync" in oem(d).get("Text", ""), json.dumps(oem(d))
            time.sleep(1.0)  # a few more rounds
            # swp1h (the cable's other end) changed too; swp2 and swp2h did not.
            extra = [oem(x) for x in tail.events[n:] if oem(x).get("Resync") and
                     oem(x).get("Device", "").startswith("swp2")]
            assert not extra, f"resync events for unchanged ports: {extra}"
            print(f"  swp1 {'restored' if up else 'taken down'} while stopped -> resync "
                  f"{kind}: {json.dumps(oem(d))}", flush=True)
    finally:
        rc = _finish_parts(parts)
    assert rc == 0, f"agent exited {rc}"


def snmp_poll_v3_authpriv():
    user, a, x = "polluser", "pollauth123", "pollpriv123"
    broker = tail = agent = sw = None
    try:
        broker = Broker(FabricName=FABRIC).start()
        tail = Tail(broker.http_addr, os.path.join(broker.workdir, "tail.err"))
        sw = snmp.SnmpSwitch("sw1", 1, poll_user=(user, a, x)).start()
        engine = sw.engine_id()
        args = ["--fabric", FABRIC, "--no-traps", "--poll-interval", "300", "--no-resync"]
        for up, eng in ((False, ""), (True, engine)):
            conf = [f"Switch={sw.addr} sw1 host", f"User={user} SHA {a} AES {x} {eng}".strip(),
                    f"Poll={sw.addr} v3 {user}"]
            agent = snmp.Agent(broker.agent_addr, conf, args).start()
            time.sleep(1.0)  # baseline rounds
            n = len(tail.events)
            sw.cable("swp1", up=up)
            kind = "link_up" if up else "link_down"
            d = tail.wait_for(lambda d: _port_event(kind, sw, "swp1")(d) and
                              tail.events.index(d) >= n, timeout=15, what=f"v3-polled {kind}")
            assert oem(d).get("Device") == "swp1" and "poll:" in oem(d).get("Text", ""), oem(d)
            print(f"  SNMPv3 poll ({'engine id given' if eng else 'engine id discovered'}): "
                  f"{rec(d)['MessageId']} {origin(d)}", flush=True)
            assert agent.stop() == 0
            assert_no_sanitizer_report(agent.log(), "fabricbus-agent-snmp")
        # A wrong key: every round is refused (a Report), the switch is unreachable.
        conf = [f"Switch={sw.addr} sw1 host", f"User={user} SHA wrongauth123 AES {x} {engine}",
                f"Poll={sw.addr} v3 {user}"]
        agent = snmp.Agent(broker.agent_addr, conf, args + ["-u", "2", "--poll-timeout", "300",
                                                            "--poll-retries", "0"]).start()
        n = len(tail.events)
        d = tail.wait_for(lambda d: oem(d).get("Kind") == "switch_unreachable" and
                          tail.events.index(d) >= n, timeout=15, what="unreachable with a bad key")
        sw.cable("swp1", up=False)
        time.sleep(1.0)
        assert not any(oem(x).get("Kind") in ("link_down", "link_up", "topology")
                       for x in tail.events[n:]), [oem(x) for x in tail.events[n:]]
    finally:
        rc = _finish(agent, broker, tail, sw)
    assert rc == 0, f"agent exited {rc}"


def _snmptrap(args, ifindex, dest):
    cmd = ["snmptrap"] + args + [dest, "", "1.3.6.1.6.3.1.1.5.3",
                                 f"1.3.6.1.2.1.2.2.1.1.{ifindex}", "i", str(ifindex),
                                 f"1.3.6.1.2.1.2.2.1.7.{ifindex}", "i", "1",
                                 f"1.3.6.1.2.1.2.2.1.8.{ifindex}", "i", "2"]
    subprocess.run(cmd, check=True, env=ENV, capture_output=True, timeout=10)


def snmp_v3_authpriv_accepted_wrong_rejected():
    user, a, x = "trapuser", "authpass123", "privpass123"
    broker = tail = agent = sw = None
    try:
        broker = Broker(FabricName=FABRIC).start()
        tail = Tail(broker.http_addr, os.path.join(broker.workdir, "tail.err"))
        port = free_port()
        sw = _start(port, v3=(user, a, x))
        agent = snmp.Agent(broker.agent_addr, ["Community=public", f"Switch={sw.addr} sw1 host",
                                               f"User={user} SHA {a} AES {x} {snmp.ENGINE}"],
                           ["--fabric", FABRIC, "--listen", f"udp:0.0.0.0:{port}"]).start()
        sw.cable("swp1", up=False)
        d = tail.wait_for(_port_event("link_down", sw, "swp1"), timeout=20,
                          what="v3 authPriv linkDown from snmpd")
        print(f"  v3 authPriv from snmpd: {rec(d)['MessageId']} {origin(d)}", flush=True)
        before = agent.stats()
        dest = f"127.0.0.1:{port}"
        v3 = ["-v", "3", "-l", "authPriv", "-a", "SHA", "-x", "AES"]
        bad = [
            v3 + ["-e", snmp.ENGINE, "-u", user, "-A", "wrongpass123", "-X", x],   # wrong auth key
            v3 + ["-e", snmp.ENGINE, "-u", user, "-A", a, "-X", "wrongpriv123"],   # wrong priv key
            v3 + ["-e", snmp.ENGINE, "-u", "nobody", "-A", a, "-X", x],            # unknown user
            v3 + ["-e", "0x80001f8804deadbeef", "-u", user, "-A", a, "-X", x],     # wrong engine
            ["-v", "3", "-l", "noAuthNoPriv", "-e", snmp.ENGINE, "-u", user],        # no auth
            ["-v", "2c", "-c", "private"],                                           # community
            ["-v", "1", "-c", "private"],
        ]
        for args in bad:
            if args[1] == "1":
                subprocess.run(["snmptrap"] + args + [dest, "1.3.6.1.4.1.8072", "127.0.0.1", "2",
                                                      "0", "", "1.3.6.1.2.1.2.2.1.1.999", "i",
                                                      "999"], check=True, env=ENV,
                               capture_output=True, timeout=10)
            else:
                _snmptrap(args, 999, dest)
        # Garbage and torn packets: counted as malformed, never fatal.
        rnd = random.Random(12)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for i in range(200):
                junk = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 300)))
                if i % 2:  # a real-looking start: SEQUENCE, version 1 (v2c), then noise
                    junk = b"\x30\x81\xff\x02\x01\x01" + junk
                s.sendto(junk, ("127.0.0.1", port))
        _snmptrap(v3 + ["-e", snmp.ENGINE, "-u", user, "-A", a, "-X", x], 998, dest)
        tail.wait_for(lambda d: oem(d).get("IfIndex") == 998, timeout=10, what="good v3 trap")
        # An INFORM: snmpinform exits 0 only when the agent's Response came back.
        r = subprocess.run(["snmpinform", "-v", "2c", "-c", "public", "-t", "2", "-r", "1", dest, "",
                            "1.3.6.1.6.3.1.1.5.4", "1.3.6.1.2.1.2.2.1.1.997", "i", "997"],
                           env=ENV, capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, f"INFORM not acknowledged: {r.stderr}"
        tail.wait_for(lambda d: oem(d).get("IfIndex") == 997 and oem(d).get("Kind") == "link_up",
                      timeout=10, what="the INFORM's link_up")
        after = agent.stats()
        print(f"  refused: v3_rejected +{after['v3_rejected'] - before['v3_rejected']} "
              f"bad_community +{after['bad_community'] - before['bad_community']} "
              f"(malformed +{after['malformed'] - before['malformed']})", flush=True)
        assert after["bad_community"] - before["bad_community"] == 2, (before, after)
        # wrong priv key: USM cannot tell it from garbage after the digest
        # passed, so net-snmp counts it as a decryption error or a parse error.
        # 5 bad v3 packets (net-snmp counts a wrong priv key as undecodable,
        # the rest in usmStats) and 200 garbage datagrams, each counted.
        refused = (after["v3_rejected"] - before["v3_rejected"]) + \
            (after["malformed"] - before["malformed"])
        assert refused >= 205, (before, after)
        assert after["malformed"] - before["malformed"] >= 200, (before, after)
        assert after["v3_rejected"] - before["v3_rejected"] >= 4, (before, after)
        assert after["packets"] - before["packets"] == 2, (before, after)
        assert after["informs_acked"] - before["informs_acked"] == 1, (before, after)
        assert not any(oem(d).get("IfIndex") == 999 for d in tail.events), "a refused trap passed"
    finally:
        rc = _finish(agent, broker, tail, sw)
    assert rc == 0, f"agent exited {rc}"


def snmp_storm_every_trap_is_an_event():
    senders, per = 4, int(os.environ.get("FBT_SNMP_STORM", "5000"))
    broker = tail = agent = None
    try:
        broker = Broker(FabricName=FABRIC).start()
        tail = Tail(broker.http_addr, os.path.join(broker.workdir, "tail.err"))
        port = free_port()
        agent = snmp.Agent(broker.agent_addr, ["Community=public"],
                           ["--fabric", FABRIC, "--listen", f"udp:127.0.0.1:{port}"]).start()
        t0 = time.monotonic()
        procs = [subprocess.Popen([snmp.FLOOD, f"127.0.0.1:{port}", str(per), "0",
                                   str(1 + i * 1000000)], stdout=subprocess.PIPE, text=True)
                 for i in range(senders)]
        for p in procs:
            out, _ = p.communicate(timeout=120)
            assert p.returncode == 0, out
            print(f"  {out.strip()}", flush=True)
        total = senders * per
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            st = agent.stats()
            accounted = st["events"] + st["dropped"] + st["kernel_drops"] + st["malformed"]
            if accounted >= total and st["unacked"] == 0:
                break
            time.sleep(0.5)
        dt = time.monotonic() - t0
        print(f"  {total} traps from {senders} senders: {st['events']} events, dropped "
              f"{st['dropped']}, kernel_drops {st['kernel_drops']}, pauses {st['pauses']}, "
              f"acked {st['acked']} in {dt:.1f} s", flush=True)
        assert accounted == total, f"{total} sent, {accounted} accounted for: {st}"
        assert st["acked"] == st["events"], st
        # Every event reached the broker's stream, each ifIndex once.
        deadline = time.monotonic() + 60
        while len(tail.events) < st["events"] and time.monotonic() < deadline:
            time.sleep(0.2)
        seen = {oem(d).get("IfIndex") for d in tail.events if oem(d).get("Kind") == "link_down"}
        assert len(seen) == st["events"], f"{len(seen)} distinct ifIndex at the broker, " \
                                          f"{st['events']} events sent"
    finally:
        rc = _finish(agent, broker, tail, None)
    assert rc == 0, f"agent exited {rc}"


if __name__ == "__main__":
    names = sys.argv[1:]
    tests = [snmp_trap_link_down_up_names_switch_and_port,
             snmp_poll_sees_link_change_with_traps_off,
             snmp_poll_resync_after_restart,
             snmp_poll_v3_authpriv,
             snmp_v3_authpriv_accepted_wrong_rejected,
             snmp_storm_every_trap_is_an_event]
    if names:
        tests = [t for t in tests if t.__name__ in names]
    run(*tests)
