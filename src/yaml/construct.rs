//! Documents made by the readers of other languages (Terraform): values with the place in the
//! file each comes from, so findings on them point where they are written.

use super::{Builder, Document, Node, Span, Style};
use std::sync::Arc;

/// A value to make a document of, each node with its span in the file's text.
#[derive(Clone, Debug)]
pub enum Shape<'a> {
    /// A scalar: a string is `DoubleQuoted` (never resolved to a number or a bool); numbers,
    /// bools and null are `Plain`.
    Scalar {
        span: Span,
        text: String,
        style: Style,
    },
    Seq {
        span: Span,
        items: Vec<Shape<'a>>,
    },
    Map {
        span: Span,
        entries: Vec<(Shape<'a>, Shape<'a>)>,
    },
    /// A subtree of a document parsed from the same text, spans kept.
    Copy(Node<'a>),
}

impl Shape<'_> {
    /// A string scalar.
    pub fn str(span: Span, text: impl Into<String>) -> Self {
        Shape::Scalar {
            span,
            text: text.into(),
            style: Style::DoubleQuoted,
        }
    }

    /// A number, bool or null, read the way YAML reads it.
    pub fn plain(span: Span, text: impl Into<String>) -> Self {
        Shape::Scalar {
            span,
            text: text.into(),
            style: Style::Plain,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Shape::Scalar { span, .. } | Shape::Seq { span, .. } | Shape::Map { span, .. } => *span,
            Shape::Copy(n) => n.span(),
        }
    }
}

/// The document `root` describes; its scalars point into `text` where they read as written.
pub fn construct(text: Arc<str>, root: &Shape<'_>) -> Document {
    let mut b = Builder::new(text);
    let raw = build(&mut b, root);
    b.finish(raw)
}

fn build(b: &mut Builder, s: &Shape<'_>) -> super::Raw {
    match s {
        Shape::Scalar { span, text, style } => b.scalar(*span, text, *style),
        Shape::Seq { span, items } => {
            let items: Vec<_> = items.iter().map(|i| build(b, i)).collect();
            b.collection(*span, false, items.into_iter())
        }
        Shape::Map { span, entries } => {
            let mut raws = Vec::with_capacity(2 * entries.len());
            for (k, v) in entries {
                raws.push(build(b, k));
                raws.push(build(b, v));
            }
            b.collection(*span, true, raws.into_iter())
        }
        Shape::Copy(n) => b.copy(*n, &mut |_| None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructed_nodes_read_and_point_where_they_are_written() {
        let text: Arc<str> = Arc::from("kind = \"NodePool\"\nweight = 10\n");
        let root = Shape::Map {
            span: Span::new(0, text.len()),
            entries: vec![
                (
                    Shape::str(Span::new(0, 4), "kind"),
                    Shape::str(Span::new(7, 17), "NodePool"),
                ),
                (
                    Shape::str(Span::new(18, 24), "weight"),
                    Shape::plain(Span::new(27, 29), "10"),
                ),
            ],
        };
        let doc = construct(text, &root);
        let kind = doc.root().get("kind").unwrap();
        assert_eq!(kind.as_str(), Some("NodePool"));
        assert_eq!(kind.span(), Span::new(7, 17));
        let w = doc.root().get("weight").unwrap();
        assert_eq!(w.yaml11(), Some(super::super::Yaml11::Int));
        // A key whose text is not the file's at its span is kept in the pool.
        assert_eq!(
            doc.root().entries().map(|(k, _, _)| k).collect::<Vec<_>>(),
            ["kind", "weight"]
        );
    }
}
