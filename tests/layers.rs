//! The house's shape, checked rather than drawn: every import in src/ points down the layer
//! order written in docs/architecture.md, and no files import each other round a circle.
//!
//! An import is any path that names another file of the crate: `crate::a::b`, `super::x`,
//! `self::x`, or a child module by its name; tests (inline `mod tests` blocks and files
//! declared under `#[cfg(test)]`) are left out, since they may reach anywhere. A module's
//! layer is its top-level name's line in the order; modules on one line are peers and may not
//! import each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layer order: the first fenced block after "## Layers", top line first; each line's
/// words before a `#` are modules.
fn layers() -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string("docs/architecture.md").expect("docs/architecture.md");
    let after = doc
        .split_once("## Layers")
        .expect("docs/architecture.md has a \"## Layers\" section")
        .1;
    let block = after
        .split("```")
        .nth(1)
        .expect("a fenced block under ## Layers");
    block
        .lines()
        .skip(1) // the fence's info string
        .map(|l| l.split('#').next().unwrap_or(""))
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The source with comments, strings and character literals blanked (kept the same length, so
/// nothing inside them reads as a path).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, s: &[u8]| {
        out.extend(s.iter().map(|&c| if c == b'\n' { c } else { b' ' }))
    };
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, 0);
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &rest[..j]);
            i += j;
        } else if (rest[0] == b'r' || rest.starts_with(b"br"))
            && !(i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && {
                let k = if rest[0] == b'b' { 2 } else { 1 };
                let hashes = rest[k..].iter().take_while(|&&c| c == b'#').count();
                rest.get(k + hashes) == Some(&b'"')
            }
        {
            let k = if rest[0] == b'b' { 2 } else { 1 };
            let hashes = rest[k..].iter().take_while(|&&c| c == b'#').count();
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body = k + hashes + 1;
            let end = rest[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(rest.len(), |p| body + p + close.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'\'' {
            // A character literal ('a', '\n', '"') or a lifetime ('a): only the first is blanked.
            let end = if rest.get(1) == Some(&b'\\') {
                rest.iter().skip(2).position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = std::str::from_utf8(&rest[1..])
                    .ok()
                    .and_then(|s| s.chars().next());
                ch.map(char::len_utf8)
                    .filter(|&n| rest.get(1 + n) == Some(&b'\''))
                    .map(|n| n + 2)
            };
            match end {
                Some(e) => {
                    blank(&mut out, &rest[..e]);
                    i += e;
                }
                None => {
                    out.push(b'\'');
                    i += 1;
                }
            }
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8 whole (only ASCII is replaced)")
}

/// `code` without its `#[cfg(test)] mod NAME { … }` blocks.
fn without_inline_tests(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let after = &out[at + "#[cfg(test)]".len()..];
        let t = after.trim_start();
        let is_block =
            t.starts_with("mod ") && t.find(['{', ';']).is_some_and(|p| t.as_bytes()[p] == b'{');
        if !is_block {
            // Not a block: blank the attribute alone and look further.
            out.replace_range(at..at + "#[cfg(test)]".len(), &" ".repeat(12));
            continue;
        }
        let open = at + "#[cfg(test)]".len() + (after.len() - t.len()) + t.find('{').unwrap();
        let mut depth = 0;
        let mut end = out.len();
        for (k, c) in out[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.replace_range(at..end, "");
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file of src/: `src/db/backend.rs` is `db::backend`, main.rs the root.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix("src").unwrap().with_extension("");
    let parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if parts == ["main"] {
        Vec::new()
    } else {
        parts
    }
}

fn ident_at(s: &str) -> &str {
    let n = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..n]
}

/// Every path in `code` that starts with `crate`, `super`, `self` or one of `children`, as
/// module segments from the crate's root (a `use` group's items each its own path).
fn paths_in(code: &str, me: &[String], children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let word = ident_at(&code[i..]);
        let boundary = i == 0 || {
            let p = bytes[i - 1];
            !(p.is_ascii_alphanumeric() || p == b'_' || p == b':')
        };
        if word.is_empty() || !boundary {
            i += word.len().max(1);
            continue;
        }
        let starts = matches!(word, "crate" | "super" | "self") || children.contains(word);
        if !starts || !code[i + word.len()..].starts_with("::") {
            i += word.len();
            continue;
        }
        // The segments, then a group if one follows.
        let mut segs: Vec<String> = Vec::new();
        let mut j = i;
        loop {
            let w = ident_at(&code[j..]);
            if w.is_empty() {
                break;
            }
            segs.push(w.to_string());
            j += w.len();
            if code[j..].starts_with("::") {
                j += 2;
            } else {
                break;
            }
        }
        let base = resolve_start(&segs, me);
        let mut items = vec![Vec::new()];
        if code[j..].starts_with('{') {
            let close = code[j..].find('}').map_or(code.len(), |p| j + p);
            items = code[j + 1..close]
                .split(',')
                .map(|item| {
                    let item = item.trim().split(" as ").next().unwrap_or("");
                    item.split("::")
                        .map(|s| ident_at(s.trim_start_matches('{').trim()).to_string())
                        .take_while(|s| !s.is_empty() && s != "self")
                        .collect()
                })
                .collect();
            j = close;
        }
        for item in items {
            found.push(base.iter().cloned().chain(item).collect());
        }
        i = j.max(i + 1);
    }
    found
}

/// `segs` made absolute: `crate::` dropped, each `super` one level up from `me`, `self` and a
/// bare child name below `me`.
fn resolve_start(segs: &[String], me: &[String]) -> Vec<String> {
    match segs[0].as_str() {
        "crate" => segs[1..].to_vec(),
        "super" => {
            let ups = segs.iter().take_while(|s| *s == "super").count();
            let mut base = me[..me.len().saturating_sub(ups)].to_vec();
            base.extend(segs[ups..].iter().cloned());
            base
        }
        "self" => me.iter().chain(&segs[1..]).cloned().collect(),
        _ => me.iter().chain(segs).cloned().collect(),
    }
}

struct House {
    /// Each file's module path.
    modules: BTreeMap<Vec<String>, PathBuf>,
    /// File → the files it imports.
    arrows: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

fn house() -> House {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    files.sort();
    // Files declared under #[cfg(test)] are tests, wherever they are.
    let mut tests = BTreeSet::new();
    let mut sources = BTreeMap::new();
    for f in &files {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        let dir = match f.file_name().is_some_and(|n| n == "main.rs") {
            true => PathBuf::from("src"),
            false => f.with_extension(""),
        };
        let mut rest = code.as_str();
        while let Some(at) = rest.find("#[cfg(test)]") {
            rest = &rest[at + 12..];
            let t = rest.trim_start();
            let t = t
                .strip_prefix("pub(crate) ")
                .or(t.strip_prefix("pub "))
                .unwrap_or(t);
            if let Some(m) = t.strip_prefix("mod ") {
                let name = ident_at(m.trim_start());
                if m.trim_start()[name.len()..].trim_start().starts_with(';') {
                    tests.insert(dir.join(format!("{name}.rs")));
                }
            }
        }
        sources.insert(f.clone(), (dir, without_inline_tests(&code)));
    }
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .filter(|f| !tests.contains(*f))
        .map(|f| (module_of(f), f.clone()))
        .collect();
    let mut arrows = BTreeMap::new();
    for (me, f) in &modules {
        let code = &sources[f].1;
        let children: BTreeSet<String> = code
            .match_indices("mod ")
            .filter(|(at, _)| *at == 0 || !code.as_bytes()[at - 1].is_ascii_alphanumeric())
            .map(|(at, _)| ident_at(code[at + 4..].trim_start()).to_string())
            .filter(|n| !n.is_empty())
            .collect();
        let mut to = BTreeSet::new();
        for path in paths_in(code, me, &children) {
            // A module's root file is its face: it declares its children and hands their names
            // on, so its paths into them are not imports (theirs into it are).
            if path.len() > me.len()
                && path[..me.len()] == me[..]
                && children.contains(&path[me.len()])
            {
                continue;
            }
            // The longest prefix that is a file of the crate.
            if let Some(target) = (1..=path.len())
                .rev()
                .find_map(|k| modules.get(&path[..k]))
                .filter(|t| *t != f)
            {
                to.insert(target.clone());
            }
        }
        arrows.insert(f.clone(), to);
    }
    House { modules, arrows }
}

fn top(house: &House, f: &Path) -> String {
    house
        .modules
        .iter()
        .find(|(_, p)| p.as_path() == f)
        .and_then(|(m, _)| m.first().cloned())
        .unwrap_or_else(|| "main".into())
}

#[test]
fn every_import_points_down_the_layers() {
    let layers = layers();
    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let house = house();
    let tops: BTreeSet<String> = house.arrows.keys().map(|f| top(&house, f)).collect();
    let unlisted: Vec<&String> = tops
        .iter()
        .filter(|t| !layer_of.contains_key(t.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "modules missing from the layer order in docs/architecture.md: {unlisted:?}"
    );
    let gone: Vec<&&str> = layer_of.keys().filter(|m| !tops.contains(**m)).collect();
    assert!(
        gone.is_empty(),
        "the layer order names modules src/ does not have: {gone:?}"
    );
    let mut up = Vec::new();
    for (from, tos) in &house.arrows {
        let a = top(&house, from);
        for to in tos {
            let b = top(&house, to);
            if a != b && layer_of[a.as_str()] >= layer_of[b.as_str()] {
                up.push(format!(
                    "{} -> {} ({a} is not above {b})",
                    from.display(),
                    to.display()
                ));
            }
        }
    }
    assert!(
        up.is_empty(),
        "imports that do not point down:\n{}",
        up.join("\n")
    );
}

#[test]
fn no_files_import_each_other_round_a_circle() {
    let house = house();
    let circles = circles(&house.arrows);
    assert!(
        circles.is_empty(),
        "files that import each other round a circle (each with the arrows that tie it):\n{}",
        circles
            .iter()
            .map(|c| {
                let ties: Vec<String> = c
                    .iter()
                    .flat_map(|f| {
                        house.arrows[f]
                            .iter()
                            .filter(|t| c.contains(*t))
                            .map(move |t| format!("  {} -> {}", f.display(), t.display()))
                    })
                    .collect();
                ties.join("\n")
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

/// The strongly connected groups of more than one file (Tarjan's algorithm).
fn circles(arrows: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<BTreeSet<PathBuf>> {
    struct T<'a> {
        arrows: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a Path, (usize, usize)>,
        stack: Vec<&'a Path>,
        next: usize,
        out: Vec<BTreeSet<PathBuf>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a Path) {
        t.index.insert(v, (t.next, t.next));
        t.next += 1;
        t.stack.push(v);
        let arrows = t.arrows;
        for w in arrows.get(v).into_iter().flatten() {
            let w = w.as_path();
            match t.index.get(w).copied() {
                None => {
                    visit(t, w);
                    let lw = t.index[w].1;
                    let e = t.index.get_mut(v).unwrap();
                    e.1 = e.1.min(lw);
                }
                Some((iw, _)) if t.stack.contains(&w) => {
                    let e = t.index.get_mut(v).unwrap();
                    e.1 = e.1.min(iw);
                }
                Some(_) => {}
            }
        }
        let (i, low) = t.index[v];
        if i == low {
            let at = t.stack.iter().rposition(|p| *p == v).unwrap();
            let group: BTreeSet<PathBuf> = t.stack.drain(at..).map(Path::to_path_buf).collect();
            if group.len() > 1 {
                t.out.push(group);
            }
        }
    }
    let mut t = T {
        arrows,
        index: BTreeMap::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in arrows.keys() {
        if !t.index.contains_key(v.as_path()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The checker itself: it sees the imports a file makes in each of its forms, and none in a
/// comment, a string or a test.
#[test]
fn the_checker_sees_paths_and_nothing_else() {
    let me = vec!["db".to_string(), "common".to_string()];
    let children = BTreeSet::from(["inner".to_string()]);
    let code = code_only(
        "use crate::store::{Recorder, x::Y as Z};\n\
         use super::backend::Cells; // crate::commented::out\n\
         let s = \"crate::in_a_string\"; let c = '\"'; fn f<'a>(_: &'a str) {}\n\
         inner::go(); self::deep::x(); super::super::plan::Plan;\n\
         #[cfg(test)]\nmod tests { use crate::present::x; }\n",
    );
    let paths = paths_in(&without_inline_tests(&code), &me, &children);
    let joined: BTreeSet<String> = paths.iter().map(|p| p.join("::")).collect();
    let want: BTreeSet<String> = [
        "store::Recorder",
        "store::x::Y",
        "db::backend::Cells",
        "db::common::inner::go",
        "db::common::deep::x",
        "plan::Plan",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(joined, want);
}

/// Rooms a reader can hold in mind: no file of src/ over 700 lines but the command line's
/// definitions (one option after another), and no function over 200 lines.
#[test]
fn files_and_functions_stay_small() {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let mut big = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines = text.lines().count();
        if lines > 700 && !f.ends_with("cli.rs") {
            big.push(format!("{} has {lines} lines", f.display()));
        }
        let code = code_only(&text);
        let rows: Vec<&str> = code.lines().collect();
        for (i, row) in rows.iter().enumerate() {
            let t = row.trim_start();
            let t = t
                .strip_prefix("pub(crate) ")
                .or(t.strip_prefix("pub(super) "))
                .or(t.strip_prefix("pub "))
                .unwrap_or(t);
            let t = t.strip_prefix("const ").unwrap_or(t);
            if !t.starts_with("fn ") {
                continue;
            }
            // The function runs to the line where its braces balance again.
            let (mut depth, mut opened) = (0i64, false);
            let end = rows[i..].iter().position(|r| {
                for c in r.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                (opened && depth <= 0) || (!opened && r.trim_end().ends_with(';'))
            });
            let n = end.map_or(0, |e| e + 1);
            if n > 200 {
                big.push(format!(
                    "{}:{} {} has {n} lines",
                    f.display(),
                    i + 1,
                    ident_at(&t[3..])
                ));
            }
        }
    }
    assert!(
        big.is_empty(),
        "too big to hold in mind:\n{}",
        big.join("\n")
    );
}
