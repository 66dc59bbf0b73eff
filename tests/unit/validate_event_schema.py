#!/usr/bin/env python3
"""Validate rendered Redfish Events (and the OEM registry) against the DMTF
JSON schemas, offline.

    validate_event_schema.py TEST_REDFISH_EXE [--schemas DIR] [--registry FILE ...]
    validate_event_schema.py --events FILE.jsonl [--schemas DIR] [--registry FILE ...]

With an executable, runs `EXE --dump` (one Event document per line) and
validates every line against Event.v1_13_0. --registry validates a
MessageRegistry document against MessageRegistry.v1_7_0. Every
http://redfish.dmtf.org/schemas/v1/X.json reference is resolved from
--schemas (default: $FB_REDFISH_DIR/json-schema, else
<source root>/proto/redfish/json-schema), never from the network.
EventTimestamp is checked as RFC 3339 here because jsonschema's date-time
format checker needs an optional package.

Needs the jsonschema package (4.x; uses `referencing` when present, else
RefResolver). Exits 0 when all documents are valid, 1 when any is not, and
77 (meson's "skipped") when jsonschema cannot be imported.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

try:
    import jsonschema
except ImportError:  # pragma: no cover
    print("jsonschema not installed: pip install jsonschema (or apt python3-jsonschema "
          "and run /usr/bin/python3)", file=sys.stderr)
    sys.exit(77)

DMTF = "http://redfish.dmtf.org/schemas/v1/"
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def load_schemas(d):
    store = {}
    for name in os.listdir(d):
        if name.endswith(".json"):
            with open(os.path.join(d, name), encoding="utf-8") as f:
                store[DMTF + name] = json.load(f)
    return store


def make_validator(store, uri):
    schema = store[uri]
    # DMTF schemas name their own meta-schema (redfish-schema-v1.json), which
    # extends draft-07; validate with draft-07 semantics.
    cls = jsonschema.Draft7Validator
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT7

        def retrieve(u):
            if u in store:
                return Resource.from_contents(store[u], default_specification=DRAFT7)
            raise LookupError(f"schema {u} is not in the offline schema folder")

        reg = Registry(retrieve=retrieve)
        return cls(schema, registry=reg)
    except ImportError:
        resolver = jsonschema.RefResolver(base_uri=uri, referrer=schema, store=store)
        return cls(schema, resolver=resolver)


def check_event(v, doc):
    errs = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]
    for rec in doc.get("Events", []):
        ts = rec.get("EventTimestamp")
        if ts is not None:
            ok = bool(RFC3339.match(ts))
            if ok:
                try:
                    datetime.datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")
                except ValueError:
                    ok = False
            if not ok:
                errs.append(f"EventTimestamp: {ts!r} is not RFC 3339")
    return errs


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(os.path.dirname(here))
    default_schemas = os.path.join(
        os.environ.get("FB_REDFISH_DIR") or os.path.join(src, "proto", "redfish"), "json-schema")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("exe", nargs="?", help="test_redfish executable to run with --dump")
    ap.add_argument("--events", help="a file of Event documents, one per line")
    ap.add_argument("--schemas", default=default_schemas)
    ap.add_argument("--registry", action="append", default=[], help="a MessageRegistry file to validate")
    a = ap.parse_args()
    if not a.exe and not a.events and not a.registry:
        ap.error("give an executable, --events or --registry")

    store = load_schemas(a.schemas)
    failed = checked = 0
    if a.exe or a.events:
        if a.exe:
            out = subprocess.run([a.exe, "--dump"], check=True, stdout=subprocess.PIPE).stdout
            lines = out.decode("utf-8").splitlines()
        else:
            with open(a.events, encoding="utf-8") as f:
                lines = f.read().splitlines()
        v = make_validator(store, DMTF + "Event.v1_13_0.json")
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            checked += 1
            try:
                doc = json.loads(line)
            except ValueError as e:
                print(f"event {n}: not JSON: {e}: {line[:200]}")
                failed += 1
                continue
            errs = check_event(v, doc)
            if errs:
                failed += 1
                mid = (doc.get("Events") or [{}])[0].get("MessageId")
                print(f"event {n} ({mid}):\n  " + "\n  ".join(errs))
    for path in a.registry:
        checked += 1
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        v = make_validator(store, DMTF + "MessageRegistry.v1_7_0.json")
        errs = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]
        if errs:
            failed += 1
            print(f"{path}:\n  " + "\n  ".join(errs))
    print(f"{checked - failed} passed, {failed} failed")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
