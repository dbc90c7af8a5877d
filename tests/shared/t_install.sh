# The installed package: the setgid program and its links, the files'
# owners and modes, the audit, and that only the setgid tools reach the
# queue.

check_eq "statoverride on /usr/bin/tern" \
    "$(dpkg-statoverride --list /usr/bin/tern)" "root tern 2755 /usr/bin/tern"
check_eq "/usr/bin/tern is root:tern 2755" "$(stat -c '%U:%G %a' /usr/bin/tern)" "root:tern 2755"
bad_links=
for t in "$REPO"/src/bin/*.rs; do
    n=$(basename "$t" .rs)
    [ "$(readlink "/usr/bin/$n")" = tern ] || bad_links="$bad_links $n"
done
check_eq "every tool is a symlink to tern" "$bad_links" ""
check_not "no condor_* names are installed" sh -c 'ls /usr/bin/condor_* >/dev/null 2>&1'
check_eq "/var/lib/tern is root:tern 2770" "$(stat -c '%U:%G %a' /var/lib/tern)" "root:tern 2770"
for d in shadow ctl; do
    check_eq "/var/lib/tern/$d is root:tern 2770" "$(stat -c '%U:%G %a' /var/lib/tern/$d)" "root:tern 2770"
done
check_eq "queue.db is root:tern 0660" "$(stat -c '%U:%G %a' /var/lib/tern/queue.db)" "root:tern 660"
check_eq "/etc/tern/tern_config is root 0644" "$(stat -c '%U:%G %a' /etc/tern/tern_config)" "root:root 644"
check_eq "/etc/cron.d/tern is root 0644" "$(stat -c '%U:%G %a' /etc/cron.d/tern)" "root:root 644"
check "the man pages are installed gzipped" test -f /usr/share/man/man7/tern_security.7.gz
check "bash completion is installed" test -f /usr/share/bash-completion/completions/tern_q
check "zsh completion is installed" test -f /usr/share/zsh/vendor-completions/_tern
check "fish completion is installed" test -f /usr/share/fish/vendor_completions.d/tern_q.fish
# Each loads in its shell and completes an option (as a user).
check_eq "bash completes tern_q -allu" "$(as_user ternt_a bash -c \
    '. /usr/share/bash-completion/completions/tern_q; COMP_WORDS=(tern_q -allu); COMP_CWORD=1
     _tern_complete tern_q -allu tern_q; printf "%s\n" "${COMPREPLY[@]}"' 2>&1)" "-allusers"
if command -v zsh >/dev/null; then
    check_eq "zsh completes tern_q -allu" "$(as_user ternt_a zsh -c \
        'compdef() { : }; compadd() { shift 2; print -l -- "$@" }; _files() { print FILES }
         source /usr/share/zsh/vendor-completions/_tern; words=(tern_q -allu); CURRENT=2; _tern' 2>&1)" \
        "-allusers"
fi
if command -v fish >/dev/null; then
    check_eq "fish completes tern_q -allu" "$(as_user ternt_a fish -c \
        'source /usr/share/fish/vendor_completions.d/tern_q.fish; complete -C "tern_q -allu"' 2>&1 |
        cut -f1)" "-allusers"
fi
if command -v deb-systemd-helper >/dev/null; then
    check "the path unit is enabled" test -L /etc/systemd/system/paths.target.wants/tern-negotiate.path
    check "the timer unit is enabled" test -L /etc/systemd/system/timers.target.wants/tern-negotiate.timer
fi
if command -v systemd-analyze >/dev/null; then
    check "systemd-analyze verify accepts the installed units" \
        systemd-analyze verify --man=no /lib/systemd/system/tern-negotiate.path \
        /lib/systemd/system/tern-negotiate.service /lib/systemd/system/tern-negotiate.timer
fi

out=$(/usr/bin/tern_status -check 2>&1)
rc=$?
check_eq "tern_status -check on the fresh install" "$rc $out" "0 no problems found"
chmod 2775 /var/lib/tern
out=$(/usr/bin/tern_status -check 2>&1)
rc=$?
check_eq "tern_status -check reports a wrong SPOOL mode" \
    "$rc $out" "1 /var/lib/tern: mode 2775, want 2770"
chmod 2770 /var/lib/tern
# Every file tern_security(7)'s FILES lists is audited: each one made
# wrong is its one line, and put back, no line.
check_eq "EXECUTE (/var/lib/tern-execute) is made by postinst, root:root 755" \
    "$(stat -c '%U:%G %a' /var/lib/tern-execute)" "root:root 755"
# audit_case DESC BREAK REPAIR WANT: BREAK makes tern_status -check print
# exactly WANT (exit 1); REPAIR puts it right again.
audit_case() {
    sh -c "$2"
    out=$(/usr/bin/tern_status -check 2>&1)
    rc=$?
    sh -c "$3"
    check_eq "tern_status -check reports $1" "$rc $out" "1 $4"
}
audit_case "a world-writable EXECUTE" "chmod 1777 /var/lib/tern-execute" \
    "chmod 0755 /var/lib/tern-execute" "/var/lib/tern-execute: mode 1777, writable by others"
audit_case "a tool's name linked elsewhere" "ln -sfn /bin/true /usr/bin/tern_q" \
    "ln -sfn tern /usr/bin/tern_q" \
    "/usr/bin/tern_q: a symbolic link to /bin/true, want one to /usr/bin/tern"
audit_case "a tool's name that is a copy" "rm /usr/bin/tern_rm && cp /usr/bin/tern /usr/bin/tern_rm" \
    "rm /usr/bin/tern_rm && ln -s tern /usr/bin/tern_rm" \
    "/usr/bin/tern_rm: not a symbolic link, want one to /usr/bin/tern"
audit_case "a missing installer link" "rm /usr/libexec/tern/tern_install" \
    "ln -s ../../bin/tern /usr/libexec/tern/tern_install" "/usr/libexec/tern/tern_install: missing"
audit_case "a group-writable cron file" "chmod 0664 /etc/cron.d/tern" \
    "chmod 0644 /etc/cron.d/tern" "/etc/cron.d/tern: mode 0664, writable by its group"
audit_case "a unit owned by a user" "chown ternt_a /lib/systemd/system/tern-negotiate.timer" \
    "chown root /lib/systemd/system/tern-negotiate.timer" \
    "/lib/systemd/system/tern-negotiate.timer: owner uid $(id -u ternt_a), want root (0)"
audit_case "a world-writable /etc/tern" "chmod 0777 /etc/tern" "chmod 0755 /etc/tern" \
    "/etc/tern: mode 0777, writable by others"
audit_case "a configuration owned by a user" "chown ternt_a /etc/tern/tern_config" \
    "chown root /etc/tern/tern_config" \
    "/etc/tern/tern_config: owner uid $(id -u ternt_a), want root (0)"
out=$(/usr/bin/tern_status -check 2>&1)
check_eq "and all put back, no problems" "$? $out" "0 no problems found"

retry usermod -a -G tern ternt_c
out=$(/usr/bin/tern_status -check 2>&1)
check_eq "tern_status -check reports a member of group tern" "$out" \
    "group tern: has members (ternt_c), want none: a member can write the queue directly"
retry gpasswd -d ternt_c tern >/dev/null

# The setgid bit takes effect: a user's tools open the queue, which the
# user cannot reach directly.
check "a user's tern_q reads the shared queue" \
    as_user_sh ternt_a '/usr/bin/tern_q -allusers >/dev/null'
check_not "a user cannot read queue.db directly" \
    as_user_sh ternt_a 'cat /var/lib/tern/queue.db >/dev/null 2>&1'
check_not "a user cannot list SPOOL" as_user_sh ternt_a 'ls /var/lib/tern >/dev/null 2>&1'
# A copy of the program is not setgid: it cannot write the queue.
printf 'executable = /bin/true\nqueue\n' | as_user_sh ternt_a 'cat > copy.sub'
check_not "a user's copy of tern cannot submit" \
    as_user_sh ternt_a 'cp /usr/bin/tern ./tern_submit && ./tern_submit copy.sub >/dev/null 2>&1'
as_user_sh ternt_a 'rm -f ./tern_submit copy.sub'
