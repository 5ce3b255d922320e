//! The `schema_version` every `--json` document carries, in one place: commands stamp their
//! documents here, and `cli::schemas` publishes the schemas of the same version.

/// The version of every `--json` document's shape.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// `doc` with `"schema_version"` as its first key (for documents assembled with `json!`).
pub(crate) fn versioned(doc: serde_json::Value) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    out.insert("schema_version".into(), SCHEMA_VERSION.into());
    if let serde_json::Value::Object(m) = doc {
        for (k, v) in m {
            if k != "schema_version" {
                out.insert(k, v);
            }
        }
    }
    serde_json::Value::Object(out)
}
