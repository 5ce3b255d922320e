//! What a runtime's CLI says it loaded: the names in the output of an offline listing call
//! (`tested.listings` of its manifest, parsed as the manifest says: a JSON path or a text
//! layout), and their comparison with the names msd wrote. Pure: no process, no disk.

use msd_core::manifest::capability::{Listed, Scope, TextListing};

/// One listed item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Item {
    pub name: String,
    /// Its scope, when the listing says it (a section or a mark).
    pub scope: Option<Scope>,
}

/// The items of `listed`'s kind in `out`, or why `out` cannot be read as the manifest says
/// (a JSON listing that holds no JSON at all: cut short, or the CLI printed an error instead).
pub(super) fn items(listed: &Listed, out: &str) -> Result<Vec<Item>, String> {
    match (&listed.json, &listed.text) {
        (Some(path), _) => Ok(json_names(path, out)?.into_iter().map(|name| Item { name, scope: None }).collect()),
        (None, Some(t)) => Ok(text_items(t, out)),
        (None, None) => Ok(Vec::new()),
    }
}

/// Whether `listed` says which scope each item is of.
pub(super) fn scoped(listed: &Listed) -> bool {
    listed.text.as_ref().is_some_and(|t| t.sections.is_some() || t.marks.is_some())
}

/// The strings at `path` in the output: one JSON document, or one per line.
fn json_names(path: &str, out: &str) -> Result<Vec<String>, String> {
    let segs: Vec<&str> = path.split('.').collect();
    let mut names = Vec::new();
    match serde_json::from_str::<serde_json::Value>(out) {
        Ok(v) => walk(&v, &segs, &mut names),
        Err(whole) => {
            let mut any = false;
            for line in out.lines() {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(line.trim()) {
                    any = true;
                    walk(&v, &segs, &mut names);
                }
            }
            if !any {
                return Err(format!("its output ({} bytes) is not JSON: {whole}", out.len()));
            }
        }
    }
    Ok(names)
}

fn walk(v: &serde_json::Value, segs: &[&str], out: &mut Vec<String>) {
    let Some((first, rest)) = segs.split_first() else {
        if let Some(s) = v.as_str() {
            out.push(s.to_string());
        }
        return;
    };
    match *first {
        "*key" => {
            if let Some(o) = v.as_object() {
                out.extend(o.keys().cloned());
            }
        }
        "*" => match v {
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, rest, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| walk(x, rest, out)),
            _ => {}
        },
        key => {
            if let Some(x) = v.get(key) {
                walk(x, rest, out);
            }
        }
    }
}

/// Items of a text listing: a line `<indent><name>...` under its section's heading, its scope
/// from the heading or from a mark in its lines.
fn text_items(t: &TextListing, out: &str) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    // The scope of the current section (`None`: a section of no scope of ours).
    let mut section: Option<Scope> = None;
    let mut current: Option<usize> = None;
    let scope_of = |line: &str, texts: &msd_core::manifest::capability::PerScope| {
        [Scope::Global, Scope::Local].into_iter().find(|s| line.contains(texts.of(*s)))
    };
    for line in out.lines() {
        if !line.is_empty() && !line.starts_with(char::is_whitespace) {
            current = None;
            if let Some(sections) = &t.sections {
                section = [Scope::Global, Scope::Local].into_iter().find(|s| line.trim_end() == sections.of(*s));
            }
            continue;
        }
        let item = line
            .strip_prefix(t.indent.as_str())
            .filter(|rest| rest.starts_with(|c: char| !c.is_whitespace()))
            .and_then(|rest| {
                let name = rest.split_whitespace().next()?;
                match &t.after {
                    Some(after) if !rest[name.len()..].starts_with(after.as_str()) => None,
                    _ => Some(name.to_string()),
                }
            });
        if let Some(name) = item {
            let scope = if t.sections.is_some() { section } else { None };
            items.push(Item { name, scope });
            current = Some(items.len() - 1);
        }
        if let (Some(i), Some(marks)) = (current, &t.marks)
            && items[i].scope.is_none()
        {
            items[i].scope = scope_of(line, marks);
        }
    }
    items
}

/// What a listing shows against what msd wrote.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Compared {
    /// Names msd wrote that the CLI did not list.
    pub missing: Vec<String>,
    /// Names in msd's namespace the CLI listed (in this scope, when it says scopes) that no msd
    /// install of this runtime here wrote: a leftover, or another tool's copy.
    pub extra: Vec<String>,
}

/// Compares `items` with `written` (this install's names of the kind), `also` (this install's
/// names of its other kinds: Auggie lists each skill among its commands too) and `others` (the
/// names the runtime's other msd installs here wrote: the CLI lists both scopes at once).
pub(super) fn compare(
    items: &[Item],
    scoped: bool,
    scope: Scope,
    written: &[String],
    also: &[String],
    others: &[String],
) -> Compared {
    let mine: Vec<&Item> = items.iter().filter(|i| !scoped || i.scope == Some(scope)).collect();
    // Listed under the other scope, where this runtime's other msd install wrote it too: the
    // CLI shows one of two same-named copies (Auggie lists a name once, the user's first).
    let shown_elsewhere = |w: &String| scoped && others.contains(w) && items.iter().any(|i| &i.name == w);
    let missing =
        written.iter().filter(|w| !mine.iter().any(|i| &i.name == *w) && !shown_elsewhere(w)).cloned().collect();
    let prefix = namespace(written);
    let mut extra: Vec<String> = Vec::new();
    if !prefix.is_empty() {
        for i in &mine {
            let known = written.contains(&i.name) || also.contains(&i.name) || (!scoped && others.contains(&i.name));
            if i.name.starts_with(prefix) && !known && !extra.contains(&i.name) {
                extra.push(i.name.clone());
            }
        }
    }
    Compared { missing, extra }
}

/// The namespace of msd's names (`msd-`, `msd:`): their common prefix up to its last `-` or `:`;
/// empty with fewer than two names.
fn namespace(names: &[String]) -> &str {
    let [first, rest @ ..] = names else { return "" };
    if rest.is_empty() {
        return "";
    }
    let mut len = first.len();
    for n in rest {
        len = first.bytes().zip(n.bytes()).take(len).take_while(|(a, b)| a == b).count();
    }
    let common = &first[..len];
    common.rfind(['-', ':']).map_or("", |i| &first[..=i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use msd_core::manifest::capability::{ArtifactKind, PerScope};

    fn json(path: &str) -> Listed {
        Listed { kind: ArtifactKind::Skills, json: Some(path.into()), text: None }
    }

    fn items_ok(listed: &Listed, out: &str) -> Vec<Item> {
        items(listed, out).expect("readable")
    }

    #[test]
    fn a_json_listing_cut_short_is_one_error_not_every_name_missing() {
        let cut = r#"{"command":{"msd-help":{"template":"#;
        let e = items(&json("command.*key"), cut).expect_err("an error");
        assert!(e.contains("not JSON"), "{e}");
        assert!(items(&json("command.*key"), "").is_err());
    }

    fn names(items: &[Item]) -> Vec<&str> {
        items.iter().map(|i| i.name.as_str()).collect()
    }

    #[test]
    fn json_paths_read_keys_elements_and_json_lines() {
        let out = r#"{"command":{"msd-help":{},"msd-plan":{}},"agent":{"build":{}}}"#;
        assert_eq!(names(&items_ok(&json("command.*key"), out)), ["msd-help", "msd-plan"]);
        let lines = "not json\n{\"id\":1,\"result\":{}}\n{\"id\":2,\"result\":{\"data\":[{\"skills\":[{\"name\":\"a\"},{\"name\":\"b\"}]}]}}\n";
        assert_eq!(names(&items_ok(&json("result.data.*.skills.*.name"), lines)), ["a", "b"]);
        assert_eq!(names(&items_ok(&json("*.name"), r#"[{"name":"x"},{"other":1}]"#)), ["x"]);
    }

    #[test]
    fn text_listings_take_scopes_from_sections_or_marks() {
        let sections = Listed {
            kind: ArtifactKind::Skills,
            json: None,
            text: Some(TextListing {
                indent: "  ".into(),
                after: None,
                sections: Some(PerScope { global: "Personal skills:".into(), local: "Project skills:".into() }),
                marks: None,
            }),
        };
        let out = "Builtin skills:\n  msd-x  builtin\nPersonal skills:\n  msd-help  Help\n    wrapped\nProject skills:\n  msd-plan  Plan\n";
        let got = items_ok(&sections, out);
        assert_eq!(names(&got), ["msd-x", "msd-help", "msd-plan"]);
        assert_eq!(got.iter().map(|i| i.scope).collect::<Vec<_>>(), [None, Some(Scope::Global), Some(Scope::Local)]);
        let marks = Listed {
            kind: ArtifactKind::Commands,
            json: None,
            text: Some(TextListing {
                indent: "  ".into(),
                after: Some(" [args...]".into()),
                sections: None,
                marks: Some(PerScope { global: "(user)".into(), local: "(workspace)".into() }),
            }),
        };
        let out = "Custom commands:\n  msd-help [args...]   Shows help\n      over two lines (user)\n  msd-plan [args...]   Plans (workspace)\n  note: not an item\n";
        let got = items_ok(&marks, out);
        assert_eq!(names(&got), ["msd-help", "msd-plan"]);
        assert_eq!(got.iter().map(|i| i.scope).collect::<Vec<_>>(), [Some(Scope::Global), Some(Scope::Local)]);
    }

    #[test]
    fn compare_finds_missing_and_extra_names_in_msds_namespace() {
        let item = |n: &str, s| Item { name: n.into(), scope: s };
        let written = vec!["msd-help".to_string(), "msd-plan".to_string()];
        let listed = [item("msd-help", None), item("msd-old", None), item("msd-local", None), item("build", None)];
        let c = compare(&listed, false, Scope::Global, &written, &[], &["msd-local".to_string()]);
        assert_eq!(c, Compared { missing: vec!["msd-plan".into()], extra: vec!["msd-old".into()] });
        // A name this install wrote as another kind (Auggie lists each skill among its commands,
        // seen from auggie 0.36.0: the 9 group skills beside the 60 commands) is not a stray.
        let listed = [item("msd-help", None), item("msd-plan", None), item("msd-project", None)];
        let c = compare(&listed, false, Scope::Global, &written, &["msd-project".to_string()], &[]);
        assert_eq!(c, Compared { missing: vec![], extra: vec![] });
        // Scoped: only this scope's items count, the other install's names are not excused.
        let listed = [item("msd-help", Some(Scope::Global)), item("msd-plan", Some(Scope::Local))];
        let c = compare(&listed, true, Scope::Global, &written, &[], &[]);
        assert_eq!(c, Compared { missing: vec!["msd-plan".into()], extra: vec![] });
        // ...unless the other install wrote it too: the CLI lists one of the two copies, under
        // the other scope (auggie 0.36.0 with a global and a local install).
        let c = compare(&listed, true, Scope::Global, &written, &[], &["msd-plan".to_string()]);
        assert_eq!(c, Compared { missing: vec![], extra: vec![] });
        assert_eq!(namespace(&["msd:help".into(), "msd:plan".into()]), "msd:");
        assert_eq!(namespace(&["msd-help".into()]), "");
    }
}
