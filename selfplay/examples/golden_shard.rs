//! Writes the golden shard of this build's format version and a text file of what each of
//! its samples holds: `cargo run --release -p selfplay --example golden_shard -- DIR`
//! writes `DIR/vN.shard` and `DIR/vN.txt`. The fixtures in `src/data/golden/` were made by
//! the writers of each version (this program, or for versions 1–3 the same recipe built at
//! the commits that wrote them: `src/data/golden/README.md`), and today's reader must read
//! them as their text files say (`shard::tests::golden_shards_read_as_their_writers_wrote`).
//! When the format changes, add the new version's pair with this program before changing
//! the writer any further.

use loa::{Position, Rules, Variant};
use selfplay::data::FORMAT_VERSION;
use selfplay::Sample;

fn main() {
    let out = std::path::PathBuf::from(std::env::args().nth(1).expect("usage: golden_shard DIR"));
    let rules = Rules::classic();
    let mut samples = Vec::new();
    let mut lines = Vec::new();
    for (vi, variant) in Variant::ALL.iter().enumerate() {
        let mut pos = Position::start(*variant, &rules);
        for ply in 0..3usize {
            let moves: Vec<loa::Move> = pos.legal_moves(&rules).as_slice().to_vec();
            if moves.is_empty() {
                break;
            }
            let n = moves.len();
            let total = (n * (n + 1) / 2) as f32;
            // Every third sample is tree-only (a value target alone: no moves, no policy),
            // and of the others every second is value-only (its moves, no policy).
            let tree_only = (vi + ply) % 3 == 2;
            let policy: Vec<f32> = if tree_only || (vi + ply) % 2 == 1 {
                Vec::new()
            } else {
                (0..n).map(|i| (i + 1) as f32 / total).collect()
            };
            let searched = if tree_only { Vec::new() } else { moves.clone() };
            let search_value = ((vi * 7 + ply * 3) % 11) as f32 / 10.0 - 0.5;
            let outcome = [1.0f32, 0.0, -1.0][(vi + ply) % 3];
            let final_pieces = (!tree_only).then(|| Sample::final_pieces_of(&pos, pos.to_move()));
            lines.push(format!(
                "{}\t{}\t{}\t{:?}\t{:?}\t{}\t{}",
                pos.to_text(),
                searched
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                policy
                    .iter()
                    .map(|p| format!("{p:?}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                search_value,
                outcome,
                tree_only,
                final_pieces.map_or("-".into(), |[a, b]| format!("{a:x} {b:x}")),
            ));
            samples.push(Sample {
                position: pos,
                rules,
                moves: searched,
                policy,
                search_value,
                outcome,
                tree_only,
                final_pieces,
            });
            pos.play(moves[(ply * 5 + vi) % n]);
        }
    }
    let name = format!("v{FORMAT_VERSION}");
    selfplay::write_shard(&out.join(format!("{name}.shard")), &samples).expect("write the shard");
    std::fs::write(out.join(format!("{name}.txt")), lines.join("\n") + "\n").expect("write");
    println!("{}: {} samples", out.join(name).display(), samples.len());
}
