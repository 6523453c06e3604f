//! The hand-written parts of `docs/benchmarks.md`. `report` regenerates the page whole, but the
//! analyses written under its tables (why a ratio moved, what a run measured) are the team's
//! record and must survive a regeneration. Such a part sits between two marker lines,
//! `<!-- notes: KEY -->` and `<!-- end notes: KEY -->`; the generated page leaves an empty pair
//! of markers (an anchor) where each kind of note belongs, and `carry` moves every marked part
//! of the old page into the new one: at its anchor, or, when the new page has none for its key
//! (a section not generated this time), at the end under a heading of its own, markers
//! included, so the next regeneration carries it again.

use std::collections::HashMap;

/// Notes on the Wasm compile corpus and on allocation time (after the corpus's summary).
pub const WASM_COMPILE: &str = "wasm-compile";
/// Notes on the Wasm benchmarks' compile and run times (after their summary).
pub const WASM_RUN: &str = "wasm-run";
/// Notes on the ablation tables (after the section's introduction).
pub const ABLATION: &str = "ablation";
/// Notes on the bench programs' code speed (after its summary).
pub const CODE_SPEED: &str = "code-speed";

/// Heading of the part of the page holding notes whose section was not generated.
const ORPHANS: &str = "## Notes carried from the previous page";

fn start_marker(key: &str) -> String {
    format!("<!-- notes: {key} -->")
}

fn end_marker(key: &str) -> String {
    format!("<!-- end notes: {key} -->")
}

/// The empty pair of markers a generated page puts where notes of `key` belong, as a
/// paragraph of its own.
pub fn anchor(key: &str) -> String {
    format!("{}\n{}\n\n", start_marker(key), end_marker(key))
}

/// One marked part of a page: its key, its body (the lines between the markers, each with
/// its newline) and the byte range of the whole part, markers included.
struct Part<'a> {
    key: &'a str,
    body: &'a str,
    range: std::ops::Range<usize>,
}

/// The marked parts of `page`, in order. A start marker without its end, an end marker
/// without its start, a part inside another or a key marked twice is an error: regenerating
/// over a page in that state would lose text, so the caller leaves the page as it is.
fn parts(page: &str) -> Result<Vec<Part<'_>>, String> {
    let mut found = Vec::new();
    let mut open: Option<(&str, usize, usize)> = None;
    let mut at = 0;
    for (n, line) in page.split_inclusive('\n').enumerate() {
        let start = at;
        at += line.len();
        let text = line.trim_end();
        if let Some(key) = marker_key(text, "<!-- notes: ") {
            if let Some((open_key, _, _)) = open {
                return Err(format!(
                    "line {}: notes `{key}` start inside notes `{open_key}`",
                    n + 1
                ));
            }
            open = Some((key, start, at));
        } else if let Some(key) = marker_key(text, "<!-- end notes: ") {
            match open.take() {
                Some((open_key, from, body)) if open_key == key => {
                    if found.iter().any(|p: &Part| p.key == key) {
                        return Err(format!("line {}: notes `{key}` marked twice", n + 1));
                    }
                    found.push(Part {
                        key,
                        body: &page[body..start],
                        range: from..at,
                    });
                }
                Some((open_key, _, _)) => {
                    return Err(format!(
                        "line {}: notes `{key}` end while `{open_key}` is open",
                        n + 1
                    ));
                }
                None => return Err(format!("line {}: notes `{key}` end without a start", n + 1)),
            }
        }
    }
    match open {
        Some((key, _, _)) => Err(format!("notes `{key}` start without an end")),
        None => Ok(found),
    }
}

/// The key of a marker line of the given kind (`prefix` up to the key), if `line` is one.
fn marker_key<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let key = line.strip_prefix(prefix)?.strip_suffix(" -->")?;
    (!key.is_empty() && !key.contains(char::is_whitespace)).then_some(key)
}

/// Whether `page`'s markers are well formed (`carry` would accept it as the old page):
/// checked before a report's runs, which take minutes, rather than after them.
pub fn check(page: &str) -> Result<(), String> {
    parts(page).map(|_| ())
}

/// The new page with the notes of the old one carried over (see the module doc). An error
/// names the first malformed marker of either page.
pub fn carry(old: &str, new: &str) -> Result<String, String> {
    let old_parts = parts(old).map_err(|e| format!("the existing page: {e}"))?;
    let new_parts = parts(new).map_err(|e| format!("the generated page: {e}"))?;
    let bodies: HashMap<&str, &str> = old_parts.iter().map(|p| (p.key, p.body)).collect();
    let mut out = String::with_capacity(old.len().max(new.len()));
    let mut at = 0;
    for p in &new_parts {
        out.push_str(&new[at..p.range.start]);
        out.push_str(&start_marker(p.key));
        out.push('\n');
        out.push_str(bodies.get(p.key).copied().unwrap_or(p.body));
        out.push_str(&end_marker(p.key));
        out.push('\n');
        at = p.range.end;
    }
    out.push_str(&new[at..]);
    let orphans: Vec<&Part> = old_parts
        .iter()
        .filter(|o| !new_parts.iter().any(|p| p.key == o.key))
        .collect();
    if !orphans.is_empty() {
        // The generator never writes the heading, so the notes carried here last time come
        // back under one heading with the rest.
        while !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(ORPHANS);
        out.push_str("\n\n");
        for o in orphans {
            out.push_str(&old[o.range.clone()]);
            out.push('\n');
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(parts: &[(&str, &str)]) -> String {
        let mut s = String::from("# Benchmarks\n\n| table | 1 |\n\n");
        for (key, body) in parts {
            s.push_str(&format!(
                "## Section {key}\n\n{}{body}{}\n\n",
                start_marker(key) + "\n",
                end_marker(key)
            ));
        }
        s
    }

    #[test]
    fn notes_move_into_the_regenerated_page_at_their_anchors() {
        let old = page(&[("a", "first note\n"), ("b", "second\n\nparagraph\n")]);
        let new = page(&[("a", ""), ("b", "")]).replace("| table | 1 |", "| table | 2 |");
        let carried = carry(&old, &new).unwrap();
        assert_eq!(carried, old.replace("| table | 1 |", "| table | 2 |"));
        // A page carried over itself is itself: nothing added, nothing lost.
        assert_eq!(carry(&carried, &carried).unwrap(), carried);
    }

    #[test]
    fn notes_without_an_anchor_are_kept_at_the_end_once() {
        let old = page(&[("a", "kept\n"), ("gone", "section not generated\n")]);
        let new = page(&[("a", "")]);
        let carried = carry(&old, &new).unwrap();
        assert!(carried.contains("kept\n"));
        assert!(carried.ends_with(&format!(
            "{ORPHANS}\n\n{}\nsection not generated\n{}\n\n",
            start_marker("gone"),
            end_marker("gone")
        )));
        // Regenerated again without the section: still there, under one heading.
        let again = carry(&carried, &new).unwrap();
        assert_eq!(again, carried);
        assert_eq!(again.matches(ORPHANS).count(), 1);
        // The section generated again: the note goes back to its anchor.
        let back = carry(&again, &page(&[("a", ""), ("gone", "")])).unwrap();
        assert_eq!(back, old);
    }

    #[test]
    fn anchors_without_old_notes_stay_empty() {
        let new = format!("# Page\n\n{}", anchor(WASM_RUN));
        assert_eq!(carry("# Old page, no notes\n", &new).unwrap(), new);
    }

    #[test]
    fn malformed_markers_are_refused() {
        let s = |k: &str| start_marker(k) + "\n";
        let e = |k: &str| end_marker(k) + "\n";
        for bad in [
            format!("{}text\n", s("a")),
            format!("text\n{}", e("a")),
            format!("{}{}{}{}", s("a"), s("b"), e("b"), e("a")),
            format!("{}{}", s("a"), e("b")),
            format!("{}{}{}{}", s("a"), e("a"), s("a"), e("a")),
        ] {
            assert!(check(&bad).is_err(), "accepted: {bad:?}");
            assert!(carry(&bad, "# new\n").is_err(), "accepted: {bad:?}");
            assert!(carry("# old\n", &bad).is_err(), "accepted: {bad:?}");
        }
    }

    /// The checked-in page's markers are well formed and carrying it over itself changes
    /// nothing, so `report` can regenerate it without losing a note.
    #[test]
    fn the_benchmarks_page_carries_over_itself() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/benchmarks.md");
        let page = std::fs::read_to_string(path).unwrap();
        let keys: Vec<&str> = parts(&page).unwrap().iter().map(|p| p.key).collect();
        assert_eq!(keys, [CODE_SPEED, WASM_COMPILE, WASM_RUN, ABLATION]);
        assert_eq!(carry(&page, &page).unwrap(), page);
    }
}
