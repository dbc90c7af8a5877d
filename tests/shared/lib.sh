# Helpers for the shared-mode suite: sourced by run.sh and by every
# t_*.sh it runs (each in a subshell, with REPO, RESULTS and STATE set by
# run.sh). A check is one line, "ok: ..." or "FAIL: ...", counted in
# $RESULTS.

# The three test users (made by run.sh, homes 0700, not in group tern).
TERN_USERS="ternt_a ternt_b ternt_c"

pass() {
    echo "ok: $*"
    echo "pass $*" >>"$RESULTS"
}

fail() {
    echo "FAIL: $*" >&2
    echo "fail $*" >>"$RESULTS"
}

# check DESCRIPTION CMD...: passes when CMD succeeds.
check() {
    _desc=$1
    shift
    if "$@"; then pass "$_desc"; else fail "$_desc"; fi
}

# check_not DESCRIPTION CMD...: passes when CMD fails.
check_not() {
    _desc=$1
    shift
    if "$@"; then fail "$_desc"; else pass "$_desc"; fi
}

# check_eq DESCRIPTION GOT WANT
check_eq() {
    if [ "$2" = "$3" ]; then
        pass "$1"
    else
        fail "$1: got '$2', want '$3'"
    fi
}

# retry CMD...: CMD, tried up to 5 times a second apart (the shadow
# utilities' lock on /etc/passwd may be held for a moment by someone else).
retry() {
    for _i in 1 2 3 4 5; do
        "$@" && return 0
        sleep 1
    done
    return 1
}

home_of() { getent passwd "$1" | cut -d: -f6; }

# as_user USER CMD...: CMD as USER (its groups, a clean environment), in
# USER's home.
as_user() {
    _u=$1
    shift
    (cd "$(home_of "$_u")" && setpriv --reuid "$_u" --regid "$_u" --init-groups --reset-env -- "$@")
}

# as_user_sh USER SCRIPT: a shell command line as USER.
as_user_sh() {
    as_user "$1" /bin/sh -c "$2"
}

# root_pass [ARGS]: one root negotiation pass, as systemd's service runs it.
root_pass() {
    /usr/bin/tern_negotiate -wait-lock 30 "$@"
}

# job_status JOB: the job's JobStatus, from the queue or its history.
job_status() {
    _s=$(/usr/bin/tern_q -allusers "$1" -af JobStatus 2>/dev/null)
    [ -n "$_s" ] || _s=$(/usr/bin/tern_history "$1" -af JobStatus 2>/dev/null | head -n 1)
    echo "$_s"
}

# wait_for_status JOB STATUS [SECONDS]: waits (default 60 s) until JOB
# has JobStatus STATUS; fails when it never does.
wait_for_status() {
    _deadline=$(($(date +%s) + ${3:-60}))
    while [ "$(date +%s)" -le "$_deadline" ]; do
        [ "$(job_status "$1")" = "$2" ] && return 0
        sleep 0.1
    done
    return 1
}

# submit_as USER FILE-TEXT: writes FILE-TEXT as job.sub in USER's home,
# submits it as USER, prints the cluster id.
submit_as() {
    printf '%s\n' "$2" | as_user_sh "$1" 'cat > job.sub'
    as_user "$1" /usr/bin/tern_submit -terse job.sub | sed -n 's/^\([0-9]*\)\.0.*/\1/p' | head -n 1
}

# The state the after-each checks compare against (run.sh takes it once
# the users exist).
snapshot() {
    {
        sha256sum /etc/shadow /etc/passwd
        stat -c '%n %u %g %a %s' /etc/shadow /etc/passwd
        for f in /etc/cron.d/*; do
            sha256sum "$f"
            stat -c '%n %u %g %a %s' "$f"
        done
    } 2>/dev/null
}

# after_each NAME: what no test may change: no root-owned file in any
# home, /etc/shadow, /etc/passwd and /etc/cron.d as they were, the queue
# intact.
after_each() {
    _found=$(find /home -mindepth 1 -xdev -uid 0 2>/dev/null | head -n 5)
    check_eq "$1: no root-owned file under /home" "$_found" ""
    snapshot >"$STATE/now"
    if cmp -s "$STATE/before" "$STATE/now"; then
        pass "$1: /etc/shadow, /etc/passwd and /etc/cron.d unchanged"
    else
        fail "$1: /etc/shadow, /etc/passwd or /etc/cron.d changed: $(diff "$STATE/before" "$STATE/now" | tr '\n' ' ')"
    fi
    check_eq "$1: PRAGMA integrity_check" "$(/usr/bin/tern_negotiate -check 2>&1)" "ok"
}
