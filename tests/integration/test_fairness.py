"""Flooding agents cannot starve one that waits for its acks (issue 14,
AgentReadBudget in broker/ingest.c): two agents send everything at once and
never wait, a third keeps at most 16384 events unacked as every fb_session
does (`fabricbus publish`'s window). Counted from the journal, not timed:
among the events journaled until the first agent ran out, the third has
about a third. Before the budget counted per commit turn it had 26%.
"""
import fbtest
from flood import Flooder, flood_shares

PER_AGENT = 200_000


def test_windowed_agent_gets_a_third_beside_two_flooders():
    # A small budget: many turns per run, so that the count is about turns.
    b = fbtest.Broker(AgentReadBudget="64K", HeartbeatInterval="60s").start()
    try:
        shares, window, counts = flood_shares(b, [Flooder("flood1", PER_AGENT),
                                                  Flooder("flood2", PER_AGENT),
                                                  Flooder("windowed", PER_AGENT, window=16384)])
        print(f"  first {window} events journaled: {counts}; "
              f"shares {({a: round(s, 3) for a, s in shares.items()})}")
        assert window >= 2 * PER_AGENT, f"one agent finished after only {window} events"
        assert shares["windowed"] >= 0.30, \
            f"the windowed agent got {shares['windowed']:.1%} of {window} events: {counts}"
        st = b.status()["broker"]["events"]
        assert st["total"] == 3 * PER_AGENT, st
    finally:
        assert b.stop() == 0, b.log()[-3000:]
    fbtest.assert_no_sanitizer_report(b.log(), "fabricbusd")


if __name__ == "__main__":
    fbtest.main([test_windowed_agent_gets_a_third_beside_two_flooders])
