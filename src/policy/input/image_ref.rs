//! Container image references, normalised as the runtime reads them.

use super::values::{Strings, obj};
use regorus::Value;

/// An image reference as the container runtime reads it: `pytorch/pytorch:2.3` is
/// `docker.io/pytorch/pytorch:2.3`, `ubuntu` is `docker.io/library/ubuntu`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ImageRef<'s> {
    registry: &'s str,
    /// The repository path inside the registry (`library/ubuntu`).
    repository: std::borrow::Cow<'s, str>,
    /// `""` when there is none.
    pub(super) tag: &'s str,
    /// `""` when there is none (`sha256:…`).
    digest: &'s str,
}

impl<'s> ImageRef<'s> {
    /// `None` for what is filled in later (`${IMAGE}`, `{{ .Values.image }}`) or is no reference.
    pub(super) fn parse(image: &'s str) -> Option<Self> {
        if image.is_empty() || image.contains("${") || image.contains("{{") {
            return None;
        }
        let (name, digest) = image.split_once('@').unwrap_or((image, ""));
        // The first segment names a registry when it has a `.` or `:` or is `localhost`.
        let (registry, path) = match name.split_once('/') {
            Some((first, rest))
                if first.contains('.') || first.contains(':') || first == "localhost" =>
            {
                (first, rest)
            }
            _ => ("docker.io", name),
        };
        let (path, tag) = match path.rfind(':') {
            Some(i) if !path[i..].contains('/') => (&path[..i], &path[i + 1..]),
            _ => (path, ""),
        };
        let repository = if registry == "docker.io" && !path.contains('/') {
            std::borrow::Cow::Owned(format!("library/{path}"))
        } else {
            std::borrow::Cow::Borrowed(path)
        };
        Some(ImageRef {
            registry,
            repository,
            tag,
            digest,
        })
    }

    /// `registry/repository`: the image without its tag and digest.
    pub(super) fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// `registry/repository[:tag][@digest]`, what allow-lists of registries match against.
    pub(super) fn full(&self) -> String {
        let mut s = self.name();
        if !self.tag.is_empty() {
            s.push(':');
            s.push_str(self.tag);
        }
        if !self.digest.is_empty() {
            s.push('@');
            s.push_str(self.digest);
        }
        s
    }

    pub(super) fn value(&self, strings: &mut Strings) -> Value {
        obj(vec![
            ("registry", strings.get(self.registry)),
            ("repository", strings.get(&self.repository)),
            ("tag", strings.get(self.tag)),
            ("digest", strings.get(self.digest)),
            ("full", strings.get(&self.full())),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references_read_as_the_runtime_reads_them() {
        // image → (full reference, tag, digest)
        let cases = [
            ("ubuntu", "docker.io/library/ubuntu", "", ""),
            (
                "pytorch/pytorch:2.3.0",
                "docker.io/pytorch/pytorch:2.3.0",
                "2.3.0",
                "",
            ),
            (
                "localhost:5000/train:1.2",
                "localhost:5000/train:1.2",
                "1.2",
                "",
            ),
            ("localhost/train", "localhost/train", "", ""),
            (
                "nvcr.io/nvidia/pytorch@sha256:0123",
                "nvcr.io/nvidia/pytorch@sha256:0123",
                "",
                "sha256:0123",
            ),
            (
                "ghcr.io/org/img:v1@sha256:ab",
                "ghcr.io/org/img:v1@sha256:ab",
                "v1",
                "sha256:ab",
            ),
        ];
        for (image, full, tag, digest) in cases {
            let r = ImageRef::parse(image).expect(image);
            assert_eq!(
                (r.full().as_str(), r.tag, r.digest),
                (full, tag, digest),
                "{image}"
            );
        }
        for placeholder in ["${IMAGE}", "{{ .Values.image }}", ""] {
            assert_eq!(ImageRef::parse(placeholder), None);
        }
    }
}
