//! JSONC surfaces (Claude `settings.json`, Codex `hooks.json`, ...), edited through
//! `jsonc-parser`'s CST so that comments, order and formatting stay as the user had them.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstNode, CstObject, CstRootNode};
use serde_json::Value;

use super::{Doc, SettingsError, at};

pub(super) struct JsonDoc {
    root: CstRootNode,
    /// The file began with a UTF-8 byte order mark (kept on render; the parser refuses it).
    bom: bool,
}

impl JsonDoc {
    pub(super) fn parse(display: &str, text: Option<&str>) -> Result<JsonDoc, SettingsError> {
        let text = text.unwrap_or("");
        let (bom, text) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let src = if text.trim().is_empty() { "{}\n" } else { text };
        let root = CstRootNode::parse(src, &ParseOptions::default()).map_err(|e| SettingsError {
            path: display.to_string(),
            line: Some(src[..e.range().start.min(src.len())].matches('\n').count() + 1),
            message: format!("not valid JSON ({})", e.kind()),
        })?;
        if let Some(d) = msd_core::fs::json::first_duplicate_key(src) {
            return Err(SettingsError {
                path: display.to_string(),
                line: Some(d.line),
                message: format!(
                    "key `{}` occurs twice{} (the runtime reads only one of them)",
                    d.key,
                    if d.within.is_empty() { String::new() } else { format!(" in `{}`", d.within) }
                ),
            });
        }
        if root.object_value().is_none() {
            return Err(SettingsError {
                path: display.to_string(),
                line: Some(1),
                message: "the top level is not an object".into(),
            });
        }
        Ok(JsonDoc { root, bom })
    }

    fn object(&self, path: &[String]) -> Option<CstObject> {
        let mut obj = self.root.object_value()?;
        for k in path {
            obj = obj.object_value(k)?;
        }
        Some(obj)
    }

    fn array(&self, path: &[String]) -> Option<CstArray> {
        let (last, parent) = path.split_last()?;
        self.object(parent)?.array_value(last)
    }
}

fn to_input(v: &Value) -> jsonc_parser::cst::CstInputValue {
    use jsonc_parser::cst::CstInputValue as I;
    match v {
        Value::Null => I::Null,
        Value::Bool(b) => I::Bool(*b),
        Value::Number(n) => I::Number(n.to_string()),
        Value::String(s) => I::String(s.clone()),
        Value::Array(a) => I::Array(a.iter().map(to_input).collect()),
        Value::Object(o) => I::Object(o.iter().map(|(k, v)| (k.clone(), to_input(v))).collect()),
    }
}

impl Doc for JsonDoc {
    fn get(&self, path: &[String]) -> Option<Value> {
        let (last, parent) = path.split_last()?;
        self.object(parent)?.get(last)?.value()?.to_serde_value()
    }

    fn ensure_table(&mut self, path: &[String]) -> Result<Vec<Vec<String>>, String> {
        let mut created = Vec::new();
        let mut obj = self.root.object_value().ok_or("the top level is not an object")?;
        for (i, k) in path.iter().enumerate() {
            obj = match obj.get(k) {
                Some(prop) => prop
                    .value()
                    .and_then(|v| v.as_object())
                    .ok_or_else(|| format!("`{}` is not an object", at(&path[..=i])))?,
                None => {
                    created.push(path[..=i].to_vec());
                    obj.append(k, to_input(&Value::Object(Default::default())));
                    obj.object_value(k).expect("just added")
                }
            };
        }
        Ok(created)
    }

    fn items(&self, path: &[String]) -> Result<Vec<Value>, String> {
        let (last, parent) = path.split_last().ok_or("empty path")?;
        let Some(obj) = self.object(parent) else { return Ok(Vec::new()) };
        match obj.get(last).and_then(|p| p.value()) {
            None => Ok(Vec::new()),
            Some(CstNode::Container(c)) if c.is_array() => {
                let arr = obj.array_value(last).expect("is an array");
                Ok(arr.elements().iter().filter_map(|e| e.to_serde_value()).collect())
            }
            Some(_) => Err(format!("`{}` is not an array", at(path))),
        }
    }

    fn push(&mut self, path: &[String], v: &Value) -> Result<bool, String> {
        let (last, parent) = path.split_last().ok_or("empty path")?;
        let obj = self.object(parent).ok_or_else(|| format!("`{}` is missing", at(parent)))?;
        let created = obj.get(last).is_none();
        let arr = obj.array_value_or_set(last);
        arr.append(to_input(v));
        Ok(created)
    }

    fn replace(&mut self, path: &[String], i: usize, v: &Value) {
        if let Some(arr) = self.array(path)
            && let Some(el) = arr.elements().into_iter().nth(i)
        {
            el.remove();
            arr.insert(i, to_input(v));
        }
    }

    fn remove_item(&mut self, path: &[String], i: usize) {
        if let Some(arr) = self.array(path)
            && let Some(el) = arr.elements().into_iter().nth(i)
        {
            el.remove();
        }
    }

    fn set(&mut self, path: &[String], v: &Value) {
        let Some((last, parent)) = path.split_last() else { return };
        let Some(obj) = self.object(parent) else { return };
        match obj.get(last) {
            Some(prop) => prop.set_value(to_input(v)),
            None => {
                obj.append(last, to_input(v));
            }
        }
    }

    fn remove_key(&mut self, path: &[String]) {
        let Some((last, parent)) = path.split_last() else { return };
        if let Some(prop) = self.object(parent).and_then(|o| o.get(last)) {
            prop.remove();
        }
    }

    fn is_empty_container(&self, path: &[String]) -> bool {
        match self.get(path) {
            Some(Value::Object(o)) => o.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            _ => false,
        }
    }

    fn is_blank(&self) -> bool {
        let no_comments = !self.root.to_string().contains("//") && !self.root.to_string().contains("/*");
        no_comments && self.root.object_value().is_some_and(|o| o.properties().is_empty())
    }

    fn render(&self) -> String {
        if self.bom { format!("\u{feff}{}", self.root) } else { self.root.to_string() }
    }
}
