//! Synthetic content for the whole-install benchmark: a tree `N` times the shipped one, with
//! distinct files of the same shape, so `bench/install.sh --scale` can show that install cost
//! grows linearly with content.
//!
//! Input: a content [`Tree`] and the factor. Output: a new tree where copy `k` (2..=N) of every
//! command, workflow (with its steps and detail parts), agent, compact variant, reference and
//! template is renamed with the suffix `-s<k>`, and every mention of those names inside the
//! copies is renamed with it, so the copy is as coherent as the original. The content-root
//! indexes (`tiers.json`, `namespaces.json`, `profiles.json`, `section-manifest.json`) are
//! rebuilt to list every copy (copy `k` of a command is in the profile of its original and
//! requires the copies `k` of what the original requires); `CONTEXT.md` and its index stay single. The result passes the same validation as the
//! shipped tree (the caller loads it to prove it).

use msd_core::fs::bytes::Bytes;
use std::collections::BTreeMap;

use aho_corasick::{AhoCorasick, MatchKind};

use crate::pipeline::load::Tree;
use crate::pipeline::section_manifest;
use msd_core::fs::relpath::RelPath;

/// Files at the content root that are indexes over the rest, rebuilt rather than copied.
const SINGLE: [&str; 6] =
    ["CONTEXT.md", "CONTEXT-INDEX.json", "tiers.json", "namespaces.json", "profiles.json", section_manifest::PATH];

/// Why a tree cannot be scaled.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ScaleError(pub String);

fn stem_of<'a>(path: &'a str, dir: &str, ext: &str) -> Option<&'a str> {
    path.strip_prefix(dir)?.strip_suffix(ext).filter(|s| !s.contains('/'))
}

/// The renames of copy `suffix`: literal `from -> to` pairs over paths and text.
fn renames(tree: &Tree, suffix: &str) -> Vec<(String, String)> {
    let mut r = Vec::new();
    for rel in tree.files.keys() {
        let p = rel.as_str();
        if let Some(stem) = stem_of(p, "commands/msd/", ".md") {
            r.push((format!("commands/msd/{stem}.md"), format!("commands/msd/{stem}{suffix}.md")));
            r.push((format!("msd:{stem}"), format!("msd:{stem}{suffix}")));
        }
        if let Some(w) = stem_of(p, "msd-core/workflows/", ".md") {
            r.push((format!("workflows/{w}.md"), format!("workflows/{w}{suffix}.md")));
            r.push((format!("workflows/{w}/"), format!("workflows/{w}{suffix}/")));
        }
        if let Some(a) = stem_of(p, "agents/", ".md") {
            r.push((a.to_string(), format!("{a}{suffix}")));
        }
        for dir in ["msd-core/references/", "msd-core/templates/"] {
            if let Some(name) = p.strip_prefix(dir).filter(|n| !n.contains('/')) {
                let (base, ext) = name.rsplit_once('.').unwrap_or((name, ""));
                let short = &dir["msd-core/".len()..];
                r.push((format!("{short}{name}"), format!("{short}{base}{suffix}.{ext}")));
            }
        }
    }
    r.sort();
    r.dedup();
    r
}

fn replacer(pairs: &[(String, String)]) -> (AhoCorasick, Vec<String>) {
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(pairs.iter().map(|(f, _)| f.as_str()))
        .expect("literal patterns build");
    (ac, pairs.iter().map(|(_, t)| t.clone()).collect())
}

/// Builds the scaled tree.
pub(crate) fn scale(tree: &Tree, factor: usize) -> Result<Tree, ScaleError> {
    if factor == 0 {
        return Err(ScaleError("the scale factor is at least 1".into()));
    }
    let mut files: BTreeMap<RelPath, Bytes> = tree.files.clone();
    let tiers: serde_json::Value = json_file(tree, "tiers.json")?.unwrap_or_else(|| serde_json::json!({}));
    let namespaces = json_file(tree, "namespaces.json")?;
    let profiles = json_file(tree, "profiles.json")?;
    let mut new_profiles = profiles.clone();
    let mut new_tiers = tiers.clone();
    let mut new_namespaces = namespaces.clone();
    for k in 2..=factor {
        let suffix = format!("-s{k}");
        let (ac, to) = replacer(&renames(tree, &suffix));
        for (rel, bytes) in &tree.files {
            if SINGLE.contains(&rel.as_str()) {
                continue;
            }
            let path = ac.replace_all(rel.as_str(), &to);
            let path = RelPath::new(path).map_err(|e| ScaleError(format!("renamed path: {e}")))?;
            let data: Bytes = match std::str::from_utf8(bytes) {
                Ok(text) => Bytes::from(ac.replace_all(text, &to).into_bytes()),
                Err(_) => bytes.clone(),
            };
            files.insert(path, data);
        }
        for kind in ["workflows", "agents"] {
            if let Some(map) = tiers.get(kind).and_then(|v| v.as_object()) {
                for (name, tier) in map {
                    new_tiers[kind][format!("{name}{suffix}")] = tier.clone();
                }
            }
        }
        if let (Some(orig), Some(groups)) = (&namespaces, new_namespaces.as_mut().and_then(|n| n.get_mut("groups"))) {
            for (g, orig_g) in
                groups.as_array_mut().into_iter().flatten().zip(orig["groups"].as_array().into_iter().flatten())
            {
                let extra: Vec<serde_json::Value> = orig_g["commands"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c.as_str().map(|c| serde_json::Value::String(format!("{c}{suffix}"))))
                    .collect();
                g["commands"].as_array_mut().expect("commands").extend(extra);
            }
        }
        if let (Some(orig), Some(new)) = (&profiles, new_profiles.as_mut()) {
            copy_profiles(orig, new, &suffix);
        }
    }
    let put = |files: &mut BTreeMap<RelPath, Bytes>, name: &str, v: &serde_json::Value| {
        let text = serde_json::to_string_pretty(v).expect("json") + "\n";
        files.insert(RelPath::new(name).expect("static"), Bytes::from(text.into_bytes()));
    };
    if tree.files.contains_key(&RelPath::new("tiers.json").expect("static")) {
        put(&mut files, "tiers.json", &new_tiers);
    }
    if let Some(ns) = &new_namespaces {
        put(&mut files, "namespaces.json", ns);
    }
    if let Some(p) = &new_profiles {
        put(&mut files, "profiles.json", p);
    }
    let mut out = Tree { origin: format!("{} x{factor}", tree.origin), files };
    let manifest = section_manifest::build(&out).map_err(|e| ScaleError(e.to_string()))?;
    out.files
        .insert(RelPath::new(section_manifest::PATH).expect("static"), Bytes::from(manifest.render().into_bytes()));
    Ok(out)
}

/// Adds copy `suffix` of every command to `new`: into the profile of its original, and its
/// `requires` as the copies of the original's.
fn copy_profiles(orig: &serde_json::Value, new: &mut serde_json::Value, suffix: &str) {
    let copy = |v: &serde_json::Value| v.as_str().map(|c| serde_json::Value::String(format!("{c}{suffix}")));
    let origs = orig["profiles"].as_array().into_iter().flatten();
    for (p, orig_p) in new["profiles"].as_array_mut().into_iter().flatten().zip(origs) {
        let extra: Vec<serde_json::Value> =
            orig_p["commands"].as_array().into_iter().flatten().filter_map(copy).collect();
        if let Some(list) = p["commands"].as_array_mut() {
            list.extend(extra);
        }
    }
    if let (Some(reqs), Some(new_reqs)) = (orig["requires"].as_object(), new["requires"].as_object_mut()) {
        for (cmd, list) in reqs {
            let copied: Vec<serde_json::Value> = list.as_array().into_iter().flatten().filter_map(copy).collect();
            new_reqs.insert(format!("{cmd}{suffix}"), serde_json::Value::Array(copied));
        }
    }
}

fn json_file(tree: &Tree, name: &str) -> Result<Option<serde_json::Value>, ScaleError> {
    let Some(b) = tree.files.get(&RelPath::new(name).expect("static")) else { return Ok(None) };
    serde_json::from_slice(b).map(Some).map_err(|e| ScaleError(format!("{name}: {e}")))
}
