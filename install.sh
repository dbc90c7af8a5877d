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
#
# Shell completion (from the installed tern_complete) goes to
# ROOT/share/bash-completion/completions, ROOT/share/zsh/site-functions and
# ROOT/share/fish/vendor_completions.d, which the shells search for ROOT
# /usr/local or /usr; for any other ROOT the bash and fish files also go to
# $XDG_DATA_HOME (~/.local/share), where those shells look for a user's, and
# zsh needs ROOT/share/zsh/site-functions on its fpath (printed below).
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
    # Linked statically on linux-gnu (pkg/release-build.sh says why).
    . "$here/pkg/release-build.sh"
    # The versions of Cargo.lock, which the tests ran with (cargo install
    # otherwise resolves the newest compatible ones afresh).
    locked=--locked
    for a in "$@"; do
        case $a in --locked | --frozen) locked= ;; esac
    done
    RUSTFLAGS="${RUSTFLAGS:-} $tern_rustflags" \
        cargo install --path "$here" --root "$root" --target "$tern_host" --bin tern $locked "$@"
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

# Shell completion: one script per shell, written by the installed
# tern_complete, under each tool's name where the shell loads completions
# lazily by command name (bash, fish). Written under a temporary name and
# renamed, like the pages.
put() { # put FILE: stdin to FILE, atomically
    mkdir -p "$(dirname "$1")"
    cat >"$1.tmp"
    chmod 644 "$1.tmp"
    mv -f "$1.tmp" "$1"
}
if [ -x "$root/bin/tern_complete" ]; then
    tools=$("$root/bin/tern_complete" -shell bash | sed -n 's/^complete .* _tern_complete //p')
    data=${XDG_DATA_HOME:-$HOME/.local/share}
    case $root in
    /usr | /usr/local) dirs=$root/share ;;
    *) dirs="$root/share $data" ;;
    esac
    for d in $dirs; do
        "$root/bin/tern_complete" -shell bash | put "$d/bash-completion/completions/tern_complete"
        "$root/bin/tern_complete" -shell fish | put "$d/fish/vendor_completions.d/tern_complete.fish"
        for t in $tools; do
            [ "$t" = tern_complete ] && continue
            ln -sf tern_complete "$d/bash-completion/completions/$t"
            ln -sf tern_complete.fish "$d/fish/vendor_completions.d/$t.fish"
        done
    done
    "$root/bin/tern_complete" -shell zsh | put "$root/share/zsh/site-functions/_tern"
    echo "install.sh: shell completion for bash and fish installed; for zsh, put"
    echo "  fpath=($root/share/zsh/site-functions \$fpath)"
    echo "before compinit in ~/.zshrc"
fi
