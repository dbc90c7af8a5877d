#!/bin/sh
# Builds tern's Debian package for shared mode (tern_security(7)):
#
#   pkg/build-deb.sh            -> target/debian/tern_<version>_<arch>.deb
#
# It builds the release binary (or TERN_DEB_PROFILE's), stages the package's tree under
# target/debian/root, and runs `dpkg-deb --root-owner-group --build`
# (Debian's own tool, on every Debian machine; cargo-deb would add a
# crate install for nothing it does better, and cannot give a file a
# group anyway: the setgid bit comes from dpkg-statoverride in postinst).
#
# The tree: /usr/bin/tern (0755 in the archive; postinst makes it
# root:tern 2755) with every tool name a symlink to it (no condor_*
# names: they would clash with an htcondor package); the hidden root
# installer /usr/libexec/tern/tern_install; man pages gzipped under
# /usr/share/man; bash, zsh and fish completions made by the built
# tern_complete; the conffile /etc/tern/tern_config; the systemd units;
# /etc/cron.d/tern; the copyright and changelog.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
out=target/debian
stage=$out/root

die() {
    echo "build-deb.sh: error: $*" >&2
    exit 1
}
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (apt-get install dpkg)"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || die "no version in Cargo.toml"
arch=$(dpkg --print-architecture)

# Position-independent (build.rs links optimised tools without PIE for
# speed): a setgid program keeps its own code's randomised load address.
# TERN_DEB_PROFILE=dev packages the debug build instead (CI, to reuse what
# cargo test built, as its differential suite does); that build is always
# PIE, and setting TERN_BUILD_PIE would make cargo build the crate again,
# as would leaving out the test targets (--tests: their dev-dependencies
# turn on features of shared crates, so without them the dependencies and
# the crate are built a second time). Such a package is compressed fast,
# not small: xz over a 94 MB debug program took 40 s.
profile=${TERN_DEB_PROFILE:-release}
case $profile in
dev) cargo build --profile dev --locked --bin tern --tests ;;
*) TERN_BUILD_PIE=1 cargo build --profile "$profile" --locked --bin tern ;;
esac
case $profile in
dev) bin=target/debug/tern ;;
*) bin=target/$profile/tern ;;
esac

rm -rf "$stage"
umask 022
mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/libexec/tern" \
    "$stage/usr/share/doc/tern" "$stage/etc/tern" "$stage/etc/cron.d" \
    "$stage/lib/systemd/system"

install -m 0755 "$bin" "$stage/usr/bin/tern"
tools=$(for t in src/bin/*.rs; do basename "$t" .rs; done)
for t in $tools; do
    ln -s tern "$stage/usr/bin/$t"
done
ln -s ../../bin/tern "$stage/usr/libexec/tern/tern_install"

for section in 1 5 7; do
    mkdir -p "$stage/usr/share/man/man$section"
    for page in man/man$section/*.$section; do
        gzip -9n <"$page" >"$stage/usr/share/man/man$section/$(basename "$page").gz"
    done
done

# Completions, as install.sh makes them: one script per shell from the
# built tern_complete (run through a link, as the multicall program picks
# the tool by its name), and each tool's name linked to it where the
# shell loads completions by command name.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$here/$bin" "$tmp/tern_complete"
bash_dir=$stage/usr/share/bash-completion/completions
fish_dir=$stage/usr/share/fish/vendor_completions.d
zsh_dir=$stage/usr/share/zsh/vendor-completions
mkdir -p "$bash_dir" "$fish_dir" "$zsh_dir"
"$tmp/tern_complete" -shell bash >"$bash_dir/tern_complete"
"$tmp/tern_complete" -shell fish >"$fish_dir/tern_complete.fish"
"$tmp/tern_complete" -shell zsh >"$zsh_dir/_tern"
for t in $("$tmp/tern_complete" -shell bash | sed -n 's/^complete .* _tern_complete //p'); do
    case $t in tern_complete | condor_*) continue ;; esac
    ln -s tern_complete "$bash_dir/$t"
    ln -s tern_complete.fish "$fish_dir/$t.fish"
done

install -m 0644 pkg/tern_config "$stage/etc/tern/tern_config"
install -m 0644 pkg/cron.d/tern "$stage/etc/cron.d/tern"
for u in pkg/systemd/*; do
    install -m 0644 "$u" "$stage/lib/systemd/system/$(basename "$u")"
done
install -m 0644 pkg/debian/copyright "$stage/usr/share/doc/tern/copyright"
gzip -9n <pkg/debian/changelog >"$stage/usr/share/doc/tern/changelog.gz"
chmod 0644 "$stage/usr/share/doc/tern/changelog.gz"

for s in postinst prerm postrm; do
    install -m 0755 "pkg/debian/$s" "$stage/DEBIAN/$s"
done
printf '/etc/tern/tern_config\n/etc/cron.d/tern\n' >"$stage/DEBIAN/conffiles"

# Depends from the binary's libraries, as dpkg-shlibdeps finds them
# (it wants a debian/control, so it runs in a scratch tree).
depends=
if command -v dpkg-shlibdeps >/dev/null; then
    mkdir -p "$tmp/src/debian"
    printf 'Source: tern\n\nPackage: tern\nArchitecture: any\n' >"$tmp/src/debian/control"
    depends=$(cd "$tmp/src" && dpkg-shlibdeps -O "$here/$stage/usr/bin/tern" 2>/dev/null |
        sed -n 's/^shlibs:Depends=//p') || depends=
fi
[ -n "$depends" ] || depends="libc6, libgcc-s1"
maintainer=${DEBEMAIL:+${DEBFULLNAME:-tern} <$DEBEMAIL>}
[ -n "$maintainer" ] || maintainer="$(git log -1 --format='%an <%ae>' 2>/dev/null || echo 'tern maintainers <root@localhost>')"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<CONTROL
Package: tern
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends, adduser | passwd
Section: admin
Priority: optional
Description: HTCondor's scheduling model on one workstation, shared by its users
 tern is HTCondor's scheduling model as small command-line tools over one
 SQLite queue: tern_submit, tern_q, tern_rm and the rest take the same
 flags and print the same output as their condor_* counterparts.
 .
 This package installs tern in shared mode: one queue in /var/lib/tern for
 every user of the machine, the tools setgid to group tern, jobs run as
 their owners by a root negotiation pass started by systemd (or cron).
 See tern_security(7).
CONTROL

# md5sums of every file but the conffiles (dpkg keeps theirs itself), as
# dh_md5sums writes them.
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' |
    grep -v -x -e etc/tern/tern_config -e etc/cron.d/tern | LC_ALL=C sort |
    xargs md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"

case $profile in
dev) compress="-Zgzip -z1" ;;
*) compress="-Zxz" ;;
esac
# shellcheck disable=SC2086 # $compress is two words or one
dpkg-deb --root-owner-group $compress --build "$stage" "$out/tern_${version}_${arch}.deb"
echo "build-deb.sh: $out/tern_${version}_${arch}.deb"
