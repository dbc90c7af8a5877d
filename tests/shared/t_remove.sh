# Removing the package while jobs run: prerm refuses, unless
# TERN_FORCE_REMOVE=1, which vacates them. (run.sh purges at the end;
# this calls the installed prerm directly.)

prerm=/var/lib/dpkg/info/tern.prerm
printf 'executable = /bin/sleep\narguments = 300\nqueue\n' | as_user_sh ternt_c 'cat > long.sub'
c=$(as_user ternt_c /usr/bin/tern_submit -terse long.sub | sed -n 's/^\([0-9]*\)\.0.*/\1/p' | head -n 1)
root_pass
if wait_for_status "$c.0" 2 30; then
    pass "ternt_c's long job runs"
else
    fail "ternt_c's long job runs"
fi
out=$("$prerm" remove 2>&1)
rc=$?
check_eq "prerm refuses while a job runs" "$rc" 1
case $out in
*"1 job(s) are running; refusing to remove tern."*) pass "prerm says why" ;;
*) fail "prerm says why: $out" ;;
esac
check_eq "the job still runs" "$(job_status "$c.0")" 2
TERN_FORCE_REMOVE=1 "$prerm" remove >/dev/null 2>&1
check_eq "TERN_FORCE_REMOVE=1 prerm vacates it" "$?" 0
check "the vacated job is idle again" wait_for_status "$c.0" 1 30
/usr/bin/tern_rm "$c" >/dev/null
check "and leaves the queue when removed" wait_for_status "$c.0" 3 30
as_user_sh ternt_c 'rm -f long.sub'
