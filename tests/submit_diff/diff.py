#!/usr/bin/env python3
"""Differential test of tern_submit against HTCondor's Python bindings.

Each cases/*.sub goes through `htcondor.Submit(text).jobs(...)` (the oracle,
HTCondor 24.0.24) and through `tern_submit -dry-run:json`, both run in the
case's directory with the same environment, cluster id, QDate and owner. The
job ads are compared attribute by attribute (and tern's old-syntax -dry-run
output must give the same ads as its JSON): every value is parsed with
`classad.ExprTree` and printed again, so the two sides are compared in one
canonical form. Attributes listed in allowlist.toml (host- or tool-dependent
ones, each with its reason) may differ or be missing on one side; a [case.NAME]
entry lets the named attributes of that one case differ (where tern knowingly
departs from HTCondor there), also with its reason.

The oracle runs in a child process per case (the bindings can abort the
interpreter), so one bad case cannot stop the run.

Usage (normally through run.sh):
    diff.py --tern PATH --cases DIR --allowlist FILE [-v] [CASE ...]

Cases named err_*.sub hold a mistake instead: both sides must refuse them, and
tern's message (after its `FILE:LINE: `) must contain condor_submit's (the
bindings' exception text, or what they printed on stderr), spaces normalised
and a leading `ERROR: ` dropped.

Prints one line per case and `N passed, M failed` at the end; the exit status
is 1 when any case failed.
"""

import argparse
import concurrent.futures
import json
import os
import pwd
import re
import subprocess
import sys
import tomllib

# htcondor must be imported before classad (the bindings' own rule).
import htcondor  # noqa: F401
import classad

CLUSTER = 1
QDATE = 1700000000
TIMEOUT = 60


def user_name():
    return pwd.getpwuid(os.getuid()).pw_name


def case_env():
    """The one environment both sides run in. HOME is fixed so that
    `getenv = HOME` and `$ENV(HOME)` give the same text on every host; TZ is
    fixed so that $(Year)/$(Month)/$(Day) do."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/home/tern-submit-diff",
        "TZ": "UTC",
        "LANG": "C.UTF-8",
        "CONDOR_CONFIG": "/dev/null",
        "TERN_CONFIG": "/dev/null",
        "TERN_NOW": str(QDATE),
        # HTCondor's SCHEDD_INTERVAL default is 300, tern's 60; the cron and
        # deferral cases copy it into ScheddInterval.
        "_TERN_SCHEDD_INTERVAL": "300",
    }


# ---------------------------------------------------------------- the oracle


def oracle_one(path):
    """Child-process mode: print the oracle's ads for one file as JSON
    ({attr: canonical text}) on stdout."""
    with open(path) as f:
        text = f.read()
    try:
        sub = htcondor.Submit(text)
        ads = list(sub.jobs(clusterid=CLUSTER, qdate=QDATE, owner=user_name()))
    except Exception as e:  # the bindings raise plain RuntimeErrors
        json.dump({"ok": False, "error": f"{type(e).__name__}: {e}"}, sys.stdout)
        return
    out = []
    for ad in ads:
        out.append({k: canonical(str(ad.lookup(k))) for k in ad.keys()})
    json.dump({"ok": True, "ads": out}, sys.stdout)


def run_oracle(case_path):
    d, name = os.path.split(case_path)
    try:
        p = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--oracle-one", name],
            cwd=d,
            env=case_env(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": "oracle timed out"}
    if p.returncode != 0:
        return {
            "ok": False,
            "error": f"oracle died with status {p.returncode}: {p.stderr.strip()[-500:]}",
            "crash": True,
        }
    try:
        r = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"ok": False, "error": f"oracle printed no JSON: {p.stdout[:200]!r}", "crash": True}
    # The bindings print condor_submit's messages on stderr; the exception
    # text is often empty.
    if not r["ok"] and p.stderr.strip():
        r["error"] += " | " + " ".join(p.stderr.split())
    return r


# ---------------------------------------------------------------------- tern

EXPR_RE = re.compile(r"^/Expr\((.*)\)/$", re.S)


def json_to_classad_text(v):
    """tern's JSON value -> ClassAd expression text (HTCondor's JSON
    encoding: null is undefined, other expressions are "\\/Expr(...)\\/")."""
    if v is None:
        return "undefined"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        m = EXPR_RE.match(v)
        return m.group(1) if m else classad.quote(v)
    if isinstance(v, list):
        return "{ " + ", ".join(json_to_classad_text(x) for x in v) + " }"
    if isinstance(v, dict):
        return "[ " + "; ".join(f"{k} = {json_to_classad_text(x)}" for k, x in v.items()) + " ]"
    raise TypeError(f"unexpected JSON value {v!r}")


def run_tern(tern, case_path):
    d, name = os.path.split(case_path)
    try:
        p = subprocess.run(
            [tern, "-dry-run:json", name],
            cwd=d,
            env=case_env(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": "tern_submit timed out"}
    if p.returncode != 0:
        return {"ok": False, "error": f"exit {p.returncode}: {p.stderr.strip()}"}
    try:
        raw = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        return {"ok": False, "error": f"tern printed bad JSON ({e}): {p.stdout[:200]!r}"}
    ads = []
    for ad in raw:
        conv = {}
        for k, v in ad.items():
            text = json_to_classad_text(v)
            try:
                conv[k] = canonical(text)
            except Exception as e:
                conv[k] = f"<unparsable: {text!r}: {e}>"
        ads.append(conv)
    return {"ok": True, "ads": ads, "stderr": p.stderr}


def run_tern_old(tern, case_path):
    """The same job ads in tern's old-syntax -dry-run form, parsed by the
    bindings' old-ClassAd parser; must equal the JSON form."""
    d, name = os.path.split(case_path)
    p = subprocess.run(
        [tern, "-dry-run", name], cwd=d, env=case_env(), capture_output=True, text=True, timeout=TIMEOUT
    )
    if p.returncode != 0:
        return None
    return [{k: canonical(str(ad.lookup(k))) for k in ad.keys()} for ad in classad.parseAds(p.stdout, classad.Parser.Old)]


# ------------------------------------------------------------- comparison


def canonical(text):
    """Parse and print again, so both sides are in one form. Nested lists and
    ads print over several lines; the line breaks and indents are dropped
    (strings print newlines as \\n, so none is inside a string)."""
    s = str(classad.ExprTree(text))
    if "\n" in s:
        s = "".join(line.strip() for line in s.splitlines())
    return s


def load_allowlist(path):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    allowed = {}
    for name, entry in data.get("attribute", {}).items():
        if not entry.get("reason"):
            raise SystemExit(f"{path}: attribute {name} has no reason")
        allowed[name.lower()] = entry["reason"]
    per_case = {}
    for name, entry in data.get("case", {}).items():
        if not entry.get("reason") or not entry.get("attributes"):
            raise SystemExit(f"{path}: case {name} needs attributes and a reason")
        per_case[name] = {a.lower() for a in entry["attributes"]}
    return allowed, per_case


def compare_ads(oracle_ads, tern_ads, allowed):
    """Returns (problems, allowed differences)."""
    problems = []
    excused = set()
    if len(oracle_ads) != len(tern_ads):
        problems.append(f"job count: oracle {len(oracle_ads)}, tern {len(tern_ads)}")
    for i, (o, t) in enumerate(zip(oracle_ads, tern_ads)):
        ol = {k.lower(): (k, v) for k, v in o.items()}
        tl = {k.lower(): (k, v) for k, v in t.items()}
        for key in sorted(set(ol) | set(tl)):
            ov = ol.get(key)
            tv = tl.get(key)
            if ov is not None and tv is not None and ov[1] == tv[1]:
                continue
            name = (ov or tv)[0]
            if key in allowed:
                excused.add(name)
                continue
            if tv is None:
                problems.append(f"proc {i}: {name}: missing in tern; oracle {ov[1]}")
            elif ov is None:
                problems.append(f"proc {i}: {name}: only in tern: {tv[1]}")
            else:
                problems.append(f"proc {i}: {name}:\n        oracle {ov[1]}\n        tern   {tv[1]}")
    return problems, excused


def normalise_message(text):
    text = " ".join(text.split())
    return text.removeprefix("ERROR: ").strip()


def compare_errors(o, t):
    """None when both refused the case with the same message, else what is
    wrong."""
    if o["ok"]:
        return "the oracle accepted it"
    if t["ok"]:
        return "tern accepted it"
    # tern: "exit 1: tern_submit: error: FILE:LINE: message"
    tern_msg = normalise_message(re.sub(r"^exit \d+: tern_submit: error: [^:]+:\d+: ", "", t["error"]))
    # oracle: "Type: exception text | stderr"; the exception text is the
    # message unless it is the bindings' generic one.
    exc, _, stderr = o["error"].partition(" | ")
    exc = exc.split(": ", 1)[-1]
    candidates = [normalise_message(x) for x in (exc, stderr) if x and x != "Failed to get next job"]
    if any(c and c in tern_msg for c in candidates):
        return None
    return f"different messages\n    oracle: {' / '.join(candidates)}\n    tern:   {tern_msg}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--oracle-one", help=argparse.SUPPRESS)
    ap.add_argument("--tern")
    ap.add_argument("--cases")
    ap.add_argument("--allowlist")
    ap.add_argument("-v", "--verbose", action="store_true", help="show allowed differences and tern's warnings")
    ap.add_argument("names", nargs="*", help="case names (without .sub) to run; all by default")
    a = ap.parse_args()
    if a.oracle_one:
        oracle_one(a.oracle_one)
        return 0
    if not (a.tern and a.cases and a.allowlist):
        ap.error("--tern, --cases and --allowlist are required")
    allowed, per_case = load_allowlist(a.allowlist)
    cases = sorted(f for f in os.listdir(a.cases) if f.endswith(".sub"))
    stale = set(per_case) - {c.removesuffix(".sub") for c in cases}
    if stale:
        raise SystemExit(f"{a.allowlist}: entries for missing cases: {', '.join(sorted(stale))}")
    if a.names:
        want = {n.removesuffix(".sub") for n in a.names}
        cases = [c for c in cases if c.removesuffix(".sub") in want]
    tern = os.path.abspath(a.tern)
    case_dir = os.path.abspath(a.cases)

    def check(c):
        """One case: (passed, the lines to print)."""
        path = os.path.join(case_dir, c)
        o = run_oracle(path)
        t = run_tern(tern, path)
        name = c.removesuffix(".sub")
        if name.startswith("err_"):
            problem = compare_errors(o, t)
            if problem:
                return False, [f"FAIL {name}: {problem}"]
            return True, [f"ok   {name} (refused alike)"]
        if not o["ok"] and not t["ok"]:
            # The corpus holds valid files; both rejecting one is a bad case.
            return False, [f"FAIL {name}: both rejected it\n    oracle: {o['error']}\n    tern:   {t['error']}"]
        if not o["ok"]:
            return False, [f"FAIL {name}: the oracle rejected it, tern did not\n    oracle: {o['error']}"]
        if not t["ok"]:
            return False, [f"FAIL {name}: tern rejected it\n    tern: {t['error']}"]
        problems, excused = compare_ads(o["ads"], t["ads"], allowed | dict.fromkeys(per_case.get(name, ())))
        old = run_tern_old(tern, path)
        if old != t["ads"]:
            problems.append("tern's -dry-run (old syntax) and -dry-run:json give different ads")
        if problems:
            lines = [f"FAIL {name}"] + [f"    {p}" for p in problems]
        else:
            lines = [f"ok   {name} ({len(o['ads'])} jobs)"]
        if a.verbose:
            if excused:
                lines.append(f"    allowed to differ: {', '.join(sorted(excused))}")
            lines += [f"    tern stderr: {w}" for w in t.get("stderr", "").splitlines()]
        return not problems, lines

    # Each case runs two processes that mostly wait on each other's
    # start-up: one case per cpu at a time, printed in order.
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for ok, lines in pool.map(check, cases):
            passed += ok
            failed += not ok
            for line in lines:
                print(line)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
