//! Training batches: samples (each under one board symmetry) → input planes, policy
//! targets over the policy vector, legal-move masks, win/draw/loss value targets and
//! final-occupancy targets.

use crate::encoding::{encode_into, input_len, same_layout, PlaneSet};
use crate::input_tensor;
use crate::policy::{policy_size, transform_policy_index, PolicyIndex};
use anyhow::{bail, Result};
use loa::Variant;
use selfplay::data::Sample;
use tch::{Device, Kind, Tensor};

/// One training batch, on the CPU until [`Batch::to_device`].
pub struct Batch {
    /// `u8 [B, planes, N, N]`.
    pub input: Tensor,
    /// `f32 [B, P]`: the visit distribution (sums to 1 where `policy_weight` is 1).
    pub policy_target: Tensor,
    /// `bool [B, P]`: the legal moves (illegal logits are masked before the softmax).
    pub legal: Tensor,
    /// `f32 [B]`: 1 for samples with a policy target (full searches), else 0.
    pub policy_weight: Tensor,
    /// `f32 [B, 3]`: win/draw/loss target probabilities.
    pub wdl_target: Tensor,
    /// `f32 [B]`: the scalar value target in `[-1, 1]`.
    pub value_target: Tensor,
    /// `f32 [B, 3, N, N]`: what stood on each board cell when the sample's game ended,
    /// one-hot over (empty, own piece, opponent's piece) for the side to move, under the
    /// sample's symmetry ([`Sample::final_pieces`]); all zeros on grid cells off the board
    /// and for samples without final pieces, so that a sum over it counts the cells with
    /// a target.
    pub occupancy_target: Tensor,
}

impl Batch {
    /// Moves every tensor to `device`.
    pub fn to_device(&self, device: Device) -> Batch {
        Batch {
            input: self.input.to_device(device),
            policy_target: self.policy_target.to_device(device),
            legal: self.legal.to_device(device),
            policy_weight: self.policy_weight.to_device(device),
            wdl_target: self.wdl_target.to_device(device),
            value_target: self.value_target.to_device(device),
            occupancy_target: self.occupancy_target.to_device(device),
        }
    }
}

/// The win/draw/loss distribution with expectation `z` and the least draw mass:
/// `[max(z, 0), 1 − |z|, max(−z, 0)]`.
pub fn wdl_of(z: f32) -> [f32; 3] {
    let z = z.clamp(-1.0, 1.0);
    [z.max(0.0), 1.0 - z.abs(), (-z).max(0.0)]
}

/// Builds a batch from `samples[i]` seen under board symmetry `symmetries[i]`
/// (`0..geometry.num_symmetries`: 8 on square boards, 12 on the hexagonal one), for a
/// network of `variant`'s layout with input `plane_set`. Value target: `(1 − w) · outcome + w · search_value`
/// with `w = search_value_weight`, for the side (team) to move; for a tree-only sample
/// (Descent's tree learning, no game outcome) its `search_value` alone. A sample without
/// a policy target (an empty `policy`: a cheap search's or a tree-only one) gets
/// `policy_weight` 0, which masks it out of the policy loss. Occupancy target: the
/// sample's final pieces mapped by its symmetry (none without them). Errors: lengths
/// differ, a sample of another layout, a symmetry out of range.
pub fn make_batch(
    samples: &[&Sample],
    symmetries: &[usize],
    variant: Variant,
    plane_set: PlaneSet,
    search_value_weight: f32,
) -> Result<Batch> {
    if samples.len() != symmetries.len() {
        bail!(
            "{} samples but {} symmetries",
            samples.len(),
            symmetries.len()
        );
    }
    let g = variant.geometry();
    let b = samples.len();
    let n = g.size as usize;
    let plen = policy_size(variant);
    let ilen = input_len(variant, plane_set);
    let mut input = vec![0u8; b * ilen];
    let mut policy = vec![0f32; b * plen];
    let mut legal = vec![false; b * plen];
    let mut weight = vec![0f32; b];
    let mut wdl = vec![0f32; b * 3];
    let mut value = vec![0f32; b];
    let cells = n * n;
    let mut occupancy = vec![0f32; b * 3 * cells];
    for (i, (s, &sym)) in samples.iter().zip(symmetries).enumerate() {
        let pos = &s.position;
        if !same_layout(variant, pos.variant()) {
            bail!(
                "sample {i} is a {} position; the batch is for {variant}'s layout",
                pos.variant()
            );
        }
        if sym >= g.num_symmetries as usize {
            bail!(
                "symmetry {sym} of sample {i}: {variant} has {}",
                g.num_symmetries
            );
        }
        encode_into(
            &pos.transformed(sym),
            plane_set,
            &mut input[i * ilen..(i + 1) * ilen],
        );
        let row = i * plen;
        let mut mass = 0.0;
        for (j, &mv) in s.moves.iter().enumerate() {
            let Some(idx) = pos.policy_index(mv) else {
                continue;
            };
            let k = transform_policy_index(pos.variant(), idx, sym);
            legal[row + k] = true;
            if let Some(&p) = s.policy.get(j) {
                policy[row + k] += p;
                mass += p;
            }
        }
        if mass > 0.0 {
            for x in &mut policy[row..row + plen] {
                *x /= mass;
            }
            weight[i] = 1.0;
        }
        let z = if s.tree_only {
            s.search_value
        } else {
            (1.0 - search_value_weight) * s.outcome + search_value_weight * s.search_value
        };
        wdl[i * 3..i * 3 + 3].copy_from_slice(&wdl_of(z));
        value[i] = z.clamp(-1.0, 1.0);
        if let Some([own, opponent]) = s.final_pieces {
            let pg = pos.geometry();
            let (own, opponent) = (pg.map_bitboard(sym, own), pg.map_bitboard(sym, opponent));
            let classes = [pg.cells & !own & !opponent, own, opponent];
            for (class, set) in classes.into_iter().enumerate() {
                let plane = (i * 3 + class) * cells;
                for cell in pg.grid_cells(set) {
                    occupancy[plane + cell] = 1.0;
                }
            }
        }
    }
    let (bi, ni) = (b as i64, n as i64);
    Ok(Batch {
        input: input_tensor::from_encoded(&input, variant, plane_set)?,
        policy_target: Tensor::from_slice(&policy).view([bi, plen as i64]),
        legal: Tensor::from_slice(&legal).view([bi, plen as i64]),
        policy_weight: Tensor::from_slice(&weight),
        wdl_target: Tensor::from_slice(&wdl).view([bi, 3]),
        value_target: Tensor::from_slice(&value),
        occupancy_target: Tensor::from_slice(&occupancy).view([bi, 3, ni, ni]),
    })
}

/// Masks illegal moves' logits with a large negative number (finite, so an all-illegal
/// row — a forced pass — stays NaN-free).
pub fn mask_logits(logits: &Tensor, legal: &Tensor) -> Tensor {
    logits
        .to_kind(Kind::Float)
        .masked_fill(&legal.logical_not(), -1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::num_planes;
    use loa::{Position, Rules, Variant};

    #[test]
    fn targets_follow_symmetries() {
        let rules = Rules::classic();
        let pos = Position::start(Variant::Standard, &rules);
        let moves = pos.legal_moves(&rules).to_vec();
        let mut policy = vec![0.0; moves.len()];
        policy[5] = 0.75;
        policy[9] = 0.25;
        let s = Sample {
            position: pos,
            rules,
            moves: moves.clone(),
            policy,
            search_value: 0.5,
            outcome: -1.0,
            tree_only: false,
            final_pieces: None,
        };
        let no_policy = Sample {
            policy: vec![],
            ..s.clone()
        };
        for sym in 0..8 {
            let b = make_batch(
                &[&s, &no_policy],
                &[sym, sym],
                Variant::Standard,
                PlaneSet::Board,
                0.5,
            )
            .unwrap();
            let t = pos.transformed(sym);
            let target = Vec::<f32>::try_from(b.policy_target.get(0)).unwrap();
            let legal = Vec::<bool>::try_from(b.legal.get(0)).unwrap();
            assert_eq!(legal.iter().filter(|&&x| x).count(), moves.len());
            let k5 = t.policy_index(pos.transform_move(moves[5], sym)).unwrap();
            let k9 = t.policy_index(pos.transform_move(moves[9], sym)).unwrap();
            assert_eq!(target[k5], 0.75);
            assert_eq!(target[k9], 0.25);
            assert!((target.iter().sum::<f32>() - 1.0).abs() < 1e-6);
            let input = Vec::<u8>::try_from(b.input.get(0).flatten(0, -1)).unwrap();
            assert_eq!(input, crate::encoding::encode(&t, PlaneSet::Board));
            let w = Vec::<f32>::try_from(b.policy_weight.shallow_clone()).unwrap();
            assert_eq!(w, vec![1.0, 0.0]);
            // z = 0.5 * -1 + 0.5 * 0.5 = -0.25.
            let wdl = Vec::<f32>::try_from(b.wdl_target.get(1)).unwrap();
            assert_eq!(wdl, vec![0.0, 0.75, 0.25]);
        }
        assert_eq!(wdl_of(1.0), [1.0, 0.0, 0.0]);
        assert_eq!(wdl_of(0.0), [0.0, 1.0, 0.0]);
        // Bad input is an error: a 6x6 sample, a symmetry out of range, lengths.
        let six = Sample {
            position: Position::start(Variant::Six, &rules),
            moves: vec![],
            policy: vec![],
            ..s.clone()
        };
        assert!(make_batch(&[&six], &[0], Variant::Standard, PlaneSet::Board, 0.0).is_err());
        assert!(make_batch(&[&s], &[8], Variant::Standard, PlaneSet::Board, 0.0).is_err());
        assert!(make_batch(&[&s], &[], Variant::Standard, PlaneSet::Board, 0.0).is_err());
    }

    /// The occupancy target is the final pieces under the sample's symmetry, one-hot
    /// over (empty, own, opponent) on exactly the board's cells, on every board shape;
    /// a sample without final pieces has no target.
    #[test]
    fn occupancy_targets_follow_symmetries() {
        let rules = Rules::classic();
        for variant in Variant::ALL {
            let g = variant.geometry();
            let (n, cells) = (g.size as usize, (g.size as usize).pow(2));
            let start = Position::start(variant, &rules);
            let mut last = start;
            for k in 0..7 {
                let moves = last.legal_moves(&rules);
                last.play(moves[(k * 3 + 2) % moves.len()]);
            }
            let with = Sample {
                final_pieces: Some(Sample::final_pieces_of(&last, last.to_move())),
                ..spread_sample(start)
            };
            let without = spread_sample(start);
            let syms: Vec<usize> = (0..g.num_symmetries as usize).collect();
            let refs = vec![&with; syms.len()];
            let b = make_batch(&refs, &syms, variant, PlaneSet::Board, 0.0).unwrap();
            assert_eq!(
                b.occupancy_target.size(),
                [syms.len() as i64, 3, n as i64, n as i64]
            );
            for &sym in &syms {
                let t = Vec::<f32>::try_from(b.occupancy_target.get(sym as i64).flatten(0, -1))
                    .unwrap();
                // Own and opponent: the input planes `own` and `opponent` of the last
                // position (whose side to move the target was taken for) under `sym`.
                let planes = crate::encoding::encode(&last.transformed(sym), PlaneSet::Board);
                for cell in 0..cells {
                    assert_eq!(t[cells + cell], planes[cell] as f32, "{variant} {sym}");
                    assert_eq!(t[2 * cells + cell], planes[cells + cell] as f32);
                    let on_board = g.grid_square[cell] != loa::geometry::NO_SQUARE;
                    let classes = t[cell] + t[cells + cell] + t[2 * cells + cell];
                    assert_eq!(classes, on_board as u8 as f32, "{variant} cell {cell}");
                }
            }
            let b = make_batch(&[&without], &[0], variant, PlaneSet::Board, 0.0).unwrap();
            assert_eq!(b.occupancy_target.sum(Kind::Float).double_value(&[]), 0.0);
        }
    }

    /// A sample with a policy spread over every legal move of `pos`, the weights
    /// 1, 2, 3, … in move order (normalised).
    fn spread_sample(pos: Position) -> Sample {
        let rules = Rules::classic();
        let moves = pos.legal_moves(&rules).to_vec();
        let total: f32 = (1..=moves.len()).map(|k| k as f32).sum();
        Sample {
            position: pos,
            rules,
            policy: (1..=moves.len()).map(|k| k as f32 / total).collect(),
            moves,
            search_value: 0.0,
            outcome: 1.0,
            tree_only: false,
            final_pieces: None,
        }
    }

    /// Augmentation on the hexagonal board (12 symmetries) and in parachute (drops):
    /// every symmetry's planes are the transformed position's and every move's target
    /// sits at the transformed move's index; no target or legal entry lies off the board.
    #[test]
    fn augmentation_for_hex_and_parachute() {
        let rules = Rules::classic();
        for variant in [Variant::Alveole, Variant::Parachute] {
            let g = variant.geometry();
            let cells = (g.size as usize).pow(2);
            let mut pos = Position::start(variant, &rules);
            let mut samples = vec![];
            for k in 0..9 {
                samples.push(spread_sample(pos));
                let moves = pos.legal_moves(&rules);
                pos.play(moves[(k * 5 + 1) % moves.len()]);
            }
            if variant == Variant::Parachute {
                assert!(samples.iter().any(|s| s.position.drop_pending()));
            }
            let syms: Vec<usize> = (0..g.num_symmetries as usize).collect();
            for s in &samples {
                let refs = vec![s; syms.len()];
                let b = make_batch(&refs, &syms, variant, PlaneSet::Board, 0.0).unwrap();
                assert_eq!(
                    b.input.size(),
                    vec![
                        syms.len() as i64,
                        num_planes(variant, PlaneSet::Board) as i64,
                        g.size as i64,
                        g.size as i64
                    ]
                );
                for &sym in &syms {
                    let t = s.position.transformed(sym);
                    let input =
                        Vec::<u8>::try_from(b.input.get(sym as i64).flatten(0, -1)).unwrap();
                    assert_eq!(input, crate::encoding::encode(&t, PlaneSet::Board));
                    let target = Vec::<f32>::try_from(b.policy_target.get(sym as i64)).unwrap();
                    let legal = Vec::<bool>::try_from(b.legal.get(sym as i64)).unwrap();
                    assert_eq!(legal.iter().filter(|&&x| x).count(), s.moves.len());
                    for (mv, p) in s.moves.iter().zip(&s.policy) {
                        let k = t.policy_index(s.position.transform_move(*mv, sym)).unwrap();
                        assert!((target[k] - p).abs() < 1e-6, "{variant} {mv} sym {sym}");
                        assert!(legal[k]);
                        if mv.is_drop() {
                            assert_eq!(k / cells, g.directions() as usize);
                        }
                    }
                    for (k, &l) in legal.iter().enumerate() {
                        if g.grid_square[k % cells] == loa::geometry::NO_SQUARE {
                            assert!(!l && target[k] == 0.0);
                        }
                    }
                }
            }
        }
    }
}
