#!/bin/sh
# Installs tern for the user running it: the tools with `cargo install`, and
# the man pages next to them, so that `man tern_q` works with no MANPATH.
#
#   ./install.sh [--root DIR] [--man-only] [other `cargo install` options]
#
# The tools are one program, `tern`, that runs the tool it is named after:
# cargo installs it to ROOT/bin and each tool's name (tern_q, tern_submit,
# ...) is a hard link to it there, so the tools together take the room of
# one. The pages go to ROOT/share/man/man1, man5 and man7.
# man-db looks for pages in PREFIX/share/man for every PREFIX/bin on PATH, so
# the pages are found wherever the tools are. ROOT is chosen as cargo
# chooses its install root: --root DIR, else $CARGO_INSTALL_ROOT, else
# $CARGO_HOME, else ~/.cargo. (cargo's `install.root` configuration key is
# not read; the root is always passed to cargo, so tools and pages cannot
# end up apart.) --man-only copies the pages and builds nothing.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-${HOME:?HOME is not set}/.cargo}}
man_only=
pass=

die() {
    echo "install.sh: error: $*" >&2
    exit 2
}

# The options this script reads are taken out; the rest go to cargo install.
while [ $# -gt 0 ]; do
    case $1 in
    --root)
        [ $# -ge 2 ] || die "--root needs a directory"
        root=$2
        shift 2
        ;;
    --root=*)
        root=${1#--root=}
        shift
        ;;
    --man-only)
        man_only=1
        shift
        ;;
    -h | --help)
        # The usage is the header comment above.
        sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"
        exit 0
        ;;
    *)
        # Quoted one by one so that `eval set` below restores them intact.
        pass="$pass '$(printf '%s' "$1" | sed "s/'/'\\\\''/g")'"
        shift
        ;;
    esac
done
[ -n "$root" ] || die "the install root is empty"

if [ -z "$man_only" ]; then
    eval "set -- $pass"
    cargo install --path "$here" --root "$root" --bin tern "$@"
    # Each name is linked under a temporary name and renamed over any
    # earlier install (separate binaries), never left half-made.
    for tool in "$here"/src/bin/*.rs; do
        name=$(basename "$tool" .rs)
        ln -f "$root/bin/tern" "$root/bin/.$name.tmp"
        mv -f "$root/bin/.$name.tmp" "$root/bin/$name"
    done
    echo "install.sh: the tools are links to $root/bin/tern"
fi

# Every page is written under a temporary name and renamed, so an
# interrupted install leaves no half-written page.
for section in 1 5 7; do
    dest=$root/share/man/man$section
    mkdir -p "$dest"
    for page in "$here"/man/man$section/*.$section; do
        name=$(basename "$page")
        cp "$page" "$dest/.$name.tmp"
        chmod 644 "$dest/.$name.tmp"
        mv -f "$dest/.$name.tmp" "$dest/$name"
    done
done
echo "install.sh: man pages in $root/share/man (found by man for $root/bin on PATH)"
