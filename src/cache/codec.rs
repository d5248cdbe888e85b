//! A payload as a sequence of length-prefixed strings and small numbers: what an entry holds is
//! read back by the code that wrote it, so it needs no self-description.

/// Writes a payload.
#[derive(Default)]
pub struct Writer(Vec<u8>);

impl Writer {
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
        self
    }

    pub fn u64(&mut self, n: u64) -> &mut Self {
        self.0.extend_from_slice(&n.to_le_bytes());
        self
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Reads a payload back; every read is `None` past its end or on text that is not UTF-8.
pub struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader(bytes)
    }

    pub fn u64(&mut self) -> Option<u64> {
        let (n, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*n))
    }

    pub fn str(&mut self) -> Option<&'a str> {
        let len = usize::try_from(self.u64()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (s, rest) = self.0.split_at(len);
        self.0 = rest;
        std::str::from_utf8(s).ok()
    }

    /// Whether everything was read: a payload with bytes left over is not the one expected.
    pub fn is_done(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_is_read_back() {
        let mut w = Writer::default();
        w.str("héllo").u64(7).str("");
        let bytes = w.into_bytes();
        let mut r = Reader::new(&bytes);
        assert_eq!(r.str(), Some("héllo"));
        assert_eq!(r.u64(), Some(7));
        assert_eq!(r.str(), Some(""));
        assert!(r.is_done());
        assert_eq!(r.u64(), None);
        assert_eq!(Reader::new(&bytes[..10]).str(), None);
    }
}
