//! What a daemon ClassAd hook prints (spec 8.3): `Attr = value` lines in
//! blocks ended by a line starting with `-`; `- tag` names the block's ad
//! (`<JobName>.tag`), `update:` arguments are accepted and have nothing to
//! do here (there is no collector); lines after the last separator form a
//! final block when the hook has exited. Bad lines are reported and
//! skipped; an empty block publishes nothing.

use crate::classad::ClassAd;

/// One published ad: its tag (empty for the job's own ad) and attributes.
#[derive(Clone, Debug)]
pub struct Block {
    pub tag: String,
    pub ad: ClassAd,
}

/// The blocks found, the bad lines, and how many bytes of the text were
/// used (everything with `final_block`; else up to the last separator).
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    pub blocks: Vec<Block>,
    pub bad: Vec<String>,
    pub consumed: usize,
}

/// Parses `text`; `prefix` is put before every attribute name. With
/// `final_block` false (a WaitForExit job still running) the lines after
/// the last separator wait for more output.
pub fn parse(text: &str, prefix: &str, final_block: bool) -> Parsed {
    let mut out = Parsed::default();
    let mut cur = ClassAd::new();
    let mut pos = 0;
    let mut lineno = 0;
    for raw in text.split_inclusive('\n') {
        let complete = raw.ends_with('\n');
        let end = pos + raw.len();
        pos = end;
        lineno += 1;
        let line = raw.trim();
        if let Some(args) = raw.strip_prefix('-') {
            let tag = args
                .split_whitespace()
                .next()
                .filter(|t| !t.contains(':'))
                .unwrap_or("")
                .to_string();
            if !complete && !final_block {
                break;
            }
            publish(&mut out, tag, std::mem::take(&mut cur));
            out.consumed = end;
            continue;
        }
        if !complete && !final_block {
            break;
        }
        if line.is_empty() {
            continue;
        }
        match crate::hooks::output::parse_line(&format!("{prefix}{line}")) {
            Ok((name, e)) => cur.insert(&name, e),
            Err(why) => out.bad.push(format!("line {lineno}: {why}: {line}")),
        }
    }
    if final_block {
        publish(&mut out, String::new(), cur);
        out.consumed = text.len();
    }
    out
}

fn publish(out: &mut Parsed, tag: String, ad: ClassAd) {
    if ad.is_empty() {
        return;
    }
    out.blocks.retain(|b| b.tag != tag);
    out.blocks.push(Block { tag, ad });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(b: &Block) -> Vec<&str> {
        b.ad.iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn blocks_tags_prefix_and_bad_lines() {
        let p = parse(
            "A = 1\n- one update:true\nB = 2\nnot a line\n-two\n\n-\nC = 3\n",
            "P_",
            true,
        );
        let tags: Vec<&str> = p.blocks.iter().map(|b| b.tag.as_str()).collect();
        // The empty block before the final one publishes nothing; the
        // final block is the job's own ad.
        assert_eq!(tags, vec!["one", "two", ""]);
        assert_eq!(names(&p.blocks[0]), vec!["P_A"]);
        assert_eq!(names(&p.blocks[2]), vec!["P_C"]);
        assert_eq!(p.bad, vec!["line 4: not 'Attr = value': not a line"]);
    }

    #[test]
    fn update_argument_is_not_a_tag() {
        let p = parse("A = 1\n- update:false\n", "", true);
        assert_eq!(p.blocks[0].tag, "");
    }

    #[test]
    fn a_stream_keeps_its_unfinished_block() {
        let text = "A = 1\n-\nB = 2\n";
        let p = parse(text, "", false);
        assert_eq!(p.blocks.len(), 1);
        assert_eq!(p.consumed, 8);
        let p = parse(&text[p.consumed..], "", true);
        assert_eq!(names(&p.blocks[0]), vec!["B"]);
    }
}
