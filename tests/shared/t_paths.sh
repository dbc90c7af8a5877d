# Paths a job names, turned against root or another user: symbolic links
# to a root-only file or into another user's home for the input, the
# error file, transferred input and the event log; output and Iwd in
# another home; and a user swapping links while root passes run. Every
# open and exec happens as the job's owner, so each fails as it would for
# the owner (a hold with its code) and nothing is read or written that
# the owner could not. Sourced helpers: lib.sh (run by run.sh).

A=ternt_a
B=ternt_b
ha=$(home_of $A)
hb=$(home_of $B)
held_code() { /usr/bin/tern_q -allusers "$1" -af HoldReasonCode; }

# Files of B's, in B's home (0700): readable and writable by everyone who
# could reach them, so only the path stops A.
as_user_sh $B 'echo b-secret > secret.txt; echo victim > victim.txt; echo b-log > b.log
    chmod 666 secret.txt victim.txt b.log'
b_files() { sha256sum "$hb/secret.txt" "$hb/victim.txt" "$hb/b.log"; }
b_before=$(b_files)

# held_by_pass DESC CODE CLUSTER: a root pass holds job CLUSTER.0 with
# CODE.
held_by_pass() {
    root_pass
    if wait_for_status "$3.0" 5 30; then
        check_eq "$1 is held with code $2" "$(held_code "$3.0")" "$2"
    else
        fail "$1 is held (status $(job_status "$3.0"))"
    fi
}

# expect_held DESC CODE SUBMIT-TEXT: A's job is held with CODE by a root
# pass, and removed.
expect_held() {
    j=$(submit_as $A "$3")
    if [ -z "$j" ]; then
        fail "$1: the submit failed"
        return
    fi
    held_by_pass "$1" "$2" "$j"
    /usr/bin/tern_rm "$j" >/dev/null
}

# ---- Symbolic links to a root-only file and to B's files.
as_user_sh $A "ln -sfn /etc/shadow in_root.lnk; ln -sfn $hb/secret.txt in_b.lnk
    ln -sfn /etc/shadow err_root.lnk; ln -sfn $hb/victim.txt err_b.lnk
    ln -sfn $hb/secret.txt xfer_b.lnk; ln -sfn $hb/b.log log_b.lnk"
expect_held "input -> /etc/shadow" 8 'executable = /bin/cat
input = in_root.lnk
output = leak.out
queue'
expect_held "input -> a file in another home" 8 'executable = /bin/cat
input = in_b.lnk
output = leak.out
queue'
expect_held "error -> /etc/shadow" 7 'executable = /bin/sh
arguments = "-c '"'"'echo overwritten >&2'"'"'"
error = err_root.lnk
queue'
expect_held "error -> a file in another home" 7 'executable = /bin/sh
arguments = "-c '"'"'echo overwritten >&2'"'"'"
error = err_b.lnk
queue'
expect_held "transfer_input_files = /etc/shadow" 13 'executable = /bin/cat
arguments = shadow
should_transfer_files = YES
transfer_input_files = /etc/shadow
output = leak.out
queue'
expect_held "transfer_input_files -> a file in another home" 13 'executable = /bin/cat
arguments = xfer_b.lnk
should_transfer_files = YES
transfer_input_files = xfer_b.lnk
output = leak.out
queue'
expect_held "output in another home" 7 "executable = /bin/echo
arguments = planted
output = $hb/made-by-a.out
queue"
# The event log is checked at submit, as condor_submit does, and a link in
# its place is refused there: nothing is queued.
printf '%s\n' 'executable = /bin/true
log = log_b.lnk
queue' | as_user_sh $A 'cat > job.sub'
queued_before=$(/usr/bin/tern_q -allusers -af ClusterId | wc -l)
out=$(as_user $A /usr/bin/tern_submit job.sub 2>&1)
check_eq "the event log -> a file in another home is refused at submit" "$? $out" \
    "1 ERROR: Invalid log file: \"$ha/log_b.lnk\" (refusing $ha/log_b.lnk: it is a symbolic link)"
check_eq "and nothing is queued" "$(/usr/bin/tern_q -allusers -af ClusterId | wc -l)" "$queued_before"
# A link put in the log's place after submit is refused when the job runs.
j=$(submit_as $A 'executable = /bin/true
log = own.log
hold = true
queue')
as_user_sh $A "ln -sfn $hb/b.log own.log"
as_user $A /usr/bin/tern_release "$j" >/dev/null
held_by_pass "the event log -> a file in another home" 22 "$j"
/usr/bin/tern_rm "$j" >/dev/null
check_not "nothing of /etc/shadow or B's files leaked to A" \
    as_user_sh $A 'grep -qs -e "^root:" -e b-secret leak.out'
check_not "nothing was made in B's home" test -e "$hb/made-by-a.out"

# ---- Iwd moved into another home after submit, with tern_qedit.
j=$(submit_as $A "executable = /bin/touch
arguments = made-by-a
initialdir = $ha
hold = true
queue")
check "A may qedit Iwd of A's own job" as_user $A /usr/bin/tern_qedit "$j" Iwd "\"$hb\""
as_user $A /usr/bin/tern_release "$j" >/dev/null
held_by_pass "Iwd moved into B's home" 14 "$j"
check_not "nothing was made in B's home by the job" test -e "$hb/made-by-a"
/usr/bin/tern_rm "$j" >/dev/null

# ---- Racing: A swaps the input, the output and the executable between
# A's own files and ones A may not use while root passes run. Each job
# ends completed or held; root never reads, writes or runs a target.
canary=/var/tmp/tern-root-canary
printf 'root-canary\n' >$canary
chmod 0600 $canary
printf '#!/bin/sh\ntouch /var/tmp/tern-root-only-ran\n' >/usr/local/bin/tern-root-only
chmod 0700 /usr/local/bin/tern-root-only
rm -f /var/tmp/tern-root-only-ran
as_user_sh $A 'rm -f stop race.in race.out race.sh mine.out; echo mine > mine.in
    printf "#!/bin/sh\ncat\n" > mine.sh; chmod 755 mine.sh
    ln -s mine.in race.in; ln -s mine.out race.out; ln -s mine.sh race.sh'
as_user_sh $A "while [ ! -e stop ]; do
    ln -sfn /etc/shadow race.in; ln -sfn $canary race.out; ln -sfn /usr/local/bin/tern-root-only race.sh
    ln -sfn $hb/secret.txt race.in; ln -sfn $hb/victim.txt race.out
    ln -sfn mine.in race.in; ln -sfn mine.out race.out; ln -sfn mine.sh race.sh
done" &
swapper=$!
(
    end=$(($(date +%s) + 15))
    while [ "$(date +%s)" -lt "$end" ]; do
        root_pass >/dev/null 2>&1
        sleep 0.3
    done
) &
passes=$!
race_jobs=
for i in 1 2 3 4 5 6 7 8 9 10; do
    c=$(submit_as $A 'executable = race.sh
transfer_executable = false
input = race.in
output = race.out
queue')
    race_jobs="$race_jobs $c"
    sleep 1
done
wait $passes
as_user_sh $A 'touch stop'
wait $swapper
root_pass
# done_or_held JOB: waits (60 s) until JOB has completed or is held.
done_or_held() {
    _deadline=$(($(date +%s) + 60))
    while [ "$(date +%s)" -le "$_deadline" ]; do
        case $(job_status "$1") in 4 | 5) return 0 ;; esac
        sleep 0.2
    done
    return 1
}
bad=
for c in $race_jobs; do
    done_or_held "$c.0"
    s=$(job_status "$c.0")
    case "$s $(held_code "$c.0" 2>/dev/null)" in
    4\ * | "5 6" | "5 7" | "5 8" | "5 14") ;;
    *) bad="$bad $c.0:$s/$(held_code "$c.0" 2>/dev/null)" ;;
    esac
done
check_eq "every raced job completed or was held for its own failure" "$bad" ""
check "some raced jobs ran" test -n "$race_jobs"
check_not "root never ran the root-only executable" test -e /var/tmp/tern-root-only-ran
check_eq "the root-only file the output swapped to is unchanged" "$(cat $canary)" "root-canary"
check_not "nothing of /etc/shadow or B's files reached A's home" \
    as_user_sh $A 'grep -qs -e "^root:" -e b-secret mine.out'
/usr/bin/tern_rm $A >/dev/null 2>&1
rm -f $canary /usr/local/bin/tern-root-only /var/tmp/tern-root-only-ran
check_eq "B's files are unchanged" "$(b_files)" "$b_before"
