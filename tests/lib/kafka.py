"""A real Kafka broker for integration tests (KRaft, one node, 127.0.0.1), and
consumers to check what reached it: python confluent_kafka and kcat.

The broker is tests/kafka/kafka.sh (jars from Maven Central, see
tests/kafka/pom.xml). Every Kafka started here is killed by pid when the
test process exits, pass or fail (fbtest.run() and atexit).

Run under /usr/bin/python3: confluent_kafka is Debian's python3-confluent-kafka.
"""
import hashlib
import os
import re
import subprocess
import tempfile
import time
import uuid

import fbtest

KAFKA_SH = os.path.join(fbtest.SRC, "tests", "kafka", "kafka.sh")


def fetch():
    """Make sure the Kafka jars are cached (a no-op after the first time)."""
    subprocess.run([KAFKA_SH, "fetch"], check=True, timeout=900)


def jars_missing():
    """None when the jars of tests/kafka/pom.xml are cached (kafka.sh's own
    test: the stamp names this pom), else what is missing. For tests that
    must not download them inside their timeout."""
    pom = os.path.join(os.path.dirname(KAFKA_SH), "pom.xml")
    with open(pom, "rb") as f:
        data = f.read()
    version = re.search(rb"<kafka.version>(.*)</kafka.version>", data).group(1).decode()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    jars = os.environ.get("FB_KAFKA_JARS") or os.path.join(cache, "fabricbus-kafka", version)
    try:
        with open(os.path.join(jars, ".fetched")) as f:
            if f.read().strip() == hashlib.sha256(data).hexdigest():
                return None
    except OSError:
        pass
    return f"the Kafka {version} jars are not in {jars}"


class Message:
    __slots__ = ("topic", "partition", "offset", "key", "value", "headers")

    def __init__(self, topic, partition, offset, key, value, headers):
        self.topic, self.partition, self.offset = topic, partition, offset
        self.key, self.value, self.headers = key, value, headers

    def __repr__(self):
        return (f"Message({self.topic}[{self.partition}]@{self.offset} key={self.key!r} "
                f"headers={self.headers} value={self.value[:80]!r})")


class Kafka:
    """One single-node Kafka (broker + KRaft controller) in its own dir."""

    def __init__(self, workdir=None, port=None):
        self.workdir = workdir or tempfile.mkdtemp(prefix="fb-kafka-")
        fbtest._workdirs.append(self.workdir)  # removed by fbtest.run() after a clean run
        self.port = port or fbtest.free_port()
        self.proc = None
        self.log_path = os.path.join(self.workdir, "kafka.log")
        self.start_seconds = None

    @property
    def bootstrap(self):
        return f"127.0.0.1:{self.port}"

    def start(self):
        """Start (formatting the data dir the first time) and wait until the
        broker answers metadata requests. The data survives stop/kill/start."""
        t0 = time.time()
        r = subprocess.run([KAFKA_SH, "start", self.workdir, str(self.port)],
                           capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            raise RuntimeError(f"kafka.sh start failed ({r.returncode}):\n{r.stderr}")
        with open(os.path.join(self.workdir, "kafka.pid")) as f:
            self.proc = fbtest.PidProcess(int(f.read().strip()), b"kafka.Kafka")
        fbtest.track(self.proc)
        self.start_seconds = time.time() - t0
        return self

    def stop(self):
        """SIGTERM (a controlled shutdown), SIGKILL after 20 s."""
        subprocess.run([KAFKA_SH, "stop", self.workdir], check=True, timeout=120)

    def kill(self):
        """SIGKILL: an outage, not a shutdown."""
        subprocess.run([KAFKA_SH, "kill", self.workdir], check=True, timeout=120)

    def restart(self):
        self.stop()
        return self.start()

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def log(self):
        return fbtest.read_text(self.log_path)

    # --- admin -----------------------------------------------------------

    def admin(self):
        from confluent_kafka.admin import AdminClient
        return AdminClient({"bootstrap.servers": self.bootstrap})

    def create_topic(self, name, partitions=4):
        from confluent_kafka.admin import NewTopic
        admin = self.admin()  # must outlive the future: its destructor fails it
        futs = admin.create_topics([NewTopic(name, num_partitions=partitions,
                                             replication_factor=1)],
                                   operation_timeout=30)
        futs[name].result(timeout=60)
        deadline = time.time() + 30  # metadata catches up a moment later
        while len(self.partitions(name)) != partitions:
            if time.time() > deadline:
                raise AssertionError(f"topic {name} created but not in metadata after 30 s")
            time.sleep(0.1)

    def topics(self):
        md = self.admin().list_topics(timeout=30)
        return sorted(t for t in md.topics if not t.startswith("__"))

    def partitions(self, topic):
        md = self.admin().list_topics(topic=topic, timeout=30)
        t = md.topics.get(topic)
        if t is None or t.error is not None:
            return []
        return sorted(t.partitions)

    def end_offsets(self, topics):
        """{(topic, partition): high watermark}; topics that do not exist yet
        count as empty."""
        from confluent_kafka import Consumer, TopicPartition
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "fb-test-watermarks",
                      "enable.auto.commit": False})
        try:
            out = {}
            for t in topics:
                for p in self.partitions(t):
                    _, high = c.get_watermark_offsets(TopicPartition(t, p), timeout=30)
                    out[(t, p)] = high
            return out
        finally:
            c.close()

    def count(self, topics):
        """Messages in topics (sum of high watermarks; the tests never delete)."""
        return sum(self.end_offsets(topics).values())

    def wait_count(self, topics, at_least, timeout=120, stable=0.0):
        """Poll until topics hold at least `at_least` messages; then, if
        `stable` > 0, keep polling that long so that extra (duplicate)
        messages have time to show. Returns the count."""
        deadline = time.time() + timeout
        n = 0
        while time.time() < deadline:
            n = self.count(topics)
            if n >= at_least:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"Kafka topics {topics} hold {n} messages after {timeout}s, "
                                 f"want {at_least}")
        end = time.time() + stable
        while time.time() < end:
            time.sleep(0.5)
            n = self.count(topics)
        return n

    def committed(self, group, topics):
        """{(topic, partition): the offset `group` committed} (negative:
        none), read without joining the group."""
        from confluent_kafka import Consumer, TopicPartition
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group,
                      "enable.auto.commit": False})
        try:
            tps = [TopicPartition(t, p) for t in topics for p in self.partitions(t)]
            return {(tp.topic, tp.partition): tp.offset for tp in c.committed(tps, timeout=30)}
        finally:
            c.close()

    # --- consumers ----------------------------------------------------------

    def consume_all(self, topics, expected=None, timeout=120):
        """Read every partition of topics from the beginning with a python
        confluent_kafka consumer (assigned, no group offsets committed).
        Stops at `expected` messages, or, when expected is None, at the end
        of every partition. Returns [Message] with key/value as str and
        headers as {name: str}, in per-partition offset order."""
        from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
        c = Consumer({"bootstrap.servers": self.bootstrap,
                      "group.id": f"fb-test-{uuid.uuid4().hex[:12]}",
                      "enable.auto.commit": False, "enable.partition.eof": True,
                      "fetch.max.bytes": 64 << 20, "queued.max.messages.kbytes": 262144})
        try:
            tps = [TopicPartition(t, p, OFFSET_BEGINNING) for t in topics
                   for p in self.partitions(t)]
            if not tps:
                if expected:
                    raise AssertionError(f"none of the topics {topics} exists in Kafka")
                return []
            c.assign(tps)
            eof = set()
            out = []
            deadline = time.time() + timeout
            while True:
                if expected is not None and len(out) >= expected:
                    break
                if expected is None and len(eof) == len(tps):
                    break
                if time.time() > deadline:
                    raise AssertionError(f"consumed {len(out)} of {expected} messages from "
                                         f"{topics} in {timeout}s")
                for m in c.consume(num_messages=10000, timeout=0.5):
                    err = m.error()
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:
                            eof.add((m.topic(), m.partition()))
                            continue
                        raise AssertionError(f"Kafka consumer error: {err}")
                    eof.discard((m.topic(), m.partition()))
                    k = m.key()
                    out.append(Message(m.topic(), m.partition(), m.offset(),
                                       k.decode() if k is not None else None,
                                       m.value().decode(),
                                       {h: (v.decode() if v is not None else None)
                                        for h, v in (m.headers() or [])}))
            return out
        finally:
            c.close()

    KCAT_FORMAT = "%t\\t%p\\t%o\\t%k\\t%h\\t%s\\n"

    def kcat_consume(self, topic, timeout=300):
        """`kcat -C -t topic -e -o beginning` to the end of every partition.
        Returns [Message] (headers parsed from kcat's %h: name=value,...)."""
        r = subprocess.run(["kcat", "-b", self.bootstrap, "-C", "-t", topic, "-o", "beginning",
                            "-e", "-q", "-f", self.KCAT_FORMAT],
                           capture_output=True, timeout=timeout)
        if r.returncode != 0:
            raise AssertionError(f"kcat -C -t {topic} exited {r.returncode}: "
                                 f"{r.stderr.decode(errors='replace')[-2000:]}")
        out = []
        for line in r.stdout.decode().split("\n"):
            if not line:
                continue
            t, p, o, k, h, v = line.split("\t", 5)
            headers = {}
            if h:
                for kv in h.split(","):
                    name, _, val = kv.partition("=")
                    headers[name] = val
            out.append(Message(t, int(p), int(o), k, v, headers))
        return out

    def kcat_produce(self, topic, lines, key_delim="\t"):
        """`kcat -P`: one message per line, "key<TAB>value" when key_delim is set."""
        args = ["kcat", "-b", self.bootstrap, "-P", "-t", topic]
        if key_delim:
            args += ["-K", key_delim]
        r = subprocess.run(args, input="".join(line + "\n" for line in lines),
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise AssertionError(f"kcat -P exited {r.returncode}: {r.stderr[-2000:]}")
