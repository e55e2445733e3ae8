//! The crate's plan, checked from its source: which file uses which (every
//! `crate::`, `super::` and `self::` path, in `use` lines and in code,
//! through the modules' re-exports to the file that holds the item), no
//! circle of files, and no folder that uses one above it in the layers of
//! ARCHITECTURE.md. `cargo test layers -- --nocapture` prints the listing.
//!
//! Test code is left out: a `tests.rs` module, and a file's inline
//! `#[cfg(test)] mod` (which comes last in every file).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first: a folder (or a file at the top of `src/`)
/// uses only its own and lower layers, and not another folder of its own
/// layer (but for the core's files, which use each other). `lib.rs` is
/// the root: it declares and re-exports everything and is no layer.
const LAYERS: &[(&str, u8)] = &[
    // The core: the traits, the error, the float bound, the NaN policy,
    // what every whole-series method shares, and the checkpoint helpers.
    ("accumulator.rs", 0),
    ("error.rs", 0),
    ("float.rs", 0),
    ("nan_policy.rs", 0),
    ("series.rs", 0),
    ("checkpoint", 0),
    // The raw moments the kernels return and the families build on.
    ("moments", 1),
    ("kernels", 2),
    // The families of accumulators: cumulative and exponential beside each
    // other; the exact sums above the cumulative family (they convert to
    // its `Variance` and `Covariance`); the windows above the exact sums
    // (`MovingStats` keeps a window in them).
    ("cumulative", 3),
    ("exponential", 3),
    ("exact", 4),
    ("windows", 5),
    // Across threads and processes, for any mergeable type.
    ("parallel", 6),
    // The normalization layers, on the cumulative and exponential
    // statistics and the kernels.
    ("norm", 7),
];

/// The core's layer.
const CORE: u8 = 0;

/// A module path (`["windows", "series", "sorted"]`) and its file.
type Modules = BTreeMap<Vec<String>, PathBuf>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// `src/windows/series/mod.rs` → `["windows", "series"]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("under src/");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// The source without its inline test module and without comment lines.
fn code(file: &Path) -> String {
    let text = fs::read_to_string(file).expect("a source file");
    let mut end = text.len();
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]") {
        let at = from + at;
        let rest = text[at + "#[cfg(test)]".len()..].trim_start();
        if rest.starts_with("mod ") && rest.split('\n').next().is_some_and(|l| l.contains('{')) {
            end = at;
            break;
        }
        from = at + 1;
    }
    text[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every path tree in `text` that starts at `crate`, `$crate`, `super` or
/// `self` followed by `::`, expanded into its paths (`a::{b, c::d}` gives
/// `a::b` and `a::c::d`; `{self}` the path it is in). Aliases are dropped.
fn paths(text: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = ["$crate", "crate", "super", "self"].iter().find(|w| {
            let w: Vec<char> = w.chars().collect();
            chars[i..].starts_with(&w)
                && chars[i + w.len()..].starts_with(&[':', ':'])
                && (i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == '$'))
        });
        if starts.is_some() {
            let (trees, next) = tree(&chars, i);
            out.extend(trees);
            i = next.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The paths of the tree at `chars[i..]` and where it ends.
fn tree(chars: &[char], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let skip = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_whitespace() {
            *i += 1;
        }
    };
    let mut prefix = Vec::new();
    loop {
        skip(&mut i);
        if chars.get(i) == Some(&'{') {
            i += 1;
            let mut all = Vec::new();
            loop {
                skip(&mut i);
                match chars.get(i) {
                    Some('}') => return (all, i + 1),
                    Some(',') => i += 1,
                    None => return (all, i),
                    _ => {
                        let (subs, next) = tree(chars, i);
                        for sub in subs {
                            let mut p = prefix.clone();
                            if sub != ["self"] {
                                p.extend(sub);
                            }
                            all.push(p);
                        }
                        if next == i {
                            return (all, i + 1);
                        }
                        i = next;
                    }
                }
            }
        }
        let start = i;
        if chars.get(i) == Some(&'$') {
            i += 1;
        }
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        let segment: String = chars[start..i].iter().collect();
        if segment.is_empty() && chars.get(i) == Some(&'*') {
            return (vec![prefix], i + 1);
        }
        if segment.is_empty() {
            return (vec![prefix], i);
        }
        prefix.push(segment);
        if chars[i..].starts_with(&[':', ':']) {
            i += 2;
        } else {
            return (vec![prefix], i);
        }
    }
}

/// The names a module re-exports (`pub use`, `pub(crate) use`, …) and
/// the absolute paths they stand for.
fn re_exports(module: &[String], text: &str) -> BTreeMap<String, Vec<String>> {
    let mut names = BTreeMap::new();
    for statement in text.split(';') {
        let s = statement.trim_start();
        let Some(at) = s
            .match_indices("use ")
            .map(|(at, _)| at)
            .find(|&at| at == 0 || s[..at].ends_with(char::is_whitespace))
        else {
            continue;
        };
        let head = s[..at].split_whitespace().last().unwrap_or("");
        if !(head == "pub" || head.starts_with("pub(")) {
            continue;
        }
        let body = &s[at + 4..];
        let rooted = ["crate::", "super::", "self::", "$crate::"]
            .iter()
            .any(|r| body.trim_start().starts_with(r));
        let body = if rooted {
            body.to_string()
        } else {
            format!("self::{}", body.trim_start())
        };
        let alias = body.split(" as ").nth(1).map(|a| a.trim().to_string());
        for path in paths(&body) {
            if let Some(absolute) = absolute(module, &path) {
                let name = alias
                    .clone()
                    .or_else(|| absolute.last().cloned())
                    .unwrap_or_default();
                names.insert(name, absolute);
            }
        }
    }
    names
}

/// `path` (starting at `crate`, `super` or `self`) from within `module`,
/// as a path from the crate's root.
fn absolute(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut base = match first.as_str() {
        "crate" | "$crate" => Vec::new(),
        "self" => module.to_vec(),
        "super" => module[..module.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The file that holds what `path` names: its longest module prefix,
/// followed through that module's re-exports.
fn resolve(
    path: &[String],
    modules: &Modules,
    exports: &BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    depth: usize,
) -> Option<PathBuf> {
    let cut = (0..=path.len())
        .rev()
        .find(|&k| modules.contains_key(&path[..k]))?;
    let module = &path[..cut];
    if let Some(name) = path.get(cut)
        && depth < 8
        && let Some(target) = exports.get(module).and_then(|e| e.get(name))
        && target != path
    {
        let mut target = target.clone();
        target.extend(path[cut + 1..].iter().cloned());
        return resolve(&target, modules, exports, depth + 1);
    }
    modules.get(module).cloned()
}

/// The layer of a file, by its top folder (or its own name at the top).
fn layer(file: &Path) -> Option<(String, u8)> {
    let rel = file.strip_prefix(src()).ok()?;
    let top = rel.iter().next()?.to_string_lossy().to_string();
    LAYERS
        .iter()
        .find(|(name, _)| *name == top)
        .map(|&(name, rank)| (name.to_string(), rank))
}

fn short(file: &Path) -> String {
    file.strip_prefix(src())
        .unwrap_or(file)
        .display()
        .to_string()
}

/// Every file's files, by what it names.
fn graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let modules: Modules = files.iter().map(|f| (module_of(f), f.clone())).collect();
    let texts: BTreeMap<PathBuf, String> = files.iter().map(|f| (f.clone(), code(f))).collect();
    let exports = files
        .iter()
        .map(|f| (module_of(f), re_exports(&module_of(f), &texts[f])))
        .collect();
    let root = src().join("lib.rs");
    let mut edges = BTreeMap::new();
    for file in files.iter().filter(|f| **f != root) {
        let module = module_of(file);
        let used: BTreeSet<PathBuf> = paths(&texts[file])
            .iter()
            .filter_map(|p| absolute(&module, p))
            .filter_map(|p| resolve(&p, &modules, &exports, 0))
            .filter(|t| t != file && *t != root)
            .collect();
        edges.insert(file.clone(), used);
    }
    edges
}

/// The strongly connected components of more than one file (Tarjan).
fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a PathBuf) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.stack.contains(&w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found
}

#[test]
fn the_parser_reads_use_trees_and_paths_in_code() {
    let got = paths(
        "use super::{a::{self, B}, c};\nlet x = crate::d::e(1); $crate::f!(); myself::g; \
         use self::h::*;",
    );
    let want: Vec<Vec<&str>> = vec![
        vec!["super", "a"],
        vec!["super", "a", "B"],
        vec!["super", "c"],
        vec!["crate", "d", "e"],
        vec!["$crate", "f"],
        vec!["self", "h"],
    ];
    assert_eq!(got, want);
    let module = ["windows".to_string(), "series".to_string()];
    let p = ["super", "super", "kernels", "key"].map(String::from);
    assert_eq!(absolute(&module, &p).unwrap(), ["kernels", "key"]);
}

#[test]
fn the_checker_finds_a_circle_and_a_layer_broken() {
    // A circle of three files, and a kernel that uses a window.
    let (a, b, c) = (
        src().join("kernels/a.rs"),
        src().join("kernels/b.rs"),
        src().join("windows/c.rs"),
    );
    let mut edges = BTreeMap::new();
    edges.insert(a.clone(), BTreeSet::from([b.clone()]));
    edges.insert(b.clone(), BTreeSet::from([c.clone()]));
    edges.insert(c.clone(), BTreeSet::from([a.clone()]));
    let found = circles(&edges);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].len(), 3);
    assert_eq!(
        broken_layers(&edges),
        [("kernels/b.rs".into(), "windows/c.rs".into())]
    );
    // Sideways between two families is broken; within the core it is not.
    let mut edges = BTreeMap::new();
    let (d, e) = (
        src().join("cumulative/d.rs"),
        src().join("exponential/e.rs"),
    );
    edges.insert(d, BTreeSet::from([e]));
    edges.insert(
        src().join("series.rs"),
        BTreeSet::from([src().join("float.rs")]),
    );
    assert_eq!(
        broken_layers(&edges),
        [("cumulative/d.rs".into(), "exponential/e.rs".into())]
    );
}

/// The uses that go up a layer or sideways to another folder of the same
/// layer, as `(user, used)`.
fn broken_layers(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<(String, String)> {
    let mut broken = Vec::new();
    for (file, used) in edges {
        let (top, rank) = layer(file)
            .unwrap_or_else(|| panic!("{} is in no layer: add its folder to LAYERS", short(file)));
        for target in used {
            let (other, other_rank) =
                layer(target).unwrap_or_else(|| panic!("{} is in no layer", short(target)));
            // The core's files (layer 0) are one group: they use each
            // other, without a circle.
            let sideways = other_rank == rank && other != top && rank != CORE;
            if other_rank > rank || sideways {
                broken.push((short(file), short(target)));
            }
        }
    }
    broken
}

#[test]
fn no_file_circles_and_every_layer_uses_only_those_below() {
    let edges = graph();
    assert!(edges.len() > 100, "{} files read", edges.len());
    // The listing: folder by folder, what each uses.
    let mut by_folder: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, used) in &edges {
        let (top, _) = layer(file).unwrap_or_default();
        for target in used {
            let (other, _) = layer(target).unwrap_or_default();
            if other != top {
                by_folder.entry(top.clone()).or_default().insert(other);
            }
        }
    }
    for (folder, used) in &by_folder {
        eprintln!(
            "{folder} uses {}",
            used.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let found = circles(&edges);
    let report: Vec<String> = found
        .iter()
        .map(|c| {
            c.iter()
                .map(|f| {
                    let inside: Vec<String> = edges[f]
                        .iter()
                        .filter(|t| c.contains(t))
                        .map(|t| short(t))
                        .collect();
                    format!("{} uses {}", short(f), inside.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .collect();
    assert!(found.is_empty(), "import circles: {report:#?}");
    let broken = broken_layers(&edges);
    assert!(broken.is_empty(), "uses against the layers: {broken:#?}");
}
