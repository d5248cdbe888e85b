//! Karpenter's AWS node classes: EC2NodeClass (v1, v1beta1) and the older AWSNodeTemplate
//! (v1alpha1), in one shape.

use super::Object;
use crate::diag::FileId;
use crate::yaml::Node;

#[derive(Debug)]
pub struct NodeClass<'a> {
    /// Index into `Index::objects`.
    pub obj: usize,
    pub file: FileId,
    pub spec: Node<'a>,
    /// An AWSNodeTemplate: it has no `amiSelectorTerms` aliases.
    pub legacy: bool,
}

impl<'a> NodeClass<'a> {
    pub fn from_object(idx: usize, obj: &Object<'a>) -> Option<Self> {
        let legacy = match (obj.group, obj.kind) {
            ("karpenter.k8s.aws", "EC2NodeClass") => false,
            ("karpenter.k8s.aws", "AWSNodeTemplate") => true,
            _ => return None,
        };
        Some(NodeClass {
            obj: idx,
            file: obj.file,
            spec: obj.spec()?,
            legacy,
        })
    }

    /// `spec.amiSelectorTerms`.
    pub fn ami_selector_terms(&self) -> impl Iterator<Item = Node<'a>> + use<'a> {
        self.spec
            .get("amiSelectorTerms")
            .into_iter()
            .flat_map(|n| n.items())
    }

    /// `spec.blockDeviceMappings`.
    pub fn block_device_mappings(&self) -> impl Iterator<Item = Node<'a>> + use<'a> {
        self.spec
            .get("blockDeviceMappings")
            .into_iter()
            .flat_map(|n| n.items())
    }

    /// `spec.metadataOptions`.
    pub fn metadata_options(&self) -> Option<Node<'a>> {
        self.spec.get("metadataOptions")
    }
}
