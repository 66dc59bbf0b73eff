"""`meson install --destdir` lays out fabricbus where Debian expects it, and
what it installs is usable:

- install_layout: every binary in bindir, the OpenSM plugin in libdir, the
  SPANK plugins in libdir/fabricbus, the six systemd units in
  lib/systemd/system with this build's paths, sysusers.d, the example configs
  in share/doc/fabricbus/examples (nothing into sysconfdir: /etc is the
  admin's), the man pages in mandir/man{1,5,8}.
- units_verify_and_harden: each unit passes `systemd-analyze verify` with no
  message at all (it only warns about a bad value, so any output fails),
  with its Documentation= man pages found in the installed tree; each keeps
  the hardening docs/operations.md promises, and only the SNMP agent keeps a
  capability (CAP_NET_BIND_SERVICE), only the IB agent sees a device (umad).
  Skipped, saying so, where systemd-analyze is absent.
- man_pages_render: `groff -man -ww -z` and `MANWIDTH=80 man -l --warnings`
  print nothing for each page, and each names its program.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \\
     /usr/bin/python3 tests/integration/test_install.py [test_name ...]
"""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile

from fbtest import BUILD, main

UNITS = ["fabricbusd", "fabricbus-agent-ib", "fabricbus-agent-node", "fabricbus-agent-snmp",
         "fabricbus-slurm", "fabricbus-pmix"]
MAN = ["fabricbusd.8", "fabricbus.1", "fabricbus.conf.5", "fabricbus-agent-ib.8",
       "fabricbus-agent-node.8", "fabricbus-agent-snmp.8", "fabricbus-slurm.8",
       "fabricbus-pmix.8"]
HARDENING = {"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
             "PrivateTmp": "yes", "SystemCallFilter": "@system-service",
             "SystemCallArchitectures": "native", "RestrictNamespaces": "yes",
             "LockPersonality": "yes", "MemoryDenyWriteExecute": "yes"}

_dest = None


def options():
    out = subprocess.run(["meson", "introspect", "--buildoptions", BUILD], capture_output=True,
                         text=True, check=True).stdout
    o = {x["name"]: x["value"] for x in json.loads(out)}
    pre = o["prefix"]
    return {k: os.path.join(pre, o[k]) for k in ("bindir", "libdir", "mandir", "datadir",
                                                  "sysconfdir")} | {"prefix": pre}


def installed():
    """meson install into a fresh destdir, once per run."""
    global _dest
    if _dest is None:
        _dest = tempfile.mkdtemp(prefix="fbt-install-")
        r = subprocess.run(["meson", "install", "-C", BUILD, "--destdir", _dest, "--no-rebuild",
                            "--quiet"], capture_output=True, text=True)
        assert r.returncode == 0, f"meson install failed:\n{r.stdout}\n{r.stderr}"
    return _dest


def under(dest, path):
    return os.path.join(dest, path.lstrip("/"))


def built(name):
    return os.path.exists(os.path.join(BUILD, name))


def install_layout():
    d, o = installed(), options()
    bins = ["fabricbusd", "fabricbus", "fabricbus-agent-ib", "fabricbus-agent-node",
            "fabricbus-agent-snmp"]
    bins += ["fabricbus-slurm"] if built("adapters/slurm/fabricbus-slurm") else []
    bins += ["fabricbus-pmix"] if built("adapters/pmix/fabricbus-pmix") else []
    for b in bins:
        p = under(d, os.path.join(o["bindir"], b))
        assert os.access(p, os.X_OK), f"{b} not in bindir ({p})"
    r = subprocess.run([under(d, os.path.join(o["bindir"], "fabricbusd")), "--version"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "0." in r.stdout + r.stderr, r
    if built("agents/osm/libfabricbus_osm.so"):
        assert os.path.exists(under(d, os.path.join(o["libdir"], "libfabricbus_osm.so")))
    assert os.path.exists(under(d, os.path.join(o["libdir"], "fabricbus", "spank_fabricbus.so")))
    unit_dir = under(d, os.path.join(o["prefix"], "lib", "systemd", "system"))
    assert sorted(os.listdir(unit_dir)) == sorted(u + ".service" for u in UNITS), \
        os.listdir(unit_dir)
    for u in UNITS:
        text = open(os.path.join(unit_dir, u + ".service")).read()
        assert "@bindir@" not in text and "@sysconfdir@" not in text, f"{u}: unsubstituted"
        assert f"ExecStart={o['bindir']}/{u} " in text, f"{u}: ExecStart not in {o['bindir']}"
    assert os.path.exists(under(d, os.path.join(o["prefix"], "lib", "sysusers.d",
                                                "fabricbus.conf")))
    ex = under(d, os.path.join(o["datadir"], "doc", "fabricbus", "examples"))
    want = {"fabricbus.conf.example", "fabricbus-slurm.conf.example", "plugstack.conf.example",
            "snmp.conf.example", "pmix.conf.example", "fabricbus-agent-ib.default",
            "fabricbus-agent-node.default", "fabricbus-agent-snmp.default"}
    assert set(os.listdir(ex)) == want, sorted(os.listdir(ex))
    etc = under(d, o["sysconfdir"])
    assert not os.path.exists(etc) or not any(files for _, _, files in os.walk(etc)), \
        f"installed into {o['sysconfdir']}: {list(os.walk(etc))}"
    for page in MAN:
        p = under(d, os.path.join(o["mandir"], "man" + page.rsplit(".", 1)[1], page))
        assert os.path.exists(p), f"{page} not installed ({p})"
    print(f"  prefix {o['prefix']}: {len(bins)} binaries, {len(UNITS)} units, "
          f"{len(want)} examples, {len(MAN)} man pages", flush=True)


def unit_keys(text):
    keys = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            k, v = line.split("=", 1)
            keys.setdefault(k, []).append(v)
    return keys


def units_verify_and_harden():
    if shutil.which("systemd-analyze") is None:
        print("  SKIP: systemd-analyze not installed (Debian: systemd)", flush=True)
        return
    d, o = installed(), options()
    unit_dir = under(d, os.path.join(o["prefix"], "lib", "systemd", "system"))
    work = tempfile.mkdtemp(prefix="fbt-units-")
    # console: without a terminal systemd tools log to the journal, and a
    # warning would not reach us.
    env = dict(os.environ, MANPATH=under(d, o["mandir"]), SYSTEMD_LOG_COLOR="0",
               SYSTEMD_LOG_TARGET="console")
    for u in UNITS:
        text = open(os.path.join(unit_dir, u + ".service")).read()
        keys = unit_keys(text)
        for k, v in HARDENING.items():
            assert keys.get(k) == [v], f"{u}: {k}={keys.get(k)}, want {v}"
        assert keys.get("CapabilityBoundingSet"), f"{u}: no CapabilityBoundingSet"
        assert keys.get("RestrictAddressFamilies"), f"{u}: no RestrictAddressFamilies"
        caps = keys["CapabilityBoundingSet"][0]
        if u == "fabricbus-agent-snmp":
            assert caps == "CAP_NET_BIND_SERVICE" and \
                keys["AmbientCapabilities"] == ["CAP_NET_BIND_SERVICE"], (u, caps)
        else:
            assert caps == "" and keys.get("AmbientCapabilities", [""]) == [""], (u, caps)
        if u == "fabricbus-agent-ib":
            assert keys["DevicePolicy"] == ["closed"], u
            assert keys["DeviceAllow"] == ["char-infiniband_mad rw"], u
        else:
            assert keys.get("PrivateDevices") == ["yes"], f"{u}: PrivateDevices"
        # The binaries where this destdir has them: verify checks they exist.
        path = os.path.join(work, u + ".service")
        with open(path, "w") as f:
            f.write(text.replace(o["bindir"] + "/", under(d, o["bindir"]) + "/"))
        if not os.path.exists(under(d, os.path.join(o["bindir"], u))):
            print(f"  {u}: not built here, verified without its binary", flush=True)
        r = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True,
                           env=env)
        out = (r.stdout + r.stderr).strip()
        missing_bin = f"Command {under(d, os.path.join(o['bindir'], u))} is not executable"
        if not os.path.exists(under(d, os.path.join(o["bindir"], u))):
            out = "\n".join(l for l in out.splitlines() if missing_bin not in l).strip()
            r = subprocess.CompletedProcess(r.args, 0 if not out else r.returncode)
        assert r.returncode == 0 and not out, f"{u}: systemd-analyze verify:\n{out}"
        print(f"  {u}.service: verify clean", flush=True)
    # verify must be able to fail: a typo is reported.
    bad = os.path.join(work, "bad.service")
    with open(bad, "w") as f:
        f.write("[Service]\nExecStart=/bin/true\nProtectSystem=strictly\n")
    r = subprocess.run(["systemd-analyze", "verify", bad], capture_output=True, text=True,
                       env=env)
    assert "ProtectSystem" in r.stdout + r.stderr or "protect system" in r.stdout + r.stderr, \
        f"verify did not report a bad value: {r}"
    shutil.rmtree(work, ignore_errors=True)


def man_pages_render():
    d, o = installed(), options()
    for page in MAN:
        p = under(d, os.path.join(o["mandir"], "man" + page.rsplit(".", 1)[1], page))
        r = subprocess.run(["groff", "-man", "-ww", "-z", p], capture_output=True, text=True)
        assert r.returncode == 0 and not r.stderr, f"{page}: groff:\n{r.stderr}"
        r = subprocess.run(["man", "-l", "--warnings", p], capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
        assert r.returncode == 0 and not r.stderr, f"{page}: man --warnings:\n{r.stderr}"
        name = page.rsplit(".", 1)[0]
        plain = " ".join(re.sub(".\b", "", r.stdout).replace("\u2010", "-").split())
        assert f"NAME {name} - " in plain, f"{page}: NAME:\n{plain[:400]}"
    print(f"  {len(MAN)} pages render without a warning", flush=True)


if __name__ == "__main__":
    try:
        main([install_layout, units_verify_and_harden, man_pages_render])
    finally:
        if _dest:
            shutil.rmtree(_dest, ignore_errors=True)
