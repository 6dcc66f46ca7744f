//! Shard files (`selfplay::data::decode_shard`). Input byte 0 picks the form: raw file
//! bytes (header checks, checksum, zstd), or a postcard payload that the harness frames
//! as a valid shard (version 1 or 2, the count from the payload's length prefix, the
//! checksum) so that the sample checks are reached. A shard that decodes holds valid
//! samples: re-encoding and decoding gives the same samples.
#![no_main]
use libfuzzer_sys::fuzz_target;
use selfplay::data::{decode_shard, encode_shard, MAGIC};
use std::path::Path;

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The postcard varint at the start of `raw` (a `Vec`'s length), if there is one.
fn leading_varint(raw: &[u8]) -> Option<u32> {
    let mut v: u64 = 0;
    for (i, &b) in raw.iter().take(5).enumerate() {
        v |= ((b & 0x7f) as u64) << (7 * i);
        if b & 0x80 == 0 {
            return u32::try_from(v).ok();
        }
    }
    None
}

fn frame(version: u32, count: u32, raw: &[u8]) -> Vec<u8> {
    let payload = zstd::bulk::compress(raw, 1).expect("zstd");
    let mut out = Vec::with_capacity(32 + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let path = Path::new("fuzz.shard");
    let bytes = match mode % 3 {
        0 => rest.to_vec(),
        m => frame(m as u32, leading_varint(rest).unwrap_or(0), rest),
    };
    let Ok(samples) = decode_shard(path, &bytes) else {
        return;
    };
    for s in &samples {
        let legal = s.position.legal_moves(&s.rules);
        for m in &s.moves {
            assert!(legal.contains(m), "sample move {m} is not legal");
        }
        assert!(s.policy.is_empty() || s.policy.len() == s.moves.len());
    }
    let again = decode_shard(path, &encode_shard(&samples)).expect("re-encoded shard decodes");
    assert_eq!(again, samples);
});
