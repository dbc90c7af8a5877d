"""Times HTCondor's Python `classad` module on the ads tern's criterion bench uses.

Run by bench/classad_vs_htcondor.sh; prints one JSON object mapping the
criterion benchmark ids (benches/classad.rs) to {"median_ns", "min_ns", "api"}.

Only the operation is inside the timed statement: the texts and ads are made
beforehand. Each figure is the median (and the best) of several repeats of a
loop sized to run about 0.2 s.

Match evaluation: the bindings have no persistent match object, so two figures:
- `requirements_with_context_construction` is `machine.matches(job)`, which
  builds a `classad::MatchClassAd(machine, job)`, evaluates `leftMatchesRight`
  (that is `RIGHT.requirements`, the job's Requirements with TARGET = the
  machine) and takes the match apart, as tern's bench does with MatchContext.
- `requirements_context_reused` evaluates the job's Requirements inside one
  long-lived ad laid out as MatchClassAd lays a match out (each ad nested in a
  context ad holding `my`/`target`/`other`), so no context is built per call.
  It includes the Python call overhead, shown separately as `call_overhead`
  (`eval` of a literal attribute of the same ad).
"""

import json
import os
import statistics
import sys
import timeit

# htcondor must be imported before classad (it sets up the shared library the
# bindings share); CONDOR_CONFIG=/dev/null keeps it from looking for a pool.
os.environ.setdefault("CONDOR_CONFIG", "/dev/null")
import warnings  # noqa: E402

warnings.simplefilter("ignore")
import htcondor  # noqa: E402,F401
import classad  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def read(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


JOB_OLD = read("job.ad")
JOB_NEW = read("job.new.ad")
MACHINE_OLD = read("machine.ad")


def measure(stmt, env, repeats=7):
    timer = timeit.Timer(stmt, globals=env)
    number, _ = timer.autorange()
    # autorange aims at 0.2 s per loop; keep it there.
    runs = [t / number for t in timer.repeat(repeats, number)]
    return {
        "median_ns": statistics.median(runs) * 1e9,
        "min_ns": min(runs) * 1e9,
        "api": stmt,
    }


def match_root(job, machine):
    """One ad holding job and machine in MatchClassAd's layout."""
    return classad.ClassAd(
        "[ lctx = [ other = .rctx.ad; target = .rctx.ad; my = ad; ad = %s ];"
        "  rctx = [ other = .lctx.ad; target = .lctx.ad; my = ad; ad = %s ];"
        "  requirements = lctx.ad.requirements; one = 1 ]" % (repr(job), repr(machine))
    )


def main():
    job = classad.parseOne(JOB_OLD, parser=classad.Parser.Old)
    job_new = classad.ClassAd(JOB_NEW)
    machine = classad.parseOne(MACHINE_OLD, parser=classad.Parser.Old)
    assert len(job) == 60 and len(job_new) == 60, (len(job), len(job_new))
    root = match_root(job, machine)
    # Same sanity checks as the Rust bench: the match really succeeds, and a
    # machine of another architecture really fails it.
    assert machine.matches(job) is True
    assert root.eval("requirements") is True
    arm = classad.parseOne(MACHINE_OLD + 'Arch = "ARM"\n', parser=classad.Parser.Old)
    assert arm.matches(job) is False
    assert match_root(job, arm).eval("requirements") is False

    env = {
        "classad": classad,
        "JOB_OLD": JOB_OLD,
        "JOB_NEW": JOB_NEW,
        "job": job,
        "machine": machine,
        "root": root,
    }
    out = {
        "parse/old_syntax_job_ad": measure(
            "classad.parseOne(JOB_OLD, parser=classad.Parser.Old)", env
        ),
        "parse/new_syntax_job_ad": measure("classad.ClassAd(JOB_NEW)", env),
        "match/requirements_context_reused": measure('root.eval("requirements")', env),
        "match/requirements_with_context_construction": measure(
            "machine.matches(job)", env
        ),
        "match/call_overhead": measure('root.eval("one")', env),
        "unparse/new_syntax_job_ad": measure("repr(job)", env),
        "unparse/old_syntax_job_ad_unsorted": measure("job.printOld()", env),
        "unparse/json_job_ad": measure("job.printJson()", env),
    }
    out["_version"] = {"api": htcondor.version()}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
