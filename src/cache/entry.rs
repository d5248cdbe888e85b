//! An entry on disk: a magic line, the payload's length and BLAKE3 hash, the payload. The header
//! makes a truncated or damaged file (a full disk, a crash before the rename on a file system
//! that does not order them, a hand edit) a miss instead of wrong output.

/// Also the format's version: a change of layout changes it, and old entries are misses.
const MAGIC: &[u8; 8] = b"gpuops1\n";
const HEADER: usize = MAGIC.len() + 8 + 32;

/// The bytes of an entry holding `payload`.
pub(super) fn seal(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(blake3::hash(payload).as_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payload of an entry's bytes, when they are whole.
pub(super) fn open(mut bytes: Vec<u8>) -> Option<Vec<u8>> {
    if bytes.len() < HEADER || &bytes[..MAGIC.len()] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
    let hash: [u8; 32] = bytes[16..HEADER].try_into().ok()?;
    if len != (bytes.len() - HEADER) as u64 || blake3::hash(&bytes[HEADER..]) != hash {
        return None;
    }
    bytes.drain(..HEADER);
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_opens_and_anything_else_does_not() {
        assert_eq!(open(seal(b"x y")).as_deref(), Some(&b"x y"[..]));
        assert_eq!(open(seal(b"")).as_deref(), Some(&b""[..]));
        assert_eq!(open(b"gpuops1\n".to_vec()), None);
        let mut longer = seal(b"abc");
        longer.push(b'd');
        assert_eq!(open(longer), None);
    }
}
