"""Reads tern-written job event logs with htcondor.JobEventLog and checks
every field it reports against what tern was asked to write.

Two sources of logs:
  * the writer helper (tern_userlog_write), given every event type tern
    produces (000 001 004 005 006 009 010 011 012 013) with their variants;
  * the real tools: tern_submit with `log =` (000), and tern_hold (012),
    tern_release (013) and tern_rm (009) when they are built.

For each event the full set of keys JobEventLog reports must equal the
expected set (spec section 5, and condor_event.cpp's toClassAd), and each
value must match. Run by run.sh; prints `N passed, M failed`.
"""

import argparse
import datetime
import getpass
import json
import os
import pwd
import subprocess
import sys
import tempfile
import time

import htcondor  # noqa: E402  (first: it sets up the classad module)
import classad  # noqa: E402

T_WINTER = 1_700_000_000  # 2023-11-14 22:13:20 UTC
T_SUMMER = 1_689_000_000  # 2023-07-10 14:40:00 UTC

MY_TYPE = {
    0: "SubmitEvent",
    1: "ExecuteEvent",
    4: "JobEvictedEvent",
    5: "JobTerminatedEvent",
    6: "JobImageSizeEvent",
    9: "JobAbortedEvent",
    10: "JobSuspendedEvent",
    11: "JobUnsuspendedEvent",
    12: "JobHeldEvent",
    13: "JobReleaseEvent",
}


class Tally:
    def __init__(self, verbose):
        self.passed = 0
        self.failed = 0
        self.verbose = verbose

    def check(self, what, got, want):
        ok = same(got, want)
        if ok:
            self.passed += 1
            if self.verbose:
                print(f"ok   {what}: {got!r}")
        else:
            self.failed += 1
            print(f"FAIL {what}: JobEventLog says {got!r}, expected {want!r}")
        return ok


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        try:
            return abs(float(a) - float(b)) < 1e-9 and type(a) is type(b)
        except (TypeError, ValueError):
            return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def local_iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))


def hostname():
    with open("/proc/sys/kernel/hostname") as f:
        return f.read().strip() or "localhost"


def usage_text(r):
    def dhms(s):
        return f"{s // 86400} {s % 86400 // 3600:02}:{s % 3600 // 60:02}:{s % 60:02}"

    return f"Usr {dhms(r[0])}, Sys {dhms(r[1])}"


def cell(v):
    """A resource-table number as JobEventLog reads it back: a real with
    two decimals when it had a fraction, else an integer."""
    if v - int(v) > 0:
        return round(v, 2)
    return int(v)


def expected(ev):
    """The keys and values JobEventLog should report for event `ev`."""
    n = ev["number"]
    want = {
        "MyType": MY_TYPE[n],
        "EventTypeNumber": n,
        "EventTime": local_iso(ev["time"]),
        "Cluster": ev["cluster"],
        "Proc": ev["proc"],
        "Subproc": ev["subproc"],
    }
    if n == 0:
        want["SubmitHost"] = ev["host"]
        if ev.get("log_notes"):
            want["LogNotes"] = ev["log_notes"]
            if ev["log_notes"].startswith("DAG Node: "):
                want["StructuredNotes"] = {"DAGNodeName": ev["log_notes"][10:].strip()}
        if ev.get("user_notes"):
            want["UserNotes"] = ev["user_notes"]
    elif n == 1:
        want["ExecuteHost"] = ev["host"]
        if ev.get("slot_name"):
            want["SlotName"] = ev["slot_name"]
        if ev.get("props"):
            want["ExecuteProps"] = {k: classad.ExprTree(v).eval() for k, v in ev["props"]}
    elif n == 4:
        requeued = ev["how"] == "requeued"
        want["Checkpointed"] = ev["how"] == "ckpt"
        want["TerminatedAndRequeued"] = requeued
        want["RunRemoteUsage"] = usage_text(ev["run_remote"])
        want["RunLocalUsage"] = usage_text(ev["run_local"])
        want["SentBytes"] = float(ev["sent"])
        want["ReceivedBytes"] = float(ev["received"])
        want["TerminatedNormally"] = requeued and "normal" in ev["exit"]
        if requeued:
            add_exit(want, ev["exit"])
        # JobEventLog 24.0 reads an eviction's reason only after a requeue's
        # termination lines, and does not read the header's `Code C Subcode
        # S` (later HTCondor reads both). tern writes them as the spec says;
        # its own reader reads them back (checked by the writer helper).
        if ev.get("reason") and requeued:
            want["Reason"] = ev["reason"]
    elif n == 5:
        want["TerminatedNormally"] = "normal" in ev["exit"]
        add_exit(want, ev["exit"])
        for key, field in [
            ("RunRemoteUsage", "run_remote"),
            ("RunLocalUsage", "run_local"),
            ("TotalRemoteUsage", "total_remote"),
            ("TotalLocalUsage", "total_local"),
        ]:
            want[key] = usage_text(ev[field])
        for key, field in [
            ("SentBytes", "sent"),
            ("ReceivedBytes", "received"),
            ("TotalSentBytes", "total_sent"),
            ("TotalReceivedBytes", "total_received"),
        ]:
            want[key] = float(ev[field])
        for r in ev.get("resources", []):
            name = r["name"]
            if r.get("usage") is not None:
                want[name + "Usage"] = cell(r["usage"])
            if r.get("request") is not None:
                want["Request" + name] = cell(r["request"])
            if r.get("allocated") is not None:
                want[name] = cell(r["allocated"])
            if r.get("assigned") is not None:
                want["Assigned" + name] = classad.ExprTree(r["assigned"]).eval()
    elif n == 6:
        want["Size"] = ev["size"]
        # HTCondor's reader defaults ResidentSetSize to 0 when the line is absent.
        want["ResidentSetSize"] = ev.get("rss") if ev.get("rss") is not None else 0
        if ev.get("memory_usage") is not None:
            want["MemoryUsage"] = ev["memory_usage"]
        if ev.get("pss") is not None:
            want["ProportionalSetSize"] = ev["pss"]
    elif n in (9, 13):
        if ev.get("reason"):
            want["Reason"] = ev["reason"]
    elif n == 10:
        want["NumberOfPIDs"] = ev["processes"]
    elif n == 12:
        if ev.get("reason"):
            want["HoldReason"] = ev["reason"]
        want["HoldReasonCode"] = ev["code"]
        want["HoldReasonSubCode"] = ev["subcode"]
    return want


def add_exit(want, ex):
    if "normal" in ex:
        want["ReturnValue"] = ex["normal"]
    else:
        want["TerminatedBySignal"] = ex["signal"]
        if ex.get("core"):
            want["CoreFile"] = ex["core"]


def event_plain(e):
    """A JobEvent as plain Python values (nested ads as dicts)."""
    out = {}
    for k in e.keys():
        v = e[k]
        if isinstance(v, classad.ClassAd):
            v = {kk: (vv.eval() if isinstance(vv, classad.ExprTree) else vv) for kk, vv in v.items()}
        out[k] = v
    return out


def compare(tally, label, path, wanted):
    """Reads `path` with JobEventLog; checks it against `wanted`, in order."""
    try:
        got = list(htcondor.JobEventLog(path).events(0))
    except Exception as err:  # noqa: BLE001 - any failure to read is a failure
        tally.check(f"{label}: JobEventLog reads the log", repr(err), "no error")
        return
    if not tally.check(f"{label}: number of events", len(got), len(wanted)):
        have = [(int(e.type), e.cluster, e.proc) for e in got]
        for ev in wanted:
            key = (ev["number"], ev["cluster"], ev["proc"])
            if key not in have:
                print(f"     missing: event {ev['number']:03} for job {ev['cluster']}.{ev['proc']}")
            else:
                have.remove(key)
    for i, (e, ev) in enumerate(zip(got, wanted)):
        want = expected(ev)
        where = f"{label}: event {i} ({ev['number']:03} {ev['cluster']}.{ev['proc']})"
        tally.check(f"{where} type", int(e.type), ev["number"])
        tally.check(f"{where} cluster/proc", (e.cluster, e.proc), (ev["cluster"], ev["proc"]))
        tally.check(f"{where} timestamp", e.timestamp, ev["time"])
        plain = event_plain(e)
        tally.check(f"{where} keys", sorted(plain), sorted(want))
        for k in sorted(want):
            if k in plain:
                tally.check(f"{where} {k}", plain[k], want[k])


def legacy_time():
    """10:00 on January 15 of this year, local: what a legacy `MM/DD` date
    reads as (the reader takes the current year)."""
    year = datetime.datetime.now().year
    return int(time.mktime((year, 1, 15, 10, 0, 0, 0, 0, -1)))


def writer_events():
    host = f"<127.0.0.1:0?alias={hostname()}>"
    usage = dict(run_remote=[1, 2], run_local=[0, 0])
    res = [
        dict(name="Cpus", usage=0.05, request=1, allocated=1),
        dict(name="Disk", usage=40, request=1024, allocated=2048),
        dict(name="Memory", usage=3, request=128, allocated=128),
    ]
    term = dict(
        usage,
        total_remote=[90061, 3600],
        total_local=[0, 59],
        sent=10,
        received=2048,
        total_sent=30,
        total_received=4096,
    )
    gpus = dict(name="Gpus", usage=0.25, request=1, allocated=1, assigned='"GPU-0f3a"')
    evs = [
        dict(number=0, cluster=1, proc=0, time=T_WINTER, host=host),
        dict(number=0, cluster=1, proc=1, time=T_WINTER, host=host,
             log_notes="DAG Node: A", user_notes="some notes"),
        dict(number=1, cluster=1, proc=0, time=T_WINTER + 1, host=host, slot_name="slot1_1@vm",
             props=[["Cpus", "1"], ["Memory", "128"], ["Disk", "1024"], ["Name", '"slot1_1@vm"']]),
        dict(number=1, cluster=1, proc=1, time=T_WINTER + 1, host=host),
        dict(number=6, cluster=1, proc=0, time=T_WINTER + 2, size=2048, memory_usage=2, rss=1900, pss=1800),
        dict(number=6, cluster=1, proc=1, time=T_WINTER + 2, size=7),
        dict(number=10, cluster=1, proc=0, time=T_WINTER + 3, processes=3),
        dict(number=11, cluster=1, proc=0, time=T_WINTER + 4),
        dict(number=4, cluster=1, proc=1, time=T_WINTER + 5, how="cpu", sent=0, received=1500,
             reason="preempted by a higher-priority user", **usage),
        dict(number=4, cluster=1, proc=1, time=T_WINTER + 6, how="ckpt", sent=5, received=6,
             code=[21, 3], **usage),
        dict(number=4, cluster=1, proc=1, time=T_WINTER + 7, how="requeued", sent=5, received=6,
             exit={"signal": 9, "core": "/tmp/core.1"}, reason="OnExitRemove was false",
             resources=res, **usage),
        dict(number=4, cluster=1, proc=1, time=T_WINTER + 8, how="requeued", sent=0, received=0,
             exit={"normal": 3}, **usage),
        dict(number=5, cluster=1, proc=0, time=T_SUMMER, exit={"normal": 0}, resources=res, **term),
        dict(number=5, cluster=1, proc=1, time=T_SUMMER, exit={"signal": 11}, **term),
        dict(number=5, cluster=1, proc=2, time=T_SUMMER, exit={"signal": 6, "core": "/tmp/core.2"},
             resources=res + [gpus, dict(name="Disk2", usage=123456789012, request=1, allocated=None)],
             **term),
        dict(number=12, cluster=2, proc=0, time=T_SUMMER + 1, reason="via tern_hold (by user alice)",
             code=1, subcode=0),
        dict(number=12, cluster=2, proc=0, time=T_SUMMER + 2, code=0, subcode=0),
        dict(number=12, cluster=2, proc=0, time=T_SUMMER + 3, reason="disk quota exceeded",
             code=13, subcode=28),
        dict(number=13, cluster=2, proc=0, time=T_SUMMER + 4, reason="via tern_release (by user alice)"),
        dict(number=13, cluster=2, proc=0, time=T_SUMMER + 5),
        dict(number=9, cluster=2, proc=0, time=T_SUMMER + 6, reason="via tern_rm (by user alice)"),
        dict(number=9, cluster=2, proc=1, time=T_SUMMER + 6),
        dict(number=9, cluster=1234567, proc=1000, time=T_SUMMER + 7, reason="large ids"),
        dict(number=13, cluster=3, proc=0, time=legacy_time(), form="legacy", reason="legacy date"),
    ]
    for e in evs:
        e.setdefault("subproc", 0)
    return evs


def check_writer(tally, writer, tmp):
    path = os.path.join(tmp, "every.log")
    evs = writer_events()
    r = subprocess.run(
        [writer, path],
        input="".join(json.dumps(e) + "\n" for e in evs),
        capture_output=True,
        text=True,
    )
    tally.check("writer: tern reads back what it wrote", (r.returncode, r.stderr), (0, ""))
    compare(tally, "writer", path, evs)


def tool_env(tmp):
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": tmp,
        "TZ": os.environ["TZ"],
        "TERN_NOW": str(T_WINTER),
        "TERN_CONFIG": "/dev/null",
        "_TERN_SPOOL": os.path.join(tmp, "spool"),
        # The events checked are the tools' own: no pass starts the jobs.
        "_TERN_NEGOTIATE_ON_SUBMIT": "false",
    }


def check_tools(tally, bin_dir, tmp):
    env = tool_env(tmp)
    with open(os.path.join(tmp, "job.sub"), "w") as f:
        f.write("executable = /bin/true\nlog = job.log\nsubmit_event_notes = DAG Node: N$(Process)\nqueue 3\n")

    def run(tool, *args):
        r = subprocess.run([os.path.join(bin_dir, tool), *args], cwd=tmp, env=env,
                           capture_output=True, text=True)
        tally.check(f"{tool} {' '.join(args)} succeeds", (r.returncode, r.stderr), (0, ""))

    run("tern_submit", "job.sub")
    host = f"<127.0.0.1:0?alias={hostname()}>"
    wanted = [
        dict(number=0, cluster=1, proc=p, subproc=0, time=T_WINTER, host=host, log_notes=f"DAG Node: N{p}")
        for p in range(3)
    ]
    user = pwd.getpwuid(os.getuid()).pw_name or getpass.getuser()
    steps = [
        ("tern_hold", ["1.0"], dict(number=12, code=1, subcode=0,
                                      reason=f"via tern_hold (by user {user})"), 0),
        ("tern_release", ["1.0"], dict(number=13, reason=f"via tern_release (by user {user})"), 0),
        ("tern_rm", ["1.1"], dict(number=9, reason=f"via tern_rm (by user {user})"), 1),
    ]
    for tool, args, ev, proc in steps:
        if not os.path.exists(os.path.join(bin_dir, tool)):
            print(f"note: {tool} is not built; its event is not checked")
            continue
        run(tool, *args)
        wanted.append(dict(ev, cluster=1, proc=proc, subproc=0, time=T_WINTER))
    compare(tally, "tools", os.path.join(tmp, "job.log"), wanted)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--writer", required=True, help="the tern_userlog_write helper")
    ap.add_argument("--bin-dir", required=True, help="where the built tern tools are")
    ap.add_argument("--zones", default="UTC,America/New_York",
                    help="time zones to run in, comma-separated")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every passing check")
    args = ap.parse_args()
    tally = Tally(args.verbose)
    for zone in args.zones.split(","):
        os.environ["TZ"] = zone
        time.tzset()
        before = tally.failed
        with tempfile.TemporaryDirectory() as tmp:
            check_writer(tally, args.writer, tmp)
        with tempfile.TemporaryDirectory() as tmp:
            check_tools(tally, args.bin_dir, tmp)
        print(f"TZ={zone}: {'ok' if tally.failed == before else 'FAILURES'}")
    print(f"{tally.passed} passed, {tally.failed} failed")
    sys.exit(1 if tally.failed else 0)


if __name__ == "__main__":
    main()
