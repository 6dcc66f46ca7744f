//! Tests of the shard files: round trips, every format version still read (golden files),
//! corruption and impossible contents reported as errors naming the file.

use super::*;

fn samples() -> Vec<Sample> {
    let rules = Rules::parse("icga,ply-limit=200").unwrap();
    let mut out = vec![];
    for v in Variant::ALL {
        let mut p = Position::start(v, &rules);
        for k in 0..10 {
            let moves: Vec<Move> = p.legal_moves(&rules).to_vec();
            let n = moves.len();
            out.push(Sample {
                position: p,
                rules,
                moves: moves.clone(),
                policy: if k % 3 == 0 {
                    vec![]
                } else {
                    (0..n)
                        .map(|i| (i + 1) as f32 / (n * (n + 1) / 2) as f32)
                        .collect()
                },
                search_value: 0.25 - k as f32 * 0.05,
                outcome: [1.0, 0.0, -1.0][k % 3],
                tree_only: false,
                final_pieces: None,
            });
            p.play(moves[(k * 7) % n]);
        }
        // The position after the ten stands in for the game's end; the first sample
        // keeps no final pieces, as a sample read from a version-3 shard has none.
        let n = out.len();
        for x in &mut out[n - 9..] {
            x.final_pieces = Some(Sample::final_pieces_of(&p, x.position.to_move()));
        }
        // A tree-only sample (Descent's tree learning): a value and nothing else.
        out.push(Sample {
            position: p,
            rules,
            moves: vec![],
            policy: vec![],
            search_value: -0.625,
            outcome: 0.0,
            tree_only: true,
            final_pieces: None,
        });
    }
    out
}

#[test]
fn shards_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.shard");
    let s = samples();
    // The samples exercise every kind of extra state.
    let has = |f: &dyn Fn(&ExtraState) -> bool| s.iter().any(|x| f(&x.position.extra()));
    assert!(has(&|e| e.drop_pending));
    assert!(has(&|e| !e.drop_pending
        && e.reserve[0] > 0
        && e.reserve[0] < 6));
    assert!(has(&|e| e.reserve[0] != e.reserve[1]));
    assert!(has(&|e| e.vanished != 0));
    assert!(has(&|e| e.partners != 0 && e.seat == 1));
    write_shard(&path, &s).unwrap();
    let back = read_shard(&path).unwrap();
    assert_eq!(back, s);
    for v in Variant::ALL {
        assert!(back.iter().any(|x| x.position.variant() == v), "{v}");
    }
    for (a, b) in back.iter().zip(&s) {
        assert_eq!(a.position.ply(), b.position.ply());
        assert_eq!(a.position.extra(), b.position.extra());
        assert_eq!(a.position.hash(), b.position.hash());
    }
    // No temp file is left behind.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// The header alone gives the sample count; a missing, truncated or foreign file is an
/// error naming it.
#[test]
fn the_sample_count_is_read_from_the_header_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.shard");
    let s = samples();
    write_shard(&path, &s).unwrap();
    assert_eq!(read_shard_sample_count(&path).unwrap(), s.len());
    // A damaged payload does not matter to the count (read_shard would refuse it).
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs::write(&path, &bytes).unwrap();
    assert_eq!(read_shard_sample_count(&path).unwrap(), s.len());
    assert!(read_shard(&path).is_err());
    let short = dir.path().join("short.shard");
    fs::write(&short, &bytes[..HEADER_LEN - 1]).unwrap();
    let e = read_shard_sample_count(&short).unwrap_err().to_string();
    assert!(e.contains("short.shard") && e.contains("header"), "{e}");
    let foreign = dir.path().join("foreign.shard");
    fs::write(&foreign, [7u8; 64]).unwrap();
    let e = read_shard_sample_count(&foreign).unwrap_err().to_string();
    assert!(e.contains("foreign.shard") && e.contains("magic"), "{e}");
    let missing = dir.path().join("missing.shard");
    let e = read_shard_sample_count(&missing).unwrap_err().to_string();
    assert!(e.contains("missing.shard"), "{e}");
}

/// The bytes a version-1 build wrote for `samples` (which must have no extra state
/// beyond `Position::new`'s).
fn encode_v1(samples: &[Sample]) -> Vec<u8> {
    let wire: Vec<WireSampleV1> = samples
        .iter()
        .map(|s| WireSampleV1 {
            black: s.position.pieces(Color::Black),
            white: s.position.pieces(Color::White),
            side: s.position.to_move().index() as u8,
            variant: s.position.variant().id(),
            ply: s.position.ply(),
            rules: s.rules.to_string(),
            moves: s.moves.iter().map(|m| m.to_bits()).collect(),
            policy: s.policy.clone(),
            search_value: s.search_value,
            outcome: s.outcome,
        })
        .collect();
    frame(1, samples.len(), &postcard::to_allocvec(&wire).unwrap())
}

/// The bytes a version-2 build wrote for `samples` (which must all be played
/// positions).
fn encode_v2(samples: &[Sample]) -> Vec<u8> {
    let wire: Vec<WireSampleV2> = samples
        .iter()
        .map(|s| {
            assert!(!s.tree_only);
            WireSample::from_sample(s).v2
        })
        .collect();
    frame(2, samples.len(), &postcard::to_allocvec(&wire).unwrap())
}

/// The bytes a version-3 build wrote for `samples` (their final pieces are dropped).
fn encode_v3(samples: &[Sample]) -> Vec<u8> {
    let wire: Vec<WireSampleV3> = samples
        .iter()
        .map(|s| WireSampleV3 {
            v2: WireSample::from_sample(s).v2,
            tree_only: s.tree_only,
        })
        .collect();
    frame(3, samples.len(), &postcard::to_allocvec(&wire).unwrap())
}

/// `samples` as a shard of a version before 4 reads them back: no final pieces.
fn without_final_pieces(samples: Vec<Sample>) -> Vec<Sample> {
    samples
        .into_iter()
        .map(|s| Sample {
            final_pieces: None,
            ..s
        })
        .collect()
}

/// A version-3 sample is the bytes of its version-2 fields, then the tree-only flag;
/// a version-4 one the version-3 bytes, then the final pieces (what nesting
/// `WireSampleV2` relies on).
#[test]
fn each_version_appends_its_fields_to_the_previous_ones() {
    let all = samples();
    assert!(all.iter().any(|s| s.final_pieces.is_some()));
    assert!(all.iter().any(|s| !s.tree_only && s.final_pieces.is_none()));
    for s in all {
        let w = WireSample::from_sample(&s);
        let mut v3 = postcard::to_allocvec(&w.v2).unwrap();
        v3.push(s.tree_only as u8);
        let w3 = WireSampleV3 {
            v2: WireSample::from_sample(&s).v2,
            tree_only: s.tree_only,
        };
        assert_eq!(postcard::to_allocvec(&w3).unwrap(), v3);
        let mut v4 = v3;
        v4.extend(postcard::to_allocvec(&s.final_pieces).unwrap());
        assert_eq!(postcard::to_allocvec(&w).unwrap(), v4);
    }
}

#[test]
fn version_3_shards_still_read() {
    let s = samples();
    let bytes = encode_v3(&s);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 3);
    assert_ne!(bytes, encode_shard(&s));
    let back = decode_shard(Path::new("v3.shard"), &bytes).unwrap();
    assert_eq!(back, without_final_pieces(s));
    // Read as version 4, the version-3 payload lacks the final pieces: an error.
    let mut b = bytes.clone();
    b[8..12].copy_from_slice(&4u32.to_le_bytes());
    assert!(decode_shard(Path::new("v3.shard"), &b).is_err());
}

/// Final pieces that overlap, leave the board, or belong to a tree-only sample are
/// errors naming the file and the sample.
#[test]
fn impossible_final_pieces_are_errors() {
    let path = Path::new("dir/final.shard");
    let s = samples();
    let played = s.iter().find(|x| x.final_pieces.is_some()).unwrap();
    let tree = s.iter().find(|x| x.tree_only).unwrap();
    let six = s
        .iter()
        .find(|x| x.final_pieces.is_some() && x.position.variant() == Variant::Six)
        .unwrap();
    let decode = |sample: &Sample, f: &dyn Fn(&mut WireSample)| {
        let mut w = WireSample::from_sample(sample);
        f(&mut w);
        let raw = postcard::to_allocvec(&vec![w]).unwrap();
        decode_shard(path, &frame(FORMAT_VERSION, 1, &raw))
    };
    assert!(decode(played, &|_| {}).is_ok());
    assert!(decode(six, &|_| {}).is_ok());
    let [own, _] = played.final_pieces.unwrap();
    let lowest = own & own.wrapping_neg();
    let cases = [
        (played, [own, lowest], "overlap"),
        // Square 63 (h8) is off the 6×6 board.
        (six, [1 << 63, 0], "leave the board"),
        (tree, [0, 0], "tree-only"),
    ];
    for (sample, pieces, what) in cases {
        let e = decode(sample, &|w| w.final_pieces = Some(pieces))
            .unwrap_err()
            .to_string();
        assert!(e.contains("final.shard") && e.contains("sample 0"), "{e}");
        assert!(e.contains(what), "{e}");
    }
}

#[test]
fn shards_round_trip_tree_only_samples() {
    let s = samples();
    let tree: Vec<&Sample> = s.iter().filter(|x| x.tree_only).collect();
    assert_eq!(tree.len(), Variant::ALL.len());
    let bytes = encode_shard(&s);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 4);
    let back = decode_shard(Path::new("t.shard"), &bytes).unwrap();
    assert_eq!(back, s);
    assert!(back
        .iter()
        .filter(|x| x.tree_only)
        .all(|x| x.moves.is_empty() && x.policy.is_empty() && x.search_value == -0.625));
    // A tree-only sample with a policy target is an error naming the sample.
    let mut w = WireSample::from_sample(tree[0]);
    w.v2.moves = vec![tree[0].position.legal_moves(&tree[0].rules)[0].to_bits()];
    w.v2.policy = vec![1.0];
    let raw = postcard::to_allocvec(&vec![w]).unwrap();
    let e = decode_shard(Path::new("t.shard"), &frame(FORMAT_VERSION, 1, &raw))
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.shard") && e.contains("tree-only"), "{e}");
}

#[test]
fn version_2_shards_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.shard");
    let old: Vec<Sample> = samples().into_iter().filter(|s| !s.tree_only).collect();
    let bytes = encode_v2(&old);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 2);
    assert_ne!(bytes, encode_shard(&old));
    fs::write(&path, &bytes).unwrap();
    let back = read_shard(&path).unwrap();
    assert_eq!(back, without_final_pieces(old));
    assert!(back.iter().all(|s| !s.tree_only));
    // Read as version 3, the version-2 payload lacks the flag: an error, not garbage.
    let mut b = bytes.clone();
    b[8..12].copy_from_slice(&3u32.to_le_bytes());
    assert!(decode_shard(&path, &b).is_err());
}

/// Shards written by each format version's own writer (`golden/README.md`: versions 1–3
/// built at the commits that wrote them, version 4 by `examples/golden_shard.rs`), read
/// by today's reader exactly as the writer's text file says: position, moves, policy,
/// values, and (version 4) the tree-only flag and final pieces; older versions read as
/// played positions without final pieces.
#[test]
fn golden_shards_read_as_their_writers_wrote() {
    // Where the test runs, not where it was built (cargo sets it for each test process).
    let dir = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .expect("CARGO_MANIFEST_DIR: run the tests with cargo"),
    )
    .join("src/data/golden");
    for version in OLDEST_READABLE_VERSION..=FORMAT_VERSION {
        let shard = dir.join(format!("v{version}.shard"));
        let bytes = fs::read(&shard).unwrap_or_else(|e| panic!("{}: {e}", shard.display()));
        assert_eq!(
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
            version
        );
        let samples = read_shard(&shard).unwrap();
        let text = fs::read_to_string(dir.join(format!("v{version}.txt"))).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(samples.len(), lines.len(), "v{version}");
        let mut variants: Vec<Variant> = samples.iter().map(|s| s.position.variant()).collect();
        variants.dedup();
        assert!(variants.len() >= 3, "v{version}: {variants:?}");
        for (i, (s, line)) in samples.iter().zip(lines).enumerate() {
            let at = format!("v{version} sample {i}");
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(s.position.to_text(), f[0], "{at}");
            let moves: Vec<String> = s.moves.iter().map(|m| m.to_string()).collect();
            assert_eq!(moves.join(" "), f[1], "{at}");
            let policy: Vec<f32> = f[2]
                .split_whitespace()
                .map(|p| p.parse().unwrap())
                .collect();
            assert_eq!(s.policy, policy, "{at}");
            assert_eq!(s.search_value, f[3].parse::<f32>().unwrap(), "{at}");
            assert_eq!(s.outcome, f[4].parse::<f32>().unwrap(), "{at}");
            assert_eq!(s.rules, Rules::classic(), "{at}");
            let tree_only = f.get(5).is_some_and(|t| *t == "true");
            assert_eq!(s.tree_only, tree_only, "{at}");
            let final_pieces = f.get(6).filter(|p| **p != "-").and_then(|p| {
                let w: Vec<u64> = p
                    .split_whitespace()
                    .map(|x| u64::from_str_radix(x, 16).unwrap())
                    .collect();
                (w.len() == 2).then(|| [w[0], w[1]])
            });
            assert_eq!(s.final_pieces, final_pieces, "{at}");
        }
    }
}

#[test]
fn version_1_shards_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.shard");
    let old: Vec<Sample> = samples()
        .into_iter()
        .filter(|s| {
            !s.tree_only
                && [Variant::Standard, Variant::ScrambledEggs, Variant::Six]
                    .contains(&s.position.variant())
        })
        .collect();
    assert_eq!(old.len(), 30);
    let bytes = encode_v1(&old);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 1);
    assert_ne!(bytes, encode_shard(&old));
    fs::write(&path, &bytes).unwrap();
    assert_eq!(read_shard(&path).unwrap(), without_final_pieces(old));
    // A version-1 sample of a variant with extra state gets `Position::new`'s.
    let p = Position::start(Variant::Parachute, &Rules::classic());
    let sample = Sample {
        position: p,
        rules: Rules::classic(),
        moves: p.legal_moves(&Rules::classic()).to_vec(),
        policy: vec![],
        search_value: 0.0,
        outcome: 0.0,
        tree_only: false,
        final_pieces: None,
    };
    let back = decode_shard(&path, &encode_v1(std::slice::from_ref(&sample))).unwrap();
    assert_eq!(back, vec![sample]);
    // Unknown versions are errors naming the file.
    for version in [0u32, FORMAT_VERSION + 1] {
        let mut b = bytes.clone();
        b[8..12].copy_from_slice(&version.to_le_bytes());
        let e = decode_shard(&path, &b).unwrap_err();
        assert!(e.to_string().contains("v1.shard"), "{e}");
        assert!(e.to_string().contains("version"), "{e}");
    }
}

/// The sample count is outside the checksum: an absurd count, or more data than the
/// count allows, is an error naming the file (never an allocation of the claimed size).
#[test]
fn absurd_sample_counts_are_errors() {
    let path = Path::new("dir/huge.shard");
    let good = encode_shard(&samples());
    for count in [u32::MAX, (MAX_SHARD_SAMPLES + 1) as u32] {
        let mut b = good.clone();
        b[12..16].copy_from_slice(&count.to_le_bytes());
        let e = decode_shard(path, &b).unwrap_err().to_string();
        assert!(e.contains("huge.shard") && e.contains("samples"), "{e}");
    }
    // More decompressed bytes than one claimed sample may take (above the 1 MiB floor).
    let big = vec![0u8; (1 << 20) + 10];
    let e = decode_shard(path, &frame(FORMAT_VERSION, 1, &big))
        .unwrap_err()
        .to_string();
    assert!(e.contains("huge.shard") && e.contains("more than"), "{e}");
}

#[test]
fn impossible_extra_state_is_an_error_naming_the_file() {
    let path = Path::new("dir/bad.shard");
    let rules = Rules::classic();
    let good = |v: Variant| {
        let p = Position::start(v, &rules);
        Sample {
            position: p,
            rules,
            moves: p.legal_moves(&rules).to_vec(),
            policy: vec![],
            search_value: 0.0,
            outcome: 0.0,
            tree_only: false,
            final_pieces: None,
        }
    };
    let patch = |v: Variant, f: &dyn Fn(&mut WireSample)| {
        let mut w = WireSample::from_sample(&good(v));
        f(&mut w);
        let raw = postcard::to_allocvec(&vec![w]).unwrap();
        decode_shard(path, &frame(FORMAT_VERSION, 1, &raw))
    };
    assert!(patch(Variant::Gemma, &|_| {}).is_ok());
    type Patch = fn(&mut WireSample);
    let cases: [(Variant, Patch); 5] = [
        (Variant::Standard, |w| w.v2.vanished = 1 << 20),
        (Variant::Gemma, |w| {
            w.v2.vanished = w.v2.black & w.v2.black.wrapping_neg()
        }),
        (Variant::Standard, |w| w.v2.reserve = [1, 0]),
        (Variant::Parachute, |w| w.v2.reserve = [7, 0]),
        (Variant::Ambiloa, |w| w.v2.seat = 2),
    ];
    for (v, f) in cases {
        let e = patch(v, &f).unwrap_err();
        assert!(e.to_string().contains("bad.shard"), "{e}");
        assert!(e.to_string().contains("sample 0"), "{e}");
    }
}

#[test]
fn illegal_moves_and_bad_policies_are_errors_naming_the_sample() {
    let path = Path::new("dir/bad.shard");
    let rules = Rules::classic();
    let p = Position::start(Variant::Standard, &rules);
    let moves = p.legal_moves(&rules).to_vec();
    let patch = |f: &dyn Fn(&mut WireSample)| {
        let mut w = WireSample::from_sample(&Sample {
            position: p,
            rules,
            moves: moves.clone(),
            policy: vec![1.0 / moves.len() as f32; moves.len()],
            search_value: 0.0,
            outcome: 0.0,
            tree_only: false,
            final_pieces: None,
        });
        f(&mut w);
        let raw = postcard::to_allocvec(&vec![w]).unwrap();
        decode_shard(path, &frame(FORMAT_VERSION, 1, &raw))
    };
    assert!(patch(&|_| {}).is_ok());
    // A pass where there are moves, a step of an empty square, a policy entry
    // outside [0, 1] and a NaN one: a trainer would map these to wrong targets.
    type Patch = fn(&mut WireSample);
    let cases: [(Patch, &str); 4] = [
        (|w| w.v2.moves[0] = Move::PASS.to_bits(), "not legal"),
        (
            |w| w.v2.moves[0] = Move::new(27, 35, false).to_bits(),
            "not legal",
        ),
        (|w| w.v2.policy[0] = 1.5, "outside [0, 1]"),
        (|w| w.v2.policy[1] = f32::NAN, "outside [0, 1]"),
    ];
    for (f, what) in cases {
        let e = patch(&f).unwrap_err().to_string();
        assert!(e.contains("bad.shard") && e.contains("sample 0"), "{e}");
        assert!(e.contains(what), "{e}");
    }
}

#[test]
fn every_truncation_and_bit_flip_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.shard");
    let bytes = encode_shard(&samples());
    for len in 0..bytes.len() {
        let e = decode_shard(&path, &bytes[..len]).unwrap_err();
        assert!(
            e.to_string().contains("b.shard"),
            "truncation to {len}: {e}"
        );
    }
    let mut b = bytes.clone();
    for i in 0..bytes.len() {
        for bit in 0..8 {
            b[i] ^= 1 << bit;
            assert!(
                decode_shard(&path, &b).is_err(),
                "flip of bit {bit} of byte {i} undetected"
            );
            b[i] ^= 1 << bit;
        }
    }
}

#[test]
fn directory_reader_skips_bad_shards_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let s = samples();
    let good_old = dir.path().join("old.shard");
    write_shard(&good_old, &s[..5]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let bad = dir.path().join("bad.shard");
    let bytes = encode_shard(&s);
    fs::write(&bad, &bytes[..bytes.len() - 10]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let good_new = dir.path().join("new.shard");
    write_shard(&good_new, &s[5..8]).unwrap();
    fs::write(dir.path().join("notes.txt"), "x").unwrap();
    fs::write(dir.path().join(".x.shard.tmp.1.1"), "x").unwrap();

    let list = list_shards(dir.path()).unwrap();
    assert_eq!(list, vec![good_new.clone(), bad.clone(), good_old.clone()]);
    let scan = read_recent_shards(dir.path(), None).unwrap();
    assert_eq!(scan.samples.len(), 8);
    assert_eq!(scan.samples[..3], s[5..8]);
    assert_eq!(scan.shards, vec![good_new, good_old]);
    assert_eq!(scan.skipped.len(), 1);
    assert_eq!(scan.skipped[0].path(), Some(bad.as_path()));
    let scan = read_recent_shards(dir.path(), Some(2)).unwrap();
    assert_eq!(scan.samples.len(), 3);
    assert!(list_shards(&dir.path().join("missing")).unwrap().is_empty());
}
