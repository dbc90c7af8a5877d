# The queue itself under attack: the database written by hand, entries
# planted in SPOOL, a submit that would hold the write lock, and the
# loader's and allocator's environment given to a setgid tool. Sourced
# helpers: lib.sh (run by run.sh).

A=ternt_a
B=ternt_b
db=/var/lib/tern/queue.db
queue_rows() { /usr/bin/tern_q -allusers -af ClusterId ProcId Owner JobStatus; }

# ---- Writing the database directly, with what every machine has: the
# shell's redirection and dd (and sqlite3 where it is installed). SPOOL
# is closed to everyone outside group tern, so each open fails.
printf 'executable = /bin/true\nhold = true\nqueue\n' | as_user_sh $A 'cat > held.sub'
as_user $A /usr/bin/tern_submit held.sub >/dev/null
before=$(queue_rows)
# direct_write DESC CMD: CMD, as $B, fails with "Permission denied".
direct_write() {
    out=$(as_user_sh $B "$2" 2>&1)
    rc=$?
    case "$rc $out" in
    0\ *) fail "$1: it succeeded" ;;
    *"Permission denied"*) pass "$1 is refused: Permission denied" ;;
    *) fail "$1: exit $rc, $out" ;;
    esac
}
direct_write "appending to queue.db" "printf x >> $db"
direct_write "truncating queue.db" ": > $db"
direct_write "writing a frame into queue.db-wal with dd" \
    "dd if=/dev/zero of=$db-wal bs=4096 count=1 conv=notrunc"
direct_write "writing queue.db-shm with dd" "dd if=/dev/zero of=$db-shm bs=1 count=1 conv=notrunc"
direct_write "replacing queue.db-wal" "ln -sf /dev/null $db-wal"
if command -v sqlite3 >/dev/null; then
    out=$(as_user $B sqlite3 "$db" 'DELETE FROM procs' 2>&1)
    case $out in
    *"unable to open database"*) pass "sqlite3 as a user is refused: $out" ;;
    *) fail "sqlite3 as a user: $out" ;;
    esac
fi
check_eq "the queue is unchanged after the writes" "$(queue_rows)" "$before"
check_eq "queue.db, -wal and -shm are still root's, group tern, 0660" \
    "$(stat -c '%U:%G %a' $db $db-wal $db-shm | sort -u)" "root:tern 660"
check_eq "no database file of a user in SPOOL" \
    "$(find /var/lib/tern -maxdepth 1 -name 'queue.db*' ! -uid 0)" ""

# ---- Entries planted in SPOOL (simulated as root: a user cannot enter
# SPOOL, only a bug in a setgid tool could). The pass refuses each, says
# so, does not hang, and leaves what they point at alone.
canary=/var/tmp/tern-canary
printf 'canary\n' >$canary
chmod 0600 $canary
j=$(submit_as $A 'executable = /bin/true
queue')
lock=/var/lib/tern/shadow/$j.0.lock
# planted DESC WHY: a root pass ends (no hang), leaves job $j idle and
# says "job $j.0 not started: refusing LOCK: WHY".
planted() {
    out=$(timeout 60 /usr/bin/tern_negotiate -wait-lock 30 2>&1)
    rc=$?
    check_eq "a pass with a job lock planted as $1 ends, exit 0" "$rc" 0
    case $out in
    *"tern_negotiate: job $j.0 not started: refusing $lock: $2"*)
        pass "the pass refuses the job lock planted as $1" ;;
    *) fail "the pass refuses the job lock planted as $1: $out" ;;
    esac
    check_eq "and leaves the job idle" "$(job_status "$j.0")" 1
}
ln -s $canary "$lock"
planted "a symlink" "it is a symbolic link"
rm -f "$lock"
mkfifo "$lock"
planted "a FIFO" "it is not a regular file"
rm -f "$lock"
# The pass lock itself: no pass runs until it is put right.
mv /var/lib/tern/negotiator.lock "$STATE/negotiator.lock"
ln -s $canary /var/lib/tern/negotiator.lock
out=$(timeout 60 /usr/bin/tern_negotiate -wait-lock 30 2>&1)
check_eq "a pass lock planted as a symlink is refused" "$? $out" \
    "1 tern_negotiate: error: cannot open the negotiator lock file: refusing /var/lib/tern/negotiator.lock: it is a symbolic link"
rm -f /var/lib/tern/negotiator.lock
mv "$STATE/negotiator.lock" /var/lib/tern/negotiator.lock
mark=/var/lib/tern/negotiator.wanted
rm -f $mark
ln -s $canary $mark
out=$(timeout 60 /usr/bin/tern_negotiate -wait-lock 30 2>&1)
check_eq "a mark planted as a symlink is removed, not followed" "$? $out" "0 "
check_not "the planted mark is gone" test -L $mark
check_eq "what the planted entries pointed at is unchanged" "$(cat $canary)" "canary"
check "and the job runs once its lock is right" wait_for_status "$j.0" 4 60
rm -f $canary

# ---- A submit whose `queue from cmd |` command blocks holds no lock: a
# user cannot keep everyone else's submits, or root's pass, waiting.
as_user_sh $A 'rm -f gate && mkfifo gate'
printf 'executable = /bin/true\narguments = $(x)\nqueue x from cat gate |\n' |
    as_user_sh $A 'cat > slow.sub'
as_user $A /usr/bin/tern_submit -terse slow.sub >"$STATE/slow.out" 2>&1 &
slow=$!
sleep 1
t0=$(date +%s)
jb=$(submit_as $B 'executable = /bin/true
queue')
root_pass
t1=$(date +%s)
check "another user's submit goes through while the command blocks" test -n "$jb"
check "so does a root pass: both within 10 s (took $((t1 - t0)) s)" test $((t1 - t0)) -lt 10
check "the blocked submit is still waiting for its command" kill -0 $slow
as_user_sh $A 'printf "a\nb\n" > gate'
wait $slow
check "then it queues its jobs" grep -q ' - .*\.1$' "$STATE/slow.out"
/usr/bin/tern_rm $A >/dev/null 2>&1

# ---- The loader's and allocator's environment given to a setgid tool:
# the loader drops it (AT_SECURE), the tool starts its own environment
# afresh, and nothing of it reaches a root pass, its shadows or the job.
if command -v cc >/dev/null; then
    cat >"$STATE/canary.c" <<'EOF'
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void canary(void) {
    int fd = open("/tmp/tern-preload-canary", O_CREAT | O_WRONLY | O_APPEND, 0666);
    if (fd >= 0) { (void)write(fd, "x", 1); close(fd); }
}
EOF
    lib=/usr/local/lib/tern-canary.so
    cc -shared -fPIC -o $lib "$STATE/canary.c"
    chmod 0755 $lib
    rm -f /tmp/tern-preload-canary
    as_user $B env LD_PRELOAD=$lib /bin/true
    check "the canary library works in an ordinary program" test -e /tmp/tern-preload-canary
    rm -f /tmp/tern-preload-canary
    evil="LD_PRELOAD=$lib LD_LIBRARY_PATH=/tmp GLIBC_TUNABLES=glibc.malloc.check=3:glibc.malloc.perturb=170 MALLOC_CHECK_=3 MALLOC_PERTURB_=170 MALLOC_ARENA_MAX=1 MIMALLOC_VERBOSE=1 RUST_MIN_STACK=1 RUST_BACKTRACE=full"
    # The banner's clock is cut off: the two runs may straddle a second.
    untimed() { sed 's/ @ [0-9/]* [0-9:]*$//'; }
    plain=$(as_user $B /usr/bin/tern_q -allusers 2>&1 | untimed)
    # shellcheck disable=SC2086
    with=$(as_user $B env $evil /usr/bin/tern_q -allusers 2>&1 | untimed)
    check_eq "tern_q with the loader's variables prints what it prints without" "$with" "$plain"
    check_not "the canary library is never loaded by a setgid tool" test -e /tmp/tern-preload-canary
    printf 'executable = /bin/sleep\narguments = 60\nqueue\n' | as_user_sh $B 'cat > env.sub'
    # shellcheck disable=SC2086
    j=$(as_user $B env $evil /usr/bin/tern_submit -terse env.sub | cut -d. -f1)
    root_pass
    if wait_for_status "$j.0" 2 30; then
        spid=$(head -n 1 "/var/lib/tern/shadow/$j.0.lock")
        jpid=$(pgrep -u $B -x sleep | head -n 1)
        for p in "$spid" "$jpid"; do
            found=$(tr '\0' '\n' <"/proc/$p/environ" | grep -E '^(LD_|GLIBC_TUNABLES|MALLOC_|MIMALLOC_|RUST_MIN_STACK)' | tr '\n' ' ')
            check_eq "no loader or allocator variable in process $p's environment" "$found" ""
        done
    else
        fail "the job submitted with the loader's variables starts"
    fi
    /usr/bin/tern_rm "$j" >/dev/null
    wait_for_status "$j.0" 3 30
    check_not "the canary library was never loaded by the pass, shadow or job" \
        test -e /tmp/tern-preload-canary
    rm -f $lib /tmp/tern-preload-canary
else
    fail "cc is needed to build the LD_PRELOAD canary (the Rust toolchain's linker)"
fi
