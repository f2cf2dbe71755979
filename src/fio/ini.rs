//! fio's job-file syntax: sections, `key=value` lines, options with no value, comments, and
//! `${ENV}` substitution. Every option keeps the file and line it came from, so a refusal later
//! points at the line to change. What the values mean is `job.rs`'s business.

use std::fmt;

/// Where an option or a section was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: usize,
}

/// The `file` of options typed on the command line; their `line` is the argument's position.
pub const COMMAND_LINE: &str = "";

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.file.as_str() {
            COMMAND_LINE => write!(f, "fio option {}", self.line),
            file => write!(f, "{file}:{}", self.line),
        }
    }
}

/// One `key[=value]` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Opt {
    pub key: String,
    /// `None` for an option written with no value (`time_based`, `group_reporting`).
    pub value: Option<String>,
    pub at: Loc,
}

/// One `[name]` section with its options in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub name: String,
    pub at: Loc,
    pub opts: Vec<Opt>,
}

impl Section {
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// The sections of a job file. `env` looks variables up (the process environment in use,
/// a map in tests).
pub fn parse(
    text: &str,
    file: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, String> {
    let mut sections: Vec<Section> = Vec::new();
    let mut read = text.len() as u64;
    read_into(&mut sections, text, file, env, 0, &mut read)?;
    Ok(sections)
}

/// How deep `include`s may nest: deeper is a loop.
const MAX_INCLUDE_DEPTH: usize = 8;

/// Adds `text`'s sections and options to `sections`; an `include` reads its file (relative to
/// the including file, as fio resolves it) in its place. `read` counts the bytes of every file
/// read so far: the job file and all its includes together stay within the gate's bound, so
/// many includes of one large file cannot exhaust memory either.
fn read_into(
    sections: &mut Vec<Section>,
    text: &str,
    file: &str,
    env: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    read: &mut u64,
) -> Result<(), String> {
    for (i, raw) in text.lines().enumerate() {
        let at = Loc {
            file: file.to_string(),
            line: i + 1,
        };
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(format!(
                    "{at}: '{line}' opens a section without closing it; write [name]"
                ));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(format!("{at}: a section needs a name, e.g. [randread-4k]"));
            }
            sections.push(Section {
                name: name.to_string(),
                at,
                opts: Vec::new(),
            });
            continue;
        }
        let (key, value) = match line.split_once('=') {
            // filename_format's $jobnum, $filenum, $jobname and $clientuid are its own
            // keywords, filled in per file by fio: never environment variables.
            Some((k, v)) if k.trim().eq_ignore_ascii_case("filename_format") => {
                (k.trim(), Some(v.trim().to_string()))
            }
            Some((k, v)) => (k.trim(), Some(substitute(v.trim(), &at, env)?)),
            None => (line, None),
        };
        let key = key.to_ascii_lowercase();
        if key.starts_with("include ") && value.is_none() {
            // The name as written, not lower-cased with the key.
            let name = line["include ".len()..].trim();
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(format!(
                    "{at}: include {name}: includes nest more than {MAX_INCLUDE_DEPTH} deep; is one file including itself?"
                ));
            }
            let path = match std::path::Path::new(file).parent() {
                Some(dir) if !std::path::Path::new(name).is_absolute() => dir.join(name),
                _ => std::path::PathBuf::from(name),
            };
            let limit = crate::target::gate::TEXT_LIMIT;
            let inner = crate::target::gate::read_input("include", &path, limit)
                .map_err(|e| format!("{at}: {e}"))?;
            *read += inner.len() as u64;
            if *read > limit {
                return Err(format!(
                    "{at}: include {name}: the job file and its includes hold more than {}, more than any job file iogauge reads; include fewer or smaller files",
                    crate::units::iec(limit)
                ));
            }
            read_into(
                sections,
                &inner,
                &path.display().to_string(),
                env,
                depth + 1,
                read,
            )?;
            continue;
        }
        let Some(section) = sections.last_mut() else {
            return Err(format!(
                "{at}: option '{key}' comes before any section; put it under [global] or a [job]"
            ));
        };
        section.opts.push(Opt { key, value, at });
    }
    Ok(())
}

/// fio's command-line form: `--key=value` or `--key`; options before the first `--name` are
/// `[global]`, each `--name` starts a job (as `fio --name=a --rw=read --name=b …` reads).
/// Job files are not mixed in: either files or options.
pub fn parse_args(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, String> {
    let mut sections = vec![Section {
        name: "global".into(),
        at: Loc {
            file: COMMAND_LINE.into(),
            line: 1,
        },
        opts: Vec::new(),
    }];
    for (i, a) in args.iter().enumerate() {
        let at = Loc {
            file: COMMAND_LINE.into(),
            line: i + 1,
        };
        let Some(opt) = a.strip_prefix("--") else {
            return Err(format!(
                "{at} ('{a}'): after -- come fio's --option=value options only; give job files before --, or no --"
            ));
        };
        let (key, value) = match opt.split_once('=') {
            Some((k, v)) if k.eq_ignore_ascii_case("filename_format") => {
                (k.to_ascii_lowercase(), Some(v.to_string()))
            }
            Some((k, v)) => (k.to_ascii_lowercase(), Some(substitute(v, &at, env)?)),
            None => (opt.to_ascii_lowercase(), None),
        };
        if OWN_FLAGS.contains(&key.as_str()) {
            return Err(format!(
                "{at}: --{key} is iogauge's flag, and after -- come fio's options; put it before: iogauge fio --{key} -- --name=…"
            ));
        }
        // fio's own --output-format and --output are taken by the plan before this.
        if key == "name" {
            sections.push(Section {
                name: value.clone().unwrap_or_default(),
                at: at.clone(),
                opts: Vec::new(),
            });
        }
        if let Some(s) = sections.last_mut() {
            s.opts.push(Opt { key, value, at });
        }
    }
    Ok(sections)
}

/// iogauge's own flags of `iogauge fio`, which are told apart from fio options that follow.
const OWN_FLAGS: [&str; 13] = [
    "allow-overwrite",
    "keep",
    "repeat",
    "precondition",
    "drop-caches",
    "param",
    "json",
    "label",
    "no-store",
    "format",
    "dry-run",
    "db",
    "help",
];

/// fio's comments start a line with `;` or `#`; one after whitespace ends a line too.
fn strip_comment(line: &str) -> &str {
    let t = line.trim_start();
    if t.starts_with(';') || t.starts_with('#') {
        return "";
    }
    let b = line.as_bytes();
    for i in 1..b.len() {
        if (b[i] == b';' || b[i] == b'#') && b[i - 1].is_ascii_whitespace() {
            return &line[..i];
        }
    }
    line
}

/// fio's reserved keywords, replaced by this machine's values (`env` answers them by their
/// name with the `$`, so tests can give their own).
pub const KEYWORDS: [&str; 3] = ["$ncpus", "$mb_memory", "$pagesize"];

/// `${NAME}` replaced by the environment's value, fio's keywords (`$ncpus`, `$mb_memory`,
/// `$pagesize`) by this machine's, and then, as fio does, arithmetic evaluated: a value that
/// used a keyword is computed whole (`size=8*$mb_memory` is 8 times the megabytes, a number of
/// bytes as fio reads it), and `(…)` anywhere is computed (`bs=(2*2048)`, `size=(1+1)g`).
fn substitute(v: &str, at: &Loc, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = v;
    let mut keyword = false;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let Some(inner) = after.strip_prefix('{') else {
            let word: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let name = format!("${word}");
            match (KEYWORDS.contains(&name.as_str()), env(&name)) {
                (true, Some(val)) => out.push_str(&val),
                _ => {
                    return Err(format!(
                        "{at}: {name} is not one of fio's keywords ($ncpus, $mb_memory, $pagesize); write ${{{word}}} for an environment variable, or the number itself"
                    ))
                }
            }
            keyword = true;
            rest = &after[word.len()..];
            continue;
        };
        let Some(end) = inner.find('}') else {
            return Err(format!("{at}: '${{' is not closed; write ${{NAME}}"));
        };
        let name = &inner[..end];
        match env(name) {
            Some(val) => out.push_str(&val),
            None => {
                return Err(format!(
                    "{at}: environment variable {name} is not set; set it or write the value"
                ))
            }
        }
        rest = &inner[end + 1..];
    }
    out.push_str(rest);
    let bad = |e: String| format!("{at}: {}: {e}", crate::units::quoted(&out, 80));
    if keyword && out.contains(['+', '-', '*', '/', '%', '^']) && !out.contains('(') {
        return arith::eval(&out).map(|n| n.to_string()).map_err(bad);
    }
    // Only a parenthesised run of digits and operators is arithmetic: `name=db (ssd)` is not.
    let arithmetic = |e: &str| {
        e.chars()
            .all(|c| c.is_ascii_digit() || "+-*/%^() ".contains(c))
    };
    match (out.find('('), out.rfind(')')) {
        (Some(open), Some(close)) if open < close && arithmetic(&out[open..=close]) => {
            let n = arith::eval(&out[open..=close]).map_err(bad)?;
            Ok(format!("{}{n}{}", &out[..open], &out[close + 1..]))
        }
        _ => Ok(out),
    }
}

/// fio's arithmetic on whole numbers: + - * / % ^ and parentheses, `/` truncating as bc does.
mod arith {
    pub fn eval(s: &str) -> Result<i128, String> {
        let t: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
        let mut p = P {
            t: &t,
            i: 0,
            depth: 0,
        };
        let v = p.sum()?;
        match p.i == t.len() {
            true => Ok(v),
            false => Err(format!(
                "cannot compute it (at '{}')",
                t[p.i..].iter().collect::<String>()
            )),
        }
    }

    /// How deep parentheses, signs and powers may nest: the parser recurses, and no value a
    /// person writes nests past a few levels (30,000 parentheses overflowed the stack).
    const MAX_DEPTH: usize = 64;

    struct P<'a> {
        t: &'a [char],
        i: usize,
        depth: usize,
    }

    impl P<'_> {
        /// One level deeper, refused past [`MAX_DEPTH`].
        fn deeper(&mut self) -> Result<(), String> {
            self.depth += 1;
            match self.depth > MAX_DEPTH {
                true => Err(format!(
                    "parentheses, signs or powers nest more than {MAX_DEPTH} deep"
                )),
                false => Ok(()),
            }
        }
        fn peek(&self) -> Option<char> {
            self.t.get(self.i).copied()
        }
        fn sum(&mut self) -> Result<i128, String> {
            let mut v = self.product()?;
            while let Some(op @ ('+' | '-')) = self.peek() {
                self.i += 1;
                let r = self.product()?;
                v = if op == '+' {
                    v.checked_add(r)
                } else {
                    v.checked_sub(r)
                }
                .ok_or("the value is too large")?;
            }
            Ok(v)
        }
        fn product(&mut self) -> Result<i128, String> {
            let mut v = self.power()?;
            while let Some(op @ ('*' | '/' | '%')) = self.peek() {
                self.i += 1;
                let r = self.power()?;
                v = match op {
                    '*' => v.checked_mul(r),
                    _ if r == 0 => return Err("division by zero".into()),
                    '/' => v.checked_div(r),
                    _ => v.checked_rem(r),
                }
                .ok_or("the value is too large")?;
            }
            Ok(v)
        }
        fn power(&mut self) -> Result<i128, String> {
            let base = self.atom()?;
            if self.peek() == Some('^') {
                self.i += 1;
                self.deeper()?;
                let e = self.power()?;
                self.depth -= 1;
                let e = u32::try_from(e).map_err(|_| "a negative or huge exponent")?;
                return base
                    .checked_pow(e)
                    .ok_or_else(|| "the value is too large".into());
            }
            Ok(base)
        }
        fn atom(&mut self) -> Result<i128, String> {
            match self.peek() {
                Some('(') => {
                    self.i += 1;
                    self.deeper()?;
                    let v = self.sum()?;
                    self.depth -= 1;
                    if self.peek() != Some(')') {
                        return Err("'(' is not closed".into());
                    }
                    self.i += 1;
                    Ok(v)
                }
                Some('-') => {
                    self.i += 1;
                    self.deeper()?;
                    let v = self.atom()?.checked_neg().ok_or("the value is too large")?;
                    self.depth -= 1;
                    Ok(v)
                }
                _ => {
                    let start = self.i;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.i += 1;
                    }
                    let digits: String = self.t[start..self.i].iter().collect();
                    digits
                        .parse()
                        .map_err(|_| "a number was expected".to_string())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn sections_options_comments_and_bare_options() {
        let text = "; a comment\n# another\n[global]\nbs=4k ; trailing\ntime_based\n\n[a]\nrw = randread\n[b]\nrw=write#not a comment\n";
        let s = parse(text, "j.fio", &no_env).unwrap();
        assert_eq!(s.len(), 3);
        assert!(s[0].is_global());
        assert_eq!(s[0].opts[0].value.as_deref(), Some("4k"));
        assert_eq!(s[0].opts[0].at.line, 4);
        assert_eq!(s[0].opts[1].key, "time_based");
        assert_eq!(s[0].opts[1].value, None);
        assert_eq!(s[1].name, "a");
        assert_eq!(s[1].opts[0].value.as_deref(), Some("randread"));
        assert_eq!(s[2].at.line, 9);
        // A '#' with no blank before it is part of the value (fio reads it so).
        assert_eq!(s[2].opts[0].value.as_deref(), Some("write#not a comment"));
    }

    #[test]
    fn environment_variables_are_substituted() {
        let env = |k: &str| (k == "BS").then(|| "64k".to_string());
        let s = parse("[a]\nbs=${BS}\nfilename=/d/${BS}.x\n", "j", &env).unwrap();
        assert_eq!(s[0].opts[0].value.as_deref(), Some("64k"));
        assert_eq!(s[0].opts[1].value.as_deref(), Some("/d/64k.x"));
        let e = parse("[a]\n\nbs=${NOPE}\n", "j.fio", &env).unwrap_err();
        assert!(e.starts_with("j.fio:3: ") && e.contains("NOPE"), "{e}");
    }

    #[test]
    fn include_reads_its_file_in_place() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("common.inc"), "direct=1\nbs=64k\n").unwrap();
        std::fs::write(dir.path().join("loop.inc"), "include loop.inc\n").unwrap();
        let main = dir.path().join("main.fio");
        let s = parse(
            "[global]\ninclude common.inc\nbs=4k\n[a]\n",
            main.to_str().unwrap(),
            &no_env,
        )
        .unwrap();
        let opts: Vec<(&str, Option<&str>)> = s[0]
            .opts
            .iter()
            .map(|o| (o.key.as_str(), o.value.as_deref()))
            .collect();
        assert_eq!(
            opts,
            [
                ("direct", Some("1")),
                ("bs", Some("64k")),
                ("bs", Some("4k"))
            ]
        );
        assert!(
            s[0].opts[0].at.file.ends_with("common.inc"),
            "lines of the included file"
        );
        let e = parse("[a]\ninclude loop.inc\n", main.to_str().unwrap(), &no_env).unwrap_err();
        assert!(e.contains("nest more than"), "{e}");
    }

    #[test]
    fn what_cannot_be_read_names_its_line() {
        for (text, line, what) in [
            ("bs=4k\n", 1, "before any section"),
            ("[a\n", 1, "without closing"),
            ("[a]\nsize=$nope\n", 2, "$nope"),
            ("[a]\n\ninclude /nonexistent/other.fio\n", 3, "cannot read"),
            ("[]\n", 1, "needs a name"),
        ] {
            let e = parse(text, "x.fio", &no_env).unwrap_err();
            assert!(e.starts_with(&format!("x.fio:{line}: ")), "{e}");
            assert!(e.contains(what), "{e}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let deep = format!(
            "[a]\nsize=({}1{})\n",
            "(".repeat(30_000),
            ")".repeat(30_000)
        );
        let e = parse(&deep, "x.fio", &no_env).unwrap_err();
        assert!(
            e.starts_with("x.fio:2: ") && e.contains("nest more than 64"),
            "{e}"
        );
        let signs = format!("[a]\nsize=({}1)\n", "-".repeat(30_000));
        assert!(parse(&signs, "x.fio", &no_env)
            .unwrap_err()
            .contains("nest more than"));
        // A value a person writes still computes.
        let ok = parse("[a]\nsize=((((2))))*-(-3)\n", "x.fio", &no_env).unwrap();
        assert_eq!(ok[0].opts[0].value.as_deref(), Some("6"));
    }

    #[test]
    fn includes_are_files_and_bounded_together() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main.fio");
        let e = parse("[a]\ninclude /dev/zero\n", main.to_str().unwrap(), &no_env).unwrap_err();
        assert!(e.contains("is a character device, not a file"), "{e}");
        // Each include alone is within the bound; together they are not.
        let third = crate::target::gate::TEXT_LIMIT as usize / 3 + 1;
        std::fs::write(dir.path().join("big.inc"), "#".repeat(third)).unwrap();
        let text = "[a]\ninclude big.inc\ninclude big.inc\ninclude big.inc\n";
        let e = parse(text, main.to_str().unwrap(), &no_env).unwrap_err();
        assert!(
            e.contains(":4: include big.inc: the job file and its includes hold more than 4 MiB"),
            "{e}"
        );
        let two = "[a]\ninclude big.inc\ninclude big.inc\n";
        assert!(parse(two, main.to_str().unwrap(), &no_env).is_ok());
    }

    #[test]
    fn keywords_and_arithmetic_are_computed_as_fio_does() {
        let env = |k: &str| match k {
            "$ncpus" => Some("4".to_string()),
            "$mb_memory" => Some("1024".to_string()),
            "$pagesize" => Some("4096".to_string()),
            "N" => Some("3".to_string()),
            _ => None,
        };
        let s = parse(
            "[a]\nnumjobs=$ncpus\nsize=8*$mb_memory\nbs=$pagesize\niodepth=(${N}*2^3)\nramp_time=(1+1)s\n",
            "j",
            &env,
        )
        .unwrap();
        let get = |k: &str| {
            s[0].opts
                .iter()
                .find(|o| o.key == k)
                .unwrap()
                .value
                .clone()
                .unwrap()
        };
        assert_eq!(get("numjobs"), "4");
        assert_eq!(get("size"), "8192");
        assert_eq!(get("bs"), "4096");
        assert_eq!(get("iodepth"), "24");
        assert_eq!(get("ramp_time"), "2s");
        let e = parse("[a]\nbs=(4*)\n", "j", &env).unwrap_err();
        assert!(e.starts_with("j:2: ") && e.contains("(4*)"), "{e}");
        let e = parse("[a]\nbs=(4/0)\n", "j", &env).unwrap_err();
        assert!(e.contains("division by zero"), "{e}");
        // Words in parentheses are not arithmetic.
        let s = parse("[a]\ndescription=db (ssd)\n", "j", &env).unwrap();
        assert_eq!(s[0].opts[0].value.as_deref(), Some("db (ssd)"));
    }
}
