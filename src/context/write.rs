//! The context file: a header comment that says where and when it was pulled, then one
//! `kind: List` whose items start with `apiVersion`, `kind` and `metadata`, the rest in key
//! order. The same objects give the same bytes.

use super::Note;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Where the objects came from, for the header.
pub struct Header<'a> {
    pub cluster: &'a str,
    pub server: &'a str,
    /// The API server's `gitVersion`.
    pub version: &'a str,
    /// Seconds since the epoch.
    pub pulled_at: i64,
}

#[derive(Serialize)]
struct List<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    items: Vec<Item<'a>>,
}

/// An object with its identity first, as `kubectl get -o yaml` shows it.
#[derive(Serialize)]
struct Item<'a> {
    #[serde(rename = "apiVersion", skip_serializing_if = "Option::is_none")]
    api_version: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<Leading<'a>>,
    #[serde(flatten)]
    rest: BTreeMap<&'a str, &'a Value>,
}

/// A map with some keys first (in their order), the rest after in key order.
struct Leading<'a> {
    first: &'static [&'static str],
    map: &'a serde_json::Map<String, Value>,
}

impl Serialize for Leading<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.map.len()))?;
        for k in self.first {
            if let Some(v) = self.map.get(*k) {
                m.serialize_entry(k, v)?;
            }
        }
        let rest: BTreeMap<&str, &Value> = self
            .map
            .iter()
            .filter(|(k, _)| !self.first.contains(&k.as_str()))
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        for (k, v) in rest {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'a> Item<'a> {
    fn of(v: &'a Value) -> Self {
        let o = v.as_object();
        let field = |k: &str| o.and_then(|o| o.get(k));
        let rest = o
            .into_iter()
            .flatten()
            .filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        Item {
            api_version: field("apiVersion"),
            kind: field("kind"),
            // `name` and `namespace` first, as kubectl shows them.
            metadata: field("metadata")
                .and_then(Value::as_object)
                .map(|map| Leading {
                    first: &["name", "namespace"],
                    map,
                }),
            rest,
        }
    }
}

/// The file's text: the header, a line per kind not pulled, the list.
pub fn render(header: &Header, notes: &[Note], items: &[Value]) -> Result<String, String> {
    let pulled = k8s_openapi::jiff::Timestamp::from_second(header.pulled_at)
        .map_err(|e| format!("pulled time: {e}"))?;
    let mut out = format!(
        "# gpuops context: cluster {}, server {}, Kubernetes {}, pulled {pulled}\n",
        one_line(header.cluster),
        one_line(header.server),
        one_line(header.version),
    );
    for n in notes {
        out.push_str(&format!(
            "# not pulled: {}: {}\n",
            one_line(&n.what),
            one_line(&n.why)
        ));
    }
    let list = List {
        api_version: "v1",
        kind: "List",
        items: items.iter().map(Item::of).collect(),
    };
    let yaml = serde_saphyr::to_string(&list).map_err(|e| e.to_string())?;
    out.push_str(&yaml);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// A name from the cluster inside a comment line: no line break can end the comment early.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn header() -> Header<'static> {
        Header {
            cluster: "prod",
            server: "https://k8s.example",
            version: "v1.33.2",
            pulled_at: 1_780_000_000,
        }
    }

    #[test]
    fn identity_first_then_keys_in_order() {
        let items = [json!({
            "status": {"x": 1}, "spec": {"b": "on", "a": "1_000"},
            "metadata": {"labels": {"team": "ml"}, "namespace": "ml", "name": "gpu"},
            "kind": "LocalQueue", "apiVersion": "kueue.x-k8s.io/v1beta2",
        })];
        let notes = [Note::new("Topology (kueue.x-k8s.io)", "forbidden (403)")];
        let text = render(&header(), &notes, &items).expect("renders");
        insta::assert_snapshot!(text, @r#"
        # gpuops context: cluster prod, server https://k8s.example, Kubernetes v1.33.2, pulled 2026-05-28T20:26:40Z
        # not pulled: Topology (kueue.x-k8s.io): forbidden (403)
        apiVersion: v1
        kind: List
        items:
        - apiVersion: kueue.x-k8s.io/v1beta2
          kind: LocalQueue
          metadata:
            name: gpu
            namespace: ml
            labels:
              team: ml
          spec:
            a: "1_000"
            b: "on"
          status:
            x: 1
        "#);
    }

    #[test]
    fn no_items_is_an_empty_list() {
        let text = render(&header(), &[], &[]).expect("renders");
        assert!(text.ends_with("kind: List\nitems: []\n"), "{text}");
    }

    #[test]
    fn a_line_break_in_a_name_stays_in_the_comment() {
        let h = Header {
            cluster: "a\nkind: Pod",
            ..header()
        };
        let text = render(&h, &[], &[]).expect("renders");
        assert!(
            text.starts_with("# gpuops context: cluster a?kind: Pod,"),
            "{text}"
        );
    }

    #[test]
    fn what_is_written_reads_back_the_same() {
        let item = json!({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x: y # z"},
            "data": {
                "yes": "on", "octal": "0755", "num": "1e3", "empty": "", "null": "null",
                "lines": "a\n  b\n\nc  \n", "trailing": "ends with space ", "tab": "a\tb",
                "lead": " leading", "quote": "'\"", "unicode": "GPU – ✓", "dash": "- item",
                "key: with colon": "v", "bool": true, "int": 64, "float": 0.5, "none": null,
                "list": [], "map": {},
            },
        });
        let text = render(&header(), &[], std::slice::from_ref(&item)).expect("renders");
        let back: Value = serde_saphyr::from_str(&text).expect("reads back");
        assert_eq!(back["items"][0], item, "{text}");
    }
}
