"""Drives tern through dask-jobqueue's HTCondorCluster, as a user of a real
HTCondor pool would: the cluster submits its workers with `condor_submit`
and removes them with `condor_rm`, which are links to tern's tools on PATH.

    python dask_cluster.py WORK_DIRECTORY

Runs a cluster twice: as dask-jobqueue submits by default (the workers run
in the submit directory), then with `should_transfer_files = YES` and an
input file (the workers run in their sandboxes, where the input is). Each
time it scales the cluster to two workers (two jobs), runs a small
computation on them, closes the cluster, and checks with `condor_q` that
the jobs left the queue, with /proc that no worker process is left, and
that each worker's stderr reached its own file. Every wait is bounded; any
failure exits non-zero with the reason.
"""

import os
import subprocess
import sys
import time

from dask.distributed import Client
from dask_jobqueue import HTCondorCluster

WORKERS = 2
# Starting a worker imports distributed in a new interpreter: seconds, but
# slow under load, so the waits are generous and still bounded.
TIMEOUT = 90
INPUT = "tern_e2e_input.txt"


def fail(msg):
    print(f"dask_cluster.py: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def condor_q(*args):
    r = subprocess.run(["condor_q", *args], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        fail(f"condor_q {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r.stdout


def alive(pid):
    """True while `pid` runs; a zombie has finished (its parent reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_for(what, cond, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.5)


def where_am_i():
    """Runs on a worker: its directory, the sandbox tern names, and the
    transferred input as the worker sees it (None when absent)."""
    cwd = os.getcwd()
    data = open(INPUT).read() if os.path.exists(INPUT) else None
    return cwd, os.environ.get("_CONDOR_SCRATCH_DIR"), data


def run_cluster(work, transfer):
    name = "sandbox" if transfer else "iwd"
    logdir = os.path.join(work, f"logs-{name}")
    os.makedirs(logdir)
    extra = {}
    if transfer:
        with open(os.path.join(work, INPUT), "w") as f:
            f.write("from the submit directory\n")
        extra = {"should_transfer_files": "YES", "transfer_input_files": INPUT}
    cluster = HTCondorCluster(
        cores=1,
        memory="100MB",
        disk="100MB",
        log_directory=logdir,
        job_extra_directives=extra,
        # The workers run on this machine; the scheduler need not listen
        # on any other address.
        scheduler_options={"host": "127.0.0.1"},
        # A worker whose scheduler is gone exits by itself after this.
        death_timeout=30,
    )
    print(cluster.job_script(), file=sys.stderr)
    client = Client(cluster, timeout=TIMEOUT)
    cluster.scale(jobs=WORKERS)
    try:
        client.wait_for_workers(WORKERS, timeout=TIMEOUT)
    except Exception as e:
        fail(f"{name}: {WORKERS} workers did not connect: {e!r}\n{condor_q('-nobatch')}")

    # The workers are jobs in tern's queue, running.
    running = condor_q("-af", "ClusterId", "ProcId", "JobStatus", "DaskWorkerName")
    print(running, file=sys.stderr)
    jobs = [line.split() for line in running.splitlines()]
    if sorted(j[2] for j in jobs) != ["2"] * WORKERS:
        fail(f"{name}: expected {WORKERS} running jobs, condor_q says:\n{running}")
    for cluster_id, proc_id, _, worker_name in jobs:
        if worker_name != f"htcondor--{cluster_id}.{proc_id}--":
            fail(f"{name}: job {cluster_id}.{proc_id} has DaskWorkerName {worker_name}")

    # Real work, on the workers.
    total = client.submit(sum, [1, 2, 3]).result(timeout=TIMEOUT)
    if total != 6:
        fail(f"{name}: sum([1, 2, 3]) gave {total!r}")
    squares = client.gather(client.map(lambda x: x * x, range(10)))
    if squares != [x * x for x in range(10)]:
        fail(f"{name}: squares gave {squares!r}")
    # Where the workers run: the submit directory, or each its own sandbox
    # holding the input.
    places = client.run(where_am_i)
    for worker, (cwd, scratch, data) in places.items():
        if transfer:
            if cwd != scratch or os.path.realpath(cwd) == os.path.realpath(work):
                fail(f"{name}: {worker} runs in {cwd}, not its sandbox {scratch}")
            if data != "from the submit directory\n":
                fail(f"{name}: {worker} sees {INPUT} as {data!r}")
        elif os.path.realpath(cwd) != os.path.realpath(work):
            fail(f"{name}: {worker} runs in {cwd}, not the submit directory {work}")
    # Each worker and its nanny: they must all be gone after the close.
    pids = client.run(lambda: (os.getpid(), os.getppid()))
    if len(pids) != WORKERS:
        fail(f"{name}: expected {WORKERS} workers, found {pids}")

    client.close()
    cluster.close(timeout=TIMEOUT)

    wait_for(f"{name}: the jobs to leave the queue", lambda: condor_q("-af", "ClusterId") == "")
    procs = [p for pair in pids.values() for p in pair]
    wait_for(f"{name}: the worker processes {procs} to exit", lambda: not any(map(alive, procs)))
    if transfer:
        sandboxes = {scratch for _, scratch, _ in places.values()}
        wait_for(f"{name}: the sandboxes {sandboxes} to be removed",
                 lambda: not any(map(os.path.exists, sandboxes)))
    # Each worker logged to its own stderr file, named after its job id.
    for cluster_id, proc_id, _, _ in jobs:
        err = os.path.join(logdir, f"worker-{cluster_id}.{proc_id}.err")
        if not os.path.exists(err) or "Starting Worker" not in open(err).read():
            fail(f"{name}: {err} is missing or does not show a worker starting")
    print(f"dask_cluster.py: {name}: ok: {WORKERS} workers, sum = {total}", file=sys.stderr)


def main():
    work = sys.argv[1]
    os.chdir(work)
    run_cluster(work, transfer=False)
    run_cluster(work, transfer=True)


if __name__ == "__main__":
    main()
