//! Stored JSON text, handled as text: the store keeps each document exactly as serde_json wrote
//! it and rebuilds a run from those pieces without parsing a number.
//!
//! Why not parse and re-serialize: serde_json's default float parser (without its
//! `float_roundtrip` feature) can land one ulp off for 17-digit numbers, so a parsed and
//! re-printed document would differ from what `iogauge run --json` printed. Splicing the stored
//! text keeps `iogauge export` byte-identical to the original output.

/// Replaces the empty top-level `"results":[]` of a compact run header with the given compact
/// result documents. `None` when the header has no such member (not a header we wrote).
pub fn splice_results(header: &str, results: &[String]) -> Option<String> {
    let key = "\"results\":[]";
    let bytes = header.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                if depth == 1 && header[i..].starts_with(key) {
                    let at = i + key.len() - 1; // the `]`
                    let mut out = String::with_capacity(
                        header.len()
                            + results.iter().map(String::len).sum::<usize>()
                            + results.len(),
                    );
                    out.push_str(&header[..at]);
                    out.push_str(&results.join(","));
                    out.push_str(&header[at..]);
                    return Some(out);
                }
                i = string_end(bytes, i);
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Re-indents compact JSON exactly as `serde_json::to_string_pretty` would print the same value:
/// two spaces per level, `": "` after keys, `[]` and `{}` for empty containers. Tokens (strings,
/// numbers, literals) are copied as they are.
pub fn pretty(compact: &str) -> String {
    let bytes = compact.as_bytes();
    let mut out = String::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i);
                out.push_str(&compact[i..end]);
                i = end;
                continue;
            }
            open @ (b'{' | b'[') => {
                out.push(open as char);
                let close = if open == b'{' { b'}' } else { b']' };
                if bytes.get(i + 1) == Some(&close) {
                    out.push(close as char);
                    i += 2;
                    continue;
                }
                depth += 1;
                newline(&mut out, depth);
            }
            close @ (b'}' | b']') => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(close as char);
            }
            b',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            b':' => out.push_str(": "),
            _ => {
                // A number or literal: copy up to the next structural character.
                let end = bytes[i..]
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b']' | b':'))
                    .map_or(bytes.len(), |p| i + p);
                out.push_str(&compact[i..end]);
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Index just past the string starting with the quote at `start` (or the end of the text).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pretty_matches_serde_json() {
        let values = [
            json!({}),
            json!([]),
            json!({"a": [], "b": {}, "c": [1, 2.5, -3e-7, 1.7976931348623157e308], "d": null}),
            json!({"s": "quote \" backslash \\ comma, colon: brace { } [ ] newline \n ünï", "t": true}),
            json!([[[]], [{}], [{"x": [1, {"y": [false]}]}]]),
            json!({"nested": {"deep": {"deeper": [0.1, 0.2, 12345.678901234567]}}}),
        ];
        for v in values {
            let compact = serde_json::to_string(&v).unwrap();
            assert_eq!(
                pretty(&compact),
                serde_json::to_string_pretty(&v).unwrap(),
                "{compact}"
            );
        }
    }

    #[test]
    fn splice_puts_results_in_the_top_level_member_only() {
        let header = json!({
            "schema": "x",
            "system": {"results": [], "note": "\"results\":[]"},
            "results": [],
            "findings": [{"results": []}]
        });
        let compact = serde_json::to_string(&header).unwrap();
        let spliced =
            splice_results(&compact, &["{\"a\":1}".into(), "{\"b\":2.5}".into()]).unwrap();
        let back: serde_json::Value = serde_json::from_str(&spliced).unwrap();
        let mut expect = header.clone();
        expect["results"] = json!([{"a": 1}, {"b": 2.5}]);
        assert_eq!(back, expect);
        assert_eq!(
            splice_results(&compact, &[]).as_deref(),
            Some(compact.as_str())
        );
        assert_eq!(splice_results("{\"schema\":\"x\"}", &[]), None);
    }
}
