//! The crate's modules read in one direction: `cuabi_sys`, then the layer
//! generated from the header with the types it extends (`handle`,
//! `generated`, `values`, `error`, `types`, `objects`), then the hand-written idioms,
//! which may use each other but never in a circle. A module's dependencies
//! are the `crate::<module>` paths in its code (comments left out).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The generated layer and what it stands on, lowest first: each may use
/// only those before it.
const BASE: [&str; 6] = ["handle", "generated", "values", "error", "types", "objects"];

/// Every module of `src/` (but the crate root) and the modules it uses;
/// `None` where the sources are not on this machine (a test binary bundled
/// for a GPU machine by `bundle-gpu.sh`).
fn dependencies() -> Option<BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    if !src.is_dir() {
        println!("SKIPPED: no sources at {}", src.display());
        return None;
    }
    let mut sources = BTreeMap::new();
    for entry in std::fs::read_dir(&src).expect("src/") {
        let path = entry.expect("src/ entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
            sources.insert(name, std::fs::read_to_string(&path).expect("a source file"));
        }
    }
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    let mut deps = BTreeMap::new();
    for (name, text) in &sources {
        let mut uses = BTreeSet::new();
        for line in text.lines().map(|l| l.split("//").next().unwrap_or("")) {
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                if rest.starts_with('{') || rest.starts_with(|c: char| c.is_ascii_uppercase()) {
                    panic!(
                        "{name}.rs reaches the crate root (`{}`): name the module",
                        line.trim()
                    );
                }
                let used: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if modules.contains(&used) && &used != name {
                    uses.insert(used);
                }
            }
        }
        deps.insert(name.clone(), uses);
    }
    Some(deps)
}

#[test]
fn the_generated_layer_uses_only_what_lies_below_it() {
    let Some(deps) = dependencies() else { return };
    for (i, module) in BASE.iter().enumerate() {
        let uses = deps
            .get(*module)
            .unwrap_or_else(|| panic!("no src/{module}.rs"));
        for used in uses {
            assert!(
                BASE[..i].contains(&used.as_str()),
                "{module}.rs uses {used}, which does not lie below it"
            );
        }
    }
}

#[test]
fn no_modules_use_each_other_in_a_circle() {
    let Some(deps) = dependencies() else { return };
    // Depth-first, with the path walked so far: a module met again on it
    // closes a circle.
    fn visit<'a>(
        module: &'a str,
        deps: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(at) = path.iter().position(|m| *m == module) {
            panic!(
                "modules in a circle: {} -> {module}",
                path[at..].join(" -> ")
            );
        }
        if !done.insert(module) {
            return;
        }
        path.push(module);
        for used in &deps[module] {
            visit(used, deps, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for module in deps.keys() {
        visit(module, &deps, &mut Vec::new(), &mut done);
    }
}
