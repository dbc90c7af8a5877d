#!/bin/bash
# Runs tests/shared/run.sh on a machine that must not keep what it does
# (a developer's, shared with others): in a private mount namespace where
# /etc, /usr, /var and /home are overlays whose changes land in a temp dir
# and vanish with the namespace. The package, group tern, the test users
# and /etc/tern/tern_config are seen only by the suite's processes. Root
# only; arguments go to run.sh. CI runs run.sh directly, on a throwaway
# machine.
set -eu
[ "$(id -u)" = 0 ] || { echo "isolated.sh: needs root" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
upper=$(mktemp -d /tmp/tern-shared-XXXXXX)
trap 'rm -rf "$upper"' EXIT
status=0
unshare --mount --propagation private /bin/bash -c '
    set -e
    for d in etc usr var home; do
        mkdir -p "$0/$d/up" "$0/$d/work"
        mount -t overlay overlay -o "lowerdir=/$d,upperdir=$0/$d/up,workdir=$0/$d/work" "/$d"
    done
    exec bash "$1/run.sh" "${@:2}"
' "$upper" "$here" "$@" || status=$?
exit $status
