//! Links the tools as position-dependent executables.
//!
//! A position-independent executable has about 300 KB of pointers (vtables,
//! static tables of strings) that the dynamic loader rewrites at every
//! start, each rewritten page a copy-on-write fault: about 85 of a short
//! tool's 310 page faults and a fifth of tern_submit's instructions, paid
//! on every call of every tool. Without PIE the linker fixes them once.
//! What is given up is the randomised load address of the tools' own code
//! (libraries, stack and heap stay randomised); `TERN_BUILD_PIE=1` keeps
//! PIE for a build that wants it (a hardened package, for example).
//!
//! Only optimised builds (release and the profiles made from it) drop PIE:
//! the debug build's start-up is not what anyone times, and kept PIE it is
//! the build the Debian package of CI's shared-mode suite is made from
//! (`TERN_DEB_PROFILE=dev`), with no second build of the crate for it.
fn main() {
    println!("cargo::rerun-if-env-changed=TERN_BUILD_PIE");
    let pie = std::env::var("TERN_BUILD_PIE").is_ok_and(|v| v == "1")
        || std::env::var("PROFILE").is_ok_and(|p| p != "release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    // A static build (`-C target-feature=+crt-static`, as ./install.sh
    // makes) gets its position dependence from `-C relocation-model`:
    // `-no-pie` on a static-pie link makes a program that crashes at start.
    let static_crt = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|f| f.split(',').any(|x| x == "crt-static"));
    if linux && !pie && !static_crt {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
