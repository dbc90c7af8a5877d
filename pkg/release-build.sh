# The release build of the tools: what ./install.sh installs and what the
# scripts under bench/ time. Sourced (POSIX sh); defines tern_release_build.
#
# On a linux-gnu host the tools are linked statically: a dynamically linked
# start maps and relocates libc, libm and libgcc_s at every run of every
# tool, about a quarter of a short tool's cpu (tern_q 1.0: 4.4 ms against
# 3.1 ms of cpu on the development machine, under load). Users and groups
# are then looked up as src/lib/sys/nss.rs describes, so the static program
# never loads an NSS module. TERN_DYNAMIC=1 builds a dynamically linked
# program instead; the Debian package is one (pkg/build-deb.sh), so that
# glibc's updates reach it.
#
# Static linking needs an explicit --target: without one, cargo would also
# pass the flags to the proc-macro crates, which cannot be linked
# statically. The program then lands in target/<host>/release.

tern_host=$(rustc -vV | sed -n 's/^host: //p')
case $tern_host in
*-linux-gnu) tern_rustflags="-C target-feature=+crt-static -C relocation-model=static" ;;
*) tern_rustflags="" ;;
esac
[ "${TERN_DYNAMIC:-}" = 1 ] && tern_rustflags=""

# tern_release_build MANIFEST_DIR [cargo build options...]: builds the
# release tools and sets tern_release_dir to the directory they are in.
tern_release_build() {
    _dir=$1
    shift
    RUSTFLAGS="${RUSTFLAGS:-} $tern_rustflags" cargo build --release --quiet \
        --manifest-path "$_dir/Cargo.toml" --target "$tern_host" "$@"
    tern_release_dir=${CARGO_TARGET_DIR:-$_dir/target}/$tern_host/release
}
