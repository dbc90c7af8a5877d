#!/bin/bash
# The shared-mode suite, on the real installed package (root only; CI runs
# it after cargo test):
#
#   bash tests/shared/run.sh [--no-build]
#
# Builds the package (pkg/build-deb.sh; --no-build uses the .deb already
# in target/debian), installs it with apt-get, checks the statoverride,
# modes and `tern_status -check`, makes three users (ternt_a, ternt_b,
# ternt_c, homes 0700), runs every tests/shared/t_*.sh with the helpers of
# lib.sh and the after-each checks, then purges the package, checks that
# everything it made is gone and removes the users. Prints "N passed, N
# failed" and exits non-zero on any failure.
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
if [ "$(id -u)" != 0 ]; then
    echo "tests/shared/run.sh: needs root (it installs a package and makes users)" >&2
    [ "${TERN_REQUIRE_SHARED:-}" = 1 ] && exit 2
    echo "tests/shared/run.sh: skipped (set TERN_REQUIRE_SHARED=1 to make this a failure)" >&2
    exit 0
fi
build=1
[ "${1:-}" = --no-build ] && build=
STATE=$(mktemp -d)
RESULTS=$STATE/results
: >"$RESULTS"
export REPO STATE RESULTS
. tests/shared/lib.sh

summary() {
    p=$(grep -c '^pass' "$RESULTS")
    f=$(grep -c '^fail' "$RESULTS")
    echo "$p passed, $f failed"
    rm -rf "$STATE"
    [ "$f" = 0 ]
}

remove_users() {
    for u in $TERN_USERS; do
        if getent passwd "$u" >/dev/null; then
            # -f: even if a test left a process of the user running.
            userdel -r -f "$u" 2>/dev/null
        fi
    done
}

if [ -n "$build" ]; then
    bash pkg/build-deb.sh || {
        fail "pkg/build-deb.sh builds the package"
        summary
        exit 1
    }
fi
deb=$(ls target/debian/tern_*.deb 2>/dev/null | head -n 1)
if [ -z "$deb" ]; then
    fail "a package in target/debian"
    summary
    exit 1
fi
# What the kernel's link protections are, for the record: the suite must
# not rely on them.
echo "fs.protected_hardlinks=$(cat /proc/sys/fs/protected_hardlinks 2>/dev/null)" \
    "fs.protected_symlinks=$(cat /proc/sys/fs/protected_symlinks 2>/dev/null)" \
    "fs.protected_regular=$(cat /proc/sys/fs/protected_regular 2>/dev/null)"

remove_users
if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb" >"$STATE/install.log" 2>&1; then
    pass "apt-get install $deb"
else
    cat "$STATE/install.log" >&2
    fail "apt-get install $deb"
    summary
    exit 1
fi

for u in $TERN_USERS; do
    useradd --create-home --user-group --shell /bin/sh "$u"
    chmod 0700 "$(home_of "$u")"
done
check "the test users exist and are not in group tern" \
    sh -c '! id -nG ternt_a ternt_b ternt_c | grep -qw tern'
snapshot >"$STATE/before"

for t in tests/shared/t_*.sh; do
    name=$(basename "$t" .sh)
    echo "== $name"
    (. tests/shared/lib.sh && . "$t")
    after_each "$name"
done

# Purge, and check that everything the package made is gone.
# (Jobs still running would make prerm refuse: the tests leave none.)
if DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq tern >"$STATE/purge.log" 2>&1; then
    pass "apt-get purge tern"
else
    cat "$STATE/purge.log" >&2
    fail "apt-get purge tern"
fi
for p in /usr/bin/tern /usr/bin/tern_q /usr/libexec/tern /var/lib/tern /etc/tern \
    /etc/cron.d/tern /lib/systemd/system/tern-negotiate.path /usr/share/man/man7/tern_security.7.gz \
    /etc/systemd/system/paths.target.wants/tern-negotiate.path \
    /etc/systemd/system/timers.target.wants/tern-negotiate.timer; do
    check "purge removed $p" sh -c "! [ -e '$p' ] && ! [ -L '$p' ]"
done
check_not "purge removed the statoverride" dpkg-statoverride --list /usr/bin/tern
check_not "purge removed group tern" getent group tern

remove_users
check_not "the test users are gone" getent passwd ternt_a
summary
