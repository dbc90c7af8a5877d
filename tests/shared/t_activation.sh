# Activation without a tern daemon: a user's submit and tern_negotiate
# leave the mark, a root pass takes it on, `tern_negotiate -loop -watch`
# starts a pass within about a second of a user's submit.

mark=/var/lib/tern/negotiator.wanted
rm -f "$mark"
# The job records who it runs as, in its owner's home.
job='executable = job.sh
output = job.out
error = job.err
queue'
for u in ternt_a ternt_b; do
    as_user_sh "$u" 'printf "#!/bin/sh\nid -u > started.txt\nsleep 2\n" > job.sh && chmod 755 job.sh'
done

c=$(submit_as ternt_a "$job")
check "ternt_a submits" test -n "$c"
check "a user's submit leaves the pass-wanted mark" test -e "$mark"
check_eq "and starts no pass: the job is idle" "$(job_status "$c.0")" 1
check "a user's tern_negotiate exits 0" as_user ternt_a /usr/bin/tern_negotiate
check_eq "and runs no pass" "$(job_status "$c.0")" 1
check_not "a user's tern_negotiate -loop is refused" \
    as_user_sh ternt_a '/usr/bin/tern_negotiate -loop 2>/dev/null'
root_pass
check_not "a root pass removes the mark" test -e "$mark"
check "the root pass starts the job" wait_for_status "$c.0" 2 30
check "the job finishes" wait_for_status "$c.0" 4 60
check_eq "the job ran as its owner" \
    "$(as_user_sh ternt_a 'cat started.txt')" "$(id -u ternt_a)"

# The resident fallback: a mark made by a user's submit starts a pass.
/usr/bin/tern_negotiate -loop -watch &
loop=$!
sleep 1
t0=$(date +%s.%N)
c=$(submit_as ternt_b "$job")
if wait_for_status "$c.0" 2 10; then
    t1=$(date +%s.%N)
    pass "-loop -watch starts ternt_b's job ($(echo "$t1 - $t0" | bc 2>/dev/null || echo "?") s after the submit began)"
else
    fail "-loop -watch starts ternt_b's job within 10 s"
fi
wait_for_status "$c.0" 4 60
kill "$loop"
wait "$loop" 2>/dev/null
check_eq "ternt_b's job ran as ternt_b" "$(as_user_sh ternt_b 'cat started.txt')" "$(id -u ternt_b)"

# A mark flood: ternt_a re-makes the mark in a loop for 10 s (a user's
# tern_negotiate only leaves it). Root passes serve it at about one round
# a second (each root round waits as long as the last took, at least
# 1 s), whichever root pass runs them (the resident loop, a pass a
# finishing shadow asked for): counted from the record every root round
# leaves in negotiator.lock (its last field counts them).
rounds_so_far() { awk 'NR == 1 { print $4 + 0 }' /var/lib/tern/negotiator.lock; }
/usr/bin/tern_negotiate -loop -watch >/dev/null 2>&1 &
loop=$!
sleep 1
before=$(rounds_so_far)
t0=$(date +%s)
as_user_sh ternt_a 'end=$(($(date +%s) + 10)); n=0
    while [ "$(date +%s)" -lt "$end" ]; do /usr/bin/tern_negotiate; n=$((n + 1)); done
    echo "$n" > flood.count'
sleep 2
rounds=$(($(rounds_so_far) - before))
window=$(($(date +%s) - t0 + 1))
kill "$loop"
wait "$loop" 2>/dev/null
marks=$(as_user_sh ternt_a 'cat flood.count')
check "a 10 s mark flood ($marks marks) gets at most one root round a second ($rounds in $window s)" \
    test "$rounds" -le "$window"
check "and the marks are still served (got $rounds rounds)" test "$rounds" -ge 5
