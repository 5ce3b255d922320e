//! TOML surfaces (Codex `config.toml`), edited through `toml_edit` so that comments, order and
//! formatting stay as the user had them.

use serde_json::Value;

use super::{Doc, SettingsError, at};

pub(super) struct TomlDoc {
    doc: toml_edit::DocumentMut,
    /// The text began with a byte order mark (kept on render).
    bom: bool,
}

impl TomlDoc {
    pub(super) fn parse(display: &str, text: Option<&str>) -> Result<TomlDoc, SettingsError> {
        let src = text.unwrap_or("");
        let (bom, src) = match src.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, src),
        };
        let doc = src.parse::<toml_edit::DocumentMut>().map_err(|e| SettingsError {
            path: display.to_string(),
            line: e.span().map(|s| src[..s.start.min(src.len())].matches('\n').count() + 1),
            message: format!("not valid TOML ({})", e.message()),
        })?;
        Ok(TomlDoc { doc, bom })
    }

    fn item(&self, path: &[String]) -> Option<&toml_edit::Item> {
        let mut item = self.doc.as_item();
        for k in path {
            item = item.as_table_like()?.get(k)?;
        }
        Some(item)
    }

    fn item_mut(&mut self, path: &[String]) -> Option<&mut toml_edit::Item> {
        let mut item = self.doc.as_item_mut();
        for k in path {
            item = item.as_table_like_mut()?.get_mut(k)?;
        }
        Some(item)
    }
}

fn toml_to_json(item: &toml_edit::Item) -> Option<Value> {
    use toml_edit::Item;
    match item {
        Item::None => None,
        Item::Value(v) => Some(toml_value_to_json(v)),
        Item::Table(t) => {
            Some(Value::Object(t.iter().filter_map(|(k, v)| Some((k.to_string(), toml_to_json(v)?))).collect()))
        }
        Item::ArrayOfTables(a) => Some(Value::Array(
            a.iter()
                .map(|t| Value::Object(t.iter().filter_map(|(k, v)| Some((k.to_string(), toml_to_json(v)?))).collect()))
                .collect(),
        )),
    }
}

fn toml_value_to_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(toml_value_to_json).collect()),
        T::InlineTable(t) => Value::Object(t.iter().map(|(k, v)| (k.to_string(), toml_value_to_json(v))).collect()),
    }
}

fn json_to_toml_value(v: &Value) -> toml_edit::Value {
    match v {
        Value::Null => toml_edit::Value::from(""),
        Value::Bool(b) => toml_edit::Value::from(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml_edit::Value::from(i),
            None => toml_edit::Value::from(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => toml_edit::Value::from(s.as_str()),
        Value::Array(a) => toml_edit::Value::Array(a.iter().map(json_to_toml_value).collect()),
        Value::Object(o) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in o {
                t.insert(k, json_to_toml_value(v));
            }
            toml_edit::Value::InlineTable(t)
        }
    }
}

fn json_to_toml_table(o: &serde_json::Map<String, Value>) -> toml_edit::Table {
    let mut t = toml_edit::Table::new();
    for (k, v) in o {
        t.insert(k, toml_edit::Item::Value(json_to_toml_value(v)));
    }
    t
}

impl Doc for TomlDoc {
    fn get(&self, path: &[String]) -> Option<Value> {
        self.item(path).and_then(toml_to_json)
    }

    fn ensure_table(&mut self, path: &[String]) -> Result<Vec<Vec<String>>, String> {
        let mut created = Vec::new();
        let mut table: &mut dyn toml_edit::TableLike = self.doc.as_table_mut();
        for (i, k) in path.iter().enumerate() {
            if table.get(k).is_none() {
                created.push(path[..=i].to_vec());
                // Implicit until a key is put in it (`set`, `push`): a table that holds only
                // tables of ours (`[mcp_servers.msd-statusline]`) needs no header of its own.
                let mut t = toml_edit::Table::new();
                t.set_implicit(true);
                table.insert(k, toml_edit::Item::Table(t));
            }
            table = table
                .get_mut(k)
                .and_then(|x| x.as_table_like_mut())
                .ok_or_else(|| format!("`{}` is not a table", at(&path[..=i])))?;
        }
        Ok(created)
    }

    fn items(&self, path: &[String]) -> Result<Vec<Value>, String> {
        match self.item(path) {
            None => Ok(Vec::new()),
            Some(toml_edit::Item::ArrayOfTables(_)) | Some(toml_edit::Item::Value(toml_edit::Value::Array(_))) => {
                match toml_to_json(self.item(path).expect("present")) {
                    Some(Value::Array(a)) => Ok(a),
                    _ => Ok(Vec::new()),
                }
            }
            Some(_) => Err(format!("`{}` is not an array", at(path))),
        }
    }

    fn push(&mut self, path: &[String], v: &Value) -> Result<bool, String> {
        let (last, parent) = path.split_last().ok_or("empty path")?;
        let table = self
            .item_mut(parent)
            .and_then(|x| x.as_table_like_mut())
            .ok_or_else(|| format!("`{}` is missing", at(parent)))?;
        let created = table.get(last).is_none();
        match (v, created) {
            (Value::Object(o), true) => {
                let mut a = toml_edit::ArrayOfTables::new();
                a.push(json_to_toml_table(o));
                table.insert(last, toml_edit::Item::ArrayOfTables(a));
            }
            (_, true) => {
                let mut a = toml_edit::Array::new();
                a.push(json_to_toml_value(v));
                table.insert(last, toml_edit::Item::Value(toml_edit::Value::Array(a)));
                if let Some(t) = self.item_mut(parent).and_then(|x| x.as_table_mut()) {
                    t.set_implicit(false);
                }
            }
            (_, false) => match table.get_mut(last) {
                Some(toml_edit::Item::ArrayOfTables(a)) => match v {
                    Value::Object(o) => a.push(json_to_toml_table(o)),
                    _ => return Err(format!("`{}` is an array of tables; the entry is not a table", at(path))),
                },
                Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => a.push(json_to_toml_value(v)),
                _ => return Err(format!("`{}` is not an array", at(path))),
            },
        }
        Ok(created)
    }

    fn replace(&mut self, path: &[String], i: usize, v: &Value) {
        match self.item_mut(path) {
            Some(toml_edit::Item::ArrayOfTables(a)) => {
                if let (Some(t), Value::Object(o)) = (a.get_mut(i), v) {
                    *t = json_to_toml_table(o);
                }
            }
            Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => {
                a.replace(i, json_to_toml_value(v));
            }
            _ => {}
        }
    }

    fn remove_item(&mut self, path: &[String], i: usize) {
        match self.item_mut(path) {
            Some(toml_edit::Item::ArrayOfTables(a)) => {
                a.remove(i);
            }
            Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => {
                a.remove(i);
            }
            _ => {}
        }
    }

    fn set(&mut self, path: &[String], v: &Value) {
        let Some((last, parent)) = path.split_last() else { return };
        // A table value under a standard table becomes a `[parent.key]` table of its own (how
        // Codex's users write `[mcp_servers.<name>]`): an inline table put into an implicit
        // table (`[mcp_servers.docs]` alone makes `mcp_servers` one) is not written out by
        // toml_edit (observed; the surfaces tests hold the case).
        if let (Some(t), Value::Object(o)) = (self.item_mut(parent).and_then(|x| x.as_table_mut()), v)
            && !matches!(t.get(last), Some(toml_edit::Item::Value(_)))
        {
            let mut new = json_to_toml_table(o);
            if let Some(toml_edit::Item::Table(cur)) = t.get_mut(last) {
                new.set_position(cur.position());
                *new.decor_mut() = cur.decor().clone();
                *cur = new;
            } else {
                t.insert(last, toml_edit::Item::Table(new));
            }
            return;
        }
        if let Some(t) = self.item_mut(parent).and_then(|x| x.as_table_mut()) {
            // A key in an implicit table is written only once the table has its header.
            t.set_implicit(false);
        }
        if let Some(t) = self.item_mut(parent).and_then(|x| x.as_table_like_mut()) {
            match t.get_mut(last) {
                Some(toml_edit::Item::Value(cur)) => {
                    let decor = cur.decor().clone();
                    *cur = json_to_toml_value(v);
                    *cur.decor_mut() = decor;
                }
                _ => {
                    t.insert(last, toml_edit::Item::Value(json_to_toml_value(v)));
                }
            }
        }
    }

    fn remove_key(&mut self, path: &[String]) {
        let Some((last, parent)) = path.split_last() else { return };
        if let Some(t) = self.item_mut(parent).and_then(|x| x.as_table_like_mut()) {
            t.remove(last);
        }
    }

    fn is_empty_container(&self, path: &[String]) -> bool {
        match self.item(path) {
            Some(toml_edit::Item::Table(t)) => t.is_empty(),
            Some(toml_edit::Item::ArrayOfTables(a)) => a.is_empty(),
            Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => a.is_empty(),
            Some(toml_edit::Item::Value(toml_edit::Value::InlineTable(t))) => t.is_empty(),
            _ => false,
        }
    }

    fn is_blank(&self) -> bool {
        self.doc.to_string().trim().is_empty()
    }

    fn render(&self) -> String {
        if self.bom { format!("\u{feff}{}", self.doc) } else { self.doc.to_string() }
    }
}
