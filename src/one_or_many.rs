//! Lists that usually hold one value, kept by the tens of thousands in a large repository (a
//! requirement's values, the objects of one kind and name): one value without an allocation.

/// One value, or many.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Clone> OneOrMany<T> {
    /// The values of a slice (`One` for exactly one).
    pub fn of(values: &[T]) -> Self {
        match values {
            [one] => OneOrMany::One(one.clone()),
            _ => OneOrMany::Many(values.to_vec()),
        }
    }

    /// Adds a value at the end.
    pub fn push(&mut self, value: T) {
        match self {
            OneOrMany::One(first) => *self = OneOrMany::Many(vec![first.clone(), value]),
            OneOrMany::Many(v) => v.push(value),
        }
    }
}

impl<T> std::ops::Deref for OneOrMany<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            OneOrMany::One(v) => std::slice::from_ref(v),
            OneOrMany::Many(v) => v,
        }
    }
}

impl<'s, T> IntoIterator for &'s OneOrMany<T> {
    type Item = &'s T;
    type IntoIter = std::slice::Iter<'s, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::OneOrMany;

    #[test]
    fn reads_as_a_slice_in_order() {
        let mut v = OneOrMany::One("a");
        assert_eq!(&*v, &["a"]);
        v.push("b");
        v.push("c");
        assert_eq!(&*v, &["a", "b", "c"]);
        assert_eq!(v.iter().copied().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(OneOrMany::of(&["x"]), OneOrMany::One("x"));
        assert_eq!(OneOrMany::of(&["x", "y"]), OneOrMany::Many(vec!["x", "y"]));
        assert!(OneOrMany::<&str>::of(&[]).is_empty());
    }
}
