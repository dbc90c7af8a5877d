//! What the targets share: the tools' big stack, and the guard that keeps
//! a fuzz input from running or reading anything outside the process.

/// Runs `f` on a thread with the stack every tern tool runs its work on
/// (cli's TOOL_STACK): deep nesting is within what the tools accept.
#[allow(dead_code)]
pub fn on_tool_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("a thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

/// Whether `text` could make a parser run a command or read a file
/// (`include`, `include command`, `... |`): such inputs are skipped, so the
/// fuzzer never runs what it invents.
#[allow(dead_code)]
pub fn reaches_outside(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("include") || text.contains('|') || lower.contains("$env") || lower.contains("getenv")
}

/// The input as text, unless it is not UTF-8 or could reach outside the
/// process ([`reaches_outside`]).
#[allow(dead_code)]
pub fn contained_text(data: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(data).ok()?;
    (!reaches_outside(text)).then(|| text.to_string())
}
