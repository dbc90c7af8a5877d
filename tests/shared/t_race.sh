# Racing the pass: three users submit in parallel loops while root passes
# run back to back; every job runs exactly once, and the queue stays
# intact.

A=ternt_a
B=ternt_b
C=ternt_c
JOB='executable = /bin/sh
arguments = "-c '"'"'echo $(Cluster).$(Process) >> ran.txt'"'"'"
queue 2'
for u in $A $B $C; do
    as_user_sh $u ': > ran.txt; chmod 600 ran.txt'
    printf '%s\n' "$JOB" | as_user_sh $u 'cat > race.sub'
done
# Root passes back to back, as the path unit and the timer would start
# them, while the users submit.
(
    end=$(($(date +%s) + 20))
    while [ "$(date +%s)" -lt "$end" ]; do
        root_pass >/dev/null 2>&1
        sleep 0.2
    done
) &
passes=$!
for u in $A $B $C; do
    as_user_sh $u 'for i in $(seq 20); do /usr/bin/tern_submit race.sub >/dev/null || echo submit-failed; done' &
done
wait_users() {
    for j in $(jobs -p); do
        [ "$j" = "$passes" ] || wait "$j"
    done
}
wait_users
wait "$passes"
# Whatever is left runs now.
deadline=$(($(date +%s) + 120))
while [ "$(date +%s)" -lt "$deadline" ]; do
    left=$(/usr/bin/tern_q -allusers -constraint 'JobStatus == 1 || JobStatus == 2' -af ClusterId | wc -l)
    [ "$left" = 0 ] && break
    root_pass >/dev/null 2>&1
    sleep 0.5
done
check_eq "every raced job ran" "$left" 0
for u in $A $B $C; do
    h=$(home_of $u)
    check_eq "$u: 40 jobs ran" "$(wc -l <"$h/ran.txt")" 40
    check_eq "$u: no job ran twice" "$(sort "$h/ran.txt" | uniq -d | wc -l)" 0
done
