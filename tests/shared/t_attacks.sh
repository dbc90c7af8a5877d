# The threat list of the shared-mode spec (section 7), tried by three real
# users against the installed package: each sees every job and changes
# only their own; jobs run as their owners; every attack is refused and
# leaves nothing behind. Sourced helpers: lib.sh (run by run.sh).

A=ternt_a
B=ternt_b
C=ternt_c
uid_of() { id -u "$1"; }

# A job that reports who it ran as, with the submitter's log. It is
# submitted held, so it waits, whatever passes run, until its owner
# releases it.
WHO='executable = /bin/sh
arguments = "-c '"'"'id -u; id -g; id -G; umask; pwd'"'"'"
output = who.out
log = who.log
hold = true
queue'

# What a job row looks like to root, to compare before and after.
row() { /usr/bin/tern_q -allusers "$1" -long 2>/dev/null | grep -v '^ServerTime' | sort; }
# One attribute of a queued job, as root sees it.
attr() { /usr/bin/tern_q -allusers "$1" -af "$2"; }

# ---- Every user submits; everyone sees every job.
ja=$(submit_as $A "$WHO")
jb=$(submit_as $B "$WHO")
jc=$(submit_as $C "$WHO")
check "each user submits" test -n "$ja" -a -n "$jb" -a -n "$jc"
for u in $A $B $C; do
    seen=$(as_user $u /usr/bin/tern_q -allusers -af Owner | sort -u | tr '\n' ' ')
    check_eq "$u sees every user's jobs" "$seen" "$A $B $C "
done
check_eq "Owner is the real user" "$(attr "$ja" Owner)" "$A"
check_eq "OwnerUid is the real uid" "$(attr "$ja" OwnerUid)" "$(uid_of $A)"

# ---- Nobody changes another's job, by id, by user, by constraint.
before=$(row "$ja")
for t in "tern_rm $ja" "tern_hold $ja" "tern_release $ja" "tern_qedit $ja Foo 1" \
    "tern_prio -p 5 $ja" "tern_vacate_job $ja" "tern_suspend $ja" "tern_continue $ja" \
    "tern_rm $A" "tern_release $A"; do
    # shellcheck disable=SC2086
    check_not "$B may not: $t" as_user $B /usr/bin/$t
done
as_user $B /usr/bin/tern_qedit -constraint true Foo 2 >/dev/null 2>&1
as_user $B /usr/bin/tern_release -constraint true >/dev/null 2>&1
as_user $B /usr/bin/tern_hold -constraint true >/dev/null 2>&1
check_eq "$A's job is byte-identical after $B's attempts" "$(row "$ja")" "$before"
check_eq "$B's -constraint edited $B's own job" "$(attr "$jb" Foo)" 2
check_eq "$C's job untouched by $B's -constraint" "$(attr "$jc" Foo)" undefined
check_eq "$C's job still held" "$(job_status "$jc")" 5

# ---- Identity from the environment, and environment overrides of a
# setgid tool.
out=$(as_user $B env USER=$A LOGNAME=$A HOME="$(home_of $A)" /usr/bin/tern_submit -terse job.sub | cut -d. -f1)
check_eq "USER/LOGNAME/HOME do not make the owner" "$(attr "$out" Owner)" "$B"
/usr/bin/tern_rm "$out" >/dev/null
check_not "_TERN_QUEUE_SUPER_USERS does not make a super user" \
    as_user $B env _TERN_QUEUE_SUPER_USERS=$B /usr/bin/tern_rm "$ja"
check_not "_TERN_QUEUE_ALL_USERS_TRUSTED does not trust" \
    as_user $B env _TERN_QUEUE_ALL_USERS_TRUSTED=true /usr/bin/tern_hold "$ja"
as_user_sh $B 'printf "include : touch /tmp/tern-canary |\nSPOOL = /tmp/tern-evil\n" > evil.conf'
as_user_sh $B 'mkdir -p .config/tern && cp evil.conf .config/tern/tern_config'
out=$(as_user $B env TERN_CONFIG="$(home_of $B)/evil.conf" _TERN_SPOOL=/tmp/tern-evil \
    XDG_CONFIG_HOME="$(home_of $B)/.config" TERN_NOW=1 /usr/bin/tern_submit -terse job.sub | cut -d. -f1)
check "a submit with overrides still lands in the shared queue" test -n "$out"
check_not "the config command never ran" test -e /tmp/tern-canary
check_not "the overridden SPOOL was never made" test -e /tmp/tern-evil
qdate=$(attr "$out" QDate)
check "TERN_NOW is ignored by a setgid tool" test "${qdate:-0}" -gt 1000000000
check_eq "the config value a user sees is the system's" \
    "$(as_user $B env _TERN_SPOOL=/tmp/x /usr/bin/tern_config_val SPOOL)" /var/lib/tern
/usr/bin/tern_rm "$out" >/dev/null
rm -f /tmp/tern-canary

# ---- Forged owners, immutable attributes, the database itself.
printf '%s\n' "$WHO" | sed 's/^queue/+Owner = "'$A'"\nqueue/' | as_user_sh $B 'cat > forged.sub'
check_not "a forged Owner is refused" as_user $B /usr/bin/tern_submit forged.sub
printf '%s\n' "$WHO" | sed 's/^queue/+Owner = "root"\nqueue/' | as_user_sh $B 'cat > root.sub'
check_not "Owner root is refused" as_user $B /usr/bin/tern_submit root.sub
for attr in Owner User ClusterId ProcId JobUniverse JobStatus OwnerUid; do
    check_not "qedit of $attr is refused" as_user $B /usr/bin/tern_qedit "$jb" $attr '"x"'
done
check_not "a user cannot list the spool" as_user $B ls /var/lib/tern
check_not "a user cannot open the database" as_user $B test -r /var/lib/tern/queue.db
if command -v python3 >/dev/null; then
    check_not "a user cannot write the database with SQLite" as_user $B python3 -c \
        "import sqlite3; sqlite3.connect('file:/var/lib/tern/queue.db?mode=rw', uri=True).execute('delete from jobs')"
fi
domain=$(/usr/bin/tern_config_val UID_DOMAIN)
accountant() { /usr/bin/tern_userprio -allusers -long 2>&1; }
accounts_before=$(accountant)
for s in "-setprio $A@$domain 100" "-setfactor $A@$domain 1000" "-resetusage $A@$domain" \
    "-delete $A@$domain" "-resetall" "-setfactor $B@$domain 1"; do
    # shellcheck disable=SC2086
    out=$(as_user $B /usr/bin/tern_userprio $s 2>&1)
    rc=$?
    case "$rc $out" in
    0\ *) fail "$B may not tern_userprio $s: it succeeded: $out" ;;
    *"not a queue super user"* | *"may not"* | *"ermission"*) pass "$B may not tern_userprio $s: $out" ;;
    *) fail "$B may not tern_userprio $s: exit $rc, $out" ;;
    esac
done
check_eq "the accountant is unchanged by $B's attempts" "$(accountant)" "$accounts_before"

# ---- Jobs run as their owners.
for pair in "$A $ja" "$B $jb" "$C $jc"; do
    set -- $pair
    as_user "$1" /usr/bin/tern_release "$2" >/dev/null
done
root_pass
for pair in "$A $ja" "$B $jb" "$C $jc"; do
    set -- $pair
    check "$1's job completes" wait_for_status "$2" 4 60
    h=$(home_of "$1")
    check_eq "$1's job ran as $1" "$(sed -n 1p "$h/who.out")" "$(uid_of "$1")"
    check_eq "$1's job has $1's group" "$(sed -n 2p "$h/who.out")" "$(id -g "$1")"
    groups=$(sed -n 3p "$h/who.out")
    tern_gid=$(getent group tern | cut -d: -f3)
    case " $groups " in
    *" 0 "* | *" $tern_gid "*) fail "$1's job has root's or tern's group: $groups" ;;
    *) pass "$1's job has only $1's groups" ;;
    esac
    check_eq "$1's job ran in $1's home" "$(sed -n 5p "$h/who.out")" "$h"
    check_eq "$1 owns the job's output" "$(stat -c %U "$h/who.out")" "$1"
    check_eq "$1 owns the event log" "$(stat -c %U "$h/who.log")" "$1"
done

# ---- Symlinked and swapped files.
held_code() { attr "$1" HoldReasonCode; }
as_user_sh $A 'ln -sf /etc/shadow out.lnk'
j=$(submit_as $A 'executable = /bin/echo
arguments = overwritten
output = out.lnk
queue')
root_pass
check "Out -> /etc/shadow is held" wait_for_status "$j" 5 30
check_eq "… with code 7" "$(held_code "$j")" 7
/usr/bin/tern_rm "$j" >/dev/null

as_user_sh $A "ln -sf /etc/cron.d/tern-evil evil.log; ln -sf $(home_of $B)/planted b.log"
j=$(submit_as $A 'executable = /bin/true
log = evil.log
queue')
j2=$(submit_as $A 'executable = /bin/true
log = b.log
queue')
root_pass
sleep 2
check_not "nothing appears in /etc/cron.d" test -e /etc/cron.d/tern-evil
check_not "nothing appears in $B's home" test -e "$(home_of $B)/planted"
/usr/bin/tern_rm "$j" "$j2" >/dev/null 2>&1

j=$(submit_as $A 'executable = /bin/cat
input = /etc/shadow
output = leak.out
queue')
if [ -n "$j" ]; then
    root_pass
    check "In = /etc/shadow is held" wait_for_status "$j" 5 30
    check_eq "… with code 8" "$(held_code "$j")" 8
    /usr/bin/tern_rm "$j" >/dev/null
else
    pass "In = /etc/shadow is refused at submit"
fi
check_not "nothing of /etc/shadow leaked" as_user_sh $A 'grep -q root: leak.out'

j=$(submit_as $A "executable = /bin/true
initialdir = $(home_of $B)
output = made.out
queue")
if [ -n "$j" ]; then
    root_pass
    check "Iwd in $B's home is held" wait_for_status "$j" 5 30
    /usr/bin/tern_rm "$j" >/dev/null
else
    pass "Iwd in $B's home is refused at submit"
fi
check_not "nothing was made in $B's home" test -e "$(home_of $B)/made.out"

# Swapped between submit and start.
as_user_sh $A 'mkdir -p w && rm -f race.out'
j=$(submit_as $A 'executable = /bin/echo
arguments = overwritten
output = race.out
queue')
as_user_sh $A 'ln -s /etc/passwd race.out'
root_pass
check "Out swapped for a symlink after submit is held" wait_for_status "$j" 5 30
/usr/bin/tern_rm "$j" >/dev/null
j=$(submit_as $A "executable = /bin/touch
arguments = planted-by-job
initialdir = $(home_of $A)/w
queue")
as_user_sh $A 'rmdir w && ln -s /root w'
root_pass
check "Iwd swapped for /root after submit is held" wait_for_status "$j" 5 30
check_not "nothing was made in /root" test -e /root/planted-by-job
/usr/bin/tern_rm "$j" >/dev/null

# A root-only executable.
install -m 0700 /bin/true /usr/local/bin/tern-root-only
j=$(submit_as $A 'executable = /usr/local/bin/tern-root-only
transfer_executable = false
queue')
if [ -n "$j" ]; then
    root_pass
    check "a root-only executable is held" wait_for_status "$j" 5 30
    check_eq "… with code 6" "$(held_code "$j")" 6
    /usr/bin/tern_rm "$j" >/dev/null
else
    pass "a root-only executable is refused at submit"
fi
rm -f /usr/local/bin/tern-root-only

# ---- The job's processes are out of reach of the other users, and the
# root shadow out of its owner's.
j=$(submit_as $A 'executable = /bin/sleep
arguments = 300
queue')
root_pass
if wait_for_status "$j" 2 30; then
    pid=$(pgrep -u $A -x sleep | head -n 1)
    check_not "$B cannot signal $A's job" as_user $B kill -0 "$pid"
    spid=$(head -n 1 "/var/lib/tern/shadow/$j.0.lock")
    check_not "$A cannot stop the root shadow" as_user $A kill -STOP "$spid"
    as_user $A /usr/bin/tern_rm "$j" >/dev/null
    check "$A's tern_rm reaches the root shadow" wait_for_status "$j" 3 30
else
    fail "a sleeping job starts"
fi

# ---- The tools only root's pass starts refuse a user: a shadow run
# set-group-id by ternt_a on ternt_b's job would write b's row and run b's
# job as a.
jv=$(submit_as $B "$WHO")
before=$(row "$jv")
for t in tern_shadow tern_gridmanager tern_job_router tern_fetchwork tern_cron tern_install; do
    check_not "$A cannot run $t" as_user $A /bin/bash -c \
        "exec -a $t /usr/bin/tern -job $jv.0 -slot scheduler -claim x"
done
check_eq "$B's job is untouched by $A's system tools" "$(row "$jv")" "$before"
/usr/bin/tern_rm "$jv" >/dev/null

# ---- A copied binary is not setgid.
as_user_sh $A 'cp /usr/bin/tern ./tern_q && ./tern_q -allusers' >/dev/null 2>&1
check_not "a copied tern cannot read the queue" as_user_sh $A './tern_q -allusers'

