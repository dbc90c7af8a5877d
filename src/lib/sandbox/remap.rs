//! `transfer_output_remaps` (HTCondor's `filename_remap_find`): rules
//! `src = dest ; src2 = dest2`, tabs and newlines dropped, each side
//! trimmed, a backslash escaping the delimiter (`\=` in a source, `\;` in
//! a destination). A name matches a rule's source exactly; the first rule
//! wins and its result is remapped again (`a=b;b=c` sends `a` to `c`);
//! a name that matches nothing tries its parent path, the rest appended
//! (`d=out` sends `d/x` to `out/x`). A chain of more than 128 steps is a
//! cycle.

/// HTCondor's MAX_REMAP_RECURSIONS.
const MAX_STEPS: usize = 128;

#[derive(Debug, Default, PartialEq)]
pub struct Remaps(Vec<(String, String)>);

impl Remaps {
    pub fn parse(text: &str) -> Remaps {
        let clean: String = text.chars().filter(|c| *c != '\t' && *c != '\n').collect();
        let mut rules = Vec::new();
        for rule in split_unescaped(&clean, ';') {
            let parts = split_unescaped(&rule, '=');
            let mut it = parts.into_iter();
            let (Some(src), rest) = (it.next(), it.collect::<Vec<_>>()) else {
                continue;
            };
            if rest.is_empty() {
                continue;
            }
            let src = src.trim().to_string();
            let dest = rest.join("=").trim().to_string();
            if !src.is_empty() {
                rules.push((src, dest));
            }
        }
        Remaps(rules)
    }

    /// Adds a rule after the others (the shadow's std file rules).
    pub fn push(&mut self, src: &str, dest: &str) {
        self.0.push((src.into(), dest.into()));
    }

    fn once(&self, name: &str) -> Option<String> {
        if let Some((_, d)) = self.0.iter().find(|(s, _)| s == name) {
            return Some(d.clone());
        }
        let (parent, base) = name.rsplit_once('/')?;
        self.once(parent).map(|p| format!("{p}/{base}"))
    }

    /// Where `name` goes; `Err` with the chain's start for a cycle.
    pub fn apply(&self, name: &str) -> Result<String, String> {
        let mut cur = name.to_string();
        for _ in 0..MAX_STEPS {
            match self.once(&cur) {
                Some(next) if next != cur => cur = next,
                _ => return Ok(cur),
            }
        }
        Err(name.to_string())
    }
}

/// Splits at `delim` not preceded by a backslash; `\<delim>` becomes the
/// delimiter itself.
fn split_unescaped(text: &str, delim: char) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&delim) {
            out.last_mut().expect("one part at least").push(delim);
            chars.next();
        } else if c == delim {
            out.push(String::new());
        } else {
            out.last_mut().expect("one part at least").push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Remaps;

    #[test]
    fn chains_parents_escapes_and_cycles() {
        let r = Remaps::parse("a = b ; b=c;\td=out/sub; x\\=y = z\\;w");
        assert_eq!(r.apply("a").unwrap(), "c");
        assert_eq!(r.apply("d/f").unwrap(), "out/sub/f");
        assert_eq!(r.apply("x=y").unwrap(), "z;w");
        assert_eq!(r.apply("other").unwrap(), "other");
        assert!(Remaps::parse("a=b;b=a").apply("a").is_err());
        assert_eq!(Remaps::parse("").apply("a").unwrap(), "a");
    }
}
