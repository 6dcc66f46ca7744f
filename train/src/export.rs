//! Export of a model for other tools: `model.safetensors` (the weights as a loazero model
//! file: tensors `net.<layer>`, the model description as safetensors metadata),
//! `model.pt` (a traced TorchScript module whose single output works at any batch size)
//! and `model.json` (the variant's encoding: input planes and scales, grid and cell
//! names, policy planes and index formula, value perspective; tower size and output
//! layout). The traced module is checked against the Rust forward pass at two batch sizes
//! before the files are kept.

use crate::encoding::{input_layout, plane_meaning, PlaneSet, ENCODING_VERSION};
use crate::input_tensor;
use crate::model::{Model, NET_PREFIX};
use crate::policy::{policy_plane_names, policy_size};
use crate::tensor_file;
use anyhow::{bail, Context, Result};
use loa::geometry::{Shape, NO_SQUARE, OFF_BOARD};
use loa::notation::name_on;
use loa::{Player, Position, Rules, Variant};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tch::{CModule, Device, Kind, Tensor};

/// File names inside the export directory.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// The TorchScript module.
pub const TORCHSCRIPT_FILE: &str = "model.pt";
/// The description.
pub const DESCRIPTION_FILE: &str = "model.json";
/// Version of the `model.json` layout.
pub const EXPORT_FORMAT_VERSION: u32 = 2;

/// What [`export`] wrote.
#[derive(Debug)]
pub struct ExportReport {
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Largest absolute difference between the traced module and the Rust forward pass.
    pub max_abs_diff: f64,
}

/// The `board` section: grid, coordinates and the name of every grid cell.
fn describe_board(variant: Variant) -> Value {
    let g = variant.geometry();
    let n = g.size as usize;
    let cells: Vec<Value> = (0..n * n)
        .map(|cell| match g.grid_square[cell] {
            NO_SQUARE => Value::Null,
            sq => Value::String(name_on(sq, g)),
        })
        .collect();
    let (shape, coordinates) = match g.shape {
        Shape::Square => (
            "square",
            "col = file (a = 0), row = rank (1 = 0); every grid cell is a board cell",
        ),
        Shape::Hex => (
            "hex",
            "axial coordinates of the 61-cell hexagon in a 9x9 grid: row = board row (a = 0, \
             bottom), col grows eastwards, the step NE is (col+1, row+1); the 20 grid cells \
             with |col - row| > 4 are off the board (null in `cells`, 0 in every input plane \
             including the validity plane `ones`, never legal in the policy)",
        ),
    };
    json!({
        "shape": shape,
        "size": n,
        "grid_cells": n * n,
        "board_cells": g.num_cells,
        "cell_index": "row * size + col",
        "coordinates": coordinates,
        "validity_plane": "ones",
        "cells": cells,
    })
}

/// The `(col, row)` step of each direction of the variant's board, in direction order.
fn direction_steps(variant: Variant) -> Vec<[i32; 2]> {
    let g = variant.geometry();
    (0..g.directions() as usize)
        .map(|d| {
            (0..64u8)
                .filter(|&sq| g.contains(sq))
                .find_map(|sq| {
                    let to = g.target[sq as usize][d][1];
                    (to != OFF_BOARD).then(|| {
                        let (c1, r1) = g.coords(sq);
                        let (c2, r2) = g.coords(to);
                        [c2 as i32 - c1 as i32, r2 as i32 - r1 as i32]
                    })
                })
                .expect("every direction has a step somewhere on the board")
        })
        .collect()
}

/// Whose value the network's value output is, in words.
fn value_perspective(variant: Variant) -> &'static str {
    match variant {
        Variant::Ambiloa => {
            "the team of the player to move (`own` planes): Black = South + North, White = \
             West + East. A team wins when all its pieces (both players') are connected, so \
             both players of a team share one value; teams alternate every ply (turn order \
             South, West, North, East)"
        }
        Variant::Parachute => {
            "the side to move. A compound turn (a move, then a drop, for each side's first 6 \
             turns) keeps the side to move: between the move and the drop `drop_pending` is 1 \
             and the value is still the mover's"
        }
        _ => "the side to move (`own` plane)",
    }
}

/// The `model.json` description of a model.
pub fn describe(model: &Model) -> Value {
    let variant = model.info.variant;
    let g = variant.geometry();
    let layout = input_layout(variant, model.info.net.plane_set);
    let n = layout.size;
    let p = policy_size(variant);
    let plane_info: Vec<Value> = layout
        .planes
        .iter()
        .zip(&layout.scales)
        .map(|(name, scale)| json!({"name": name, "scale": scale, "meaning": plane_meaning(name)}))
        .collect();
    let directions: Vec<Value> = g
        .direction_names()
        .iter()
        .zip(direction_steps(variant))
        .enumerate()
        .map(|(plane, (name, step))| json!({"plane": plane, "name": name, "step": step}))
        .collect();
    let mut policy = json!({
        "start": 0,
        "len": p,
        "planes": policy_plane_names(variant),
        "index": "plane * size * size + row * size + col, where (col, row) is the cell the \
                  piece moves from (normal moves: plane = direction) or the cell of a drop or \
                  removal",
        "directions": directions,
        "legal": "mask every illegal move (and every off-board cell) before a softmax; a \
                  forced pass has no index",
    });
    if variant.has_drops() {
        policy["drop_plane"] = json!(g.directions());
    }
    if variant.has_vanishing() {
        policy["remove_plane"] = json!(g.directions());
    }
    let mut desc = json!({
        "format": "loazero-export",
        "format_version": EXPORT_FORMAT_VERSION,
        "encoding_version": ENCODING_VERSION,
        "variant": variant.name(),
        "players": variant.players(),
        "board": describe_board(variant),
        "net": model.info.net,
        "step": model.info.step,
        "input": {
            "dtype": "uint8",
            "shape": ["batch", layout.num_planes(), n, n],
            "planes": layout.planes,
            "scale": layout.scales,
            "plane_info": plane_info,
            "note": "side-to-move point of view; planes are scaled inside the module",
        },
        "output": {
            "dtype": "float32",
            "shape": ["batch", p + 4],
            "policy_logits": policy,
            "wdl_logits": {"start": p, "len": 3, "order": ["win", "draw", "loss"]},
            "value": {"start": p + 3, "len": 1, "meaning": "P(win) - P(loss)",
                "perspective": value_perspective(variant)},
        },
        "files": {"weights": WEIGHTS_FILE, "torchscript": TORCHSCRIPT_FILE},
        "weights": {"tensor_prefix": NET_PREFIX, "dtype": "float32",
            "metadata_key": tensor_file::METADATA_KEY,
            "note": "a loazero model file: tensors named net.<layer>, description as safetensors metadata"},
    });
    if variant == Variant::Ambiloa {
        desc["turn_order"] = json!(Player::ALL.map(|p| p.name()));
        desc["teams"] = json!({"black": ["south", "north"], "white": ["west", "east"]});
    }
    desc
}

/// Example inputs: `count` positions of a pseudo-random game of `variant` (a new game
/// starts when one ends), as `u8 [count, planes, size, size]`.
pub fn example_input(variant: Variant, plane_set: PlaneSet, count: usize) -> Tensor {
    let rules = Rules::classic();
    let mut pos = Position::start(variant, &rules);
    let mut positions = Vec::with_capacity(count);
    for k in 0..count {
        positions.push(pos);
        let moves = pos.legal_moves(&rules);
        pos.play(moves[(k * 7 + 3) % moves.len()]);
        if pos.outcome(&rules).is_some() {
            pos = Position::start(variant, &rules);
        }
    }
    input_tensor::of_positions(&positions, variant, plane_set)
        .expect("positions of the variant make whole rows")
}

/// Writes the three export files of the model (or checkpoint) at `model_path` into
/// `out_dir` (created if needed). Each file is written to a temporary name and renamed.
pub fn export(model_path: &Path, out_dir: &Path) -> Result<ExportReport> {
    let mut model = Model::load(model_path, Device::Cpu)?;
    model.vs.freeze();
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let description = describe(&model);
    let text = serde_json::to_string_pretty(&description)?;

    // The weights file is a loazero model file: usable as `--model` and by Python.
    let weights = out_dir.join(WEIGHTS_FILE);
    model.save(&weights)?;

    let _guard = tch::no_grad_guard();
    let example = example_input(model.info.variant, model.info.net.plane_set, 3);
    let net = &model.net;
    let traced = CModule::create_by_tracing(
        "LoaZeroNet",
        "forward",
        std::slice::from_ref(&example),
        &mut |xs| vec![net.forward_export(&xs[0])],
    )
    .context("tracing the network")?;
    let ts = out_dir.join(TORCHSCRIPT_FILE);
    // Written beside the destination and checked as written, at batch sizes other than
    // the traced one, before it replaces anything.
    let check = |tmp: &Path| -> Result<f64> {
        traced
            .save(tmp)
            .with_context(|| format!("writing {}", tmp.display()))?;
        let loaded =
            CModule::load(tmp).with_context(|| format!("reading back {}", tmp.display()))?;
        let mut max_abs_diff = 0f64;
        for count in [1, 5] {
            let x = example_input(model.info.variant, model.info.net.plane_set, count);
            let want = net.forward_export(&x);
            let got = loaded
                .forward_ts(&[&x])
                .context("running the traced module")?;
            if got.size() != want.size() {
                bail!(
                    "traced module output shape {:?} != {:?} at batch {count}",
                    got.size(),
                    want.size()
                );
            }
            let d = (got - want)
                .abs()
                .max()
                .to_kind(Kind::Double)
                .double_value(&[]);
            max_abs_diff = max_abs_diff.max(d);
        }
        if max_abs_diff > 1e-4 {
            bail!("traced module differs from the network by {max_abs_diff}");
        }
        Ok(max_abs_diff)
    };
    let mut max_abs_diff = 0.0;
    selfplay::atomic_file::write_atomically_with(&ts, |tmp| {
        max_abs_diff = check(tmp).map_err(|e| std::io::Error::other(format!("{e:#}")))?;
        Ok(())
    })?;

    let json_path = out_dir.join(DESCRIPTION_FILE);
    selfplay::data::write_atomically(&json_path, format!("{text}\n").as_bytes())?;
    Ok(ExportReport {
        files: vec![weights, ts, json_path],
        max_abs_diff,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NetConfig;
    use crate::model::ModelInfo;
    use crate::policy::PolicyIndex;

    fn tiny() -> NetConfig {
        NetConfig::tiny_pooled()
    }

    #[test]
    fn export_writes_three_files_that_agree() {
        crate::test_threads();
        let dir = tempfile::tempdir().unwrap();
        for variant in Variant::ALL {
            tch::manual_seed(2);
            // One net with an occupancy head: exported like the others, the head left out
            // of the output.
            let net = NetConfig {
                occupancy_head: variant == Variant::Standard,
                ..tiny()
            };
            let model = Model::new(ModelInfo::new(&net, variant), Device::Cpu);
            let path = dir.path().join(format!("{variant}.safetensors"));
            model.save(&path).unwrap();
            let out = dir.path().join(format!("export-{variant}"));
            let report = export(&path, &out).unwrap();
            assert_eq!(report.files.len(), 3);
            assert!(report.max_abs_diff < 1e-5);
            let desc: Value =
                serde_json::from_str(&std::fs::read_to_string(out.join(DESCRIPTION_FILE)).unwrap())
                    .unwrap();
            let n = variant.geometry().size as u64;
            let p = policy_size(variant) as u64;
            assert_eq!(desc["board"]["size"], n);
            assert_eq!(desc["variant"], variant.name());
            assert_eq!(desc["output"]["shape"][1], p + 4);
            assert_eq!(
                desc["input"]["shape"][1],
                input_layout(variant, PlaneSet::Board).num_planes() as u64
            );
            // The weights file is a model file holding every variable.
            let f = tensor_file::read(&out.join(WEIGHTS_FILE)).unwrap();
            assert_eq!(f.tensors.len(), model.vs.variables().len());
            let name = "net.blocks.1.pool_fc.weight";
            assert!(f.tensors.iter().any(|(n, _)| n == name));
            let again = Model::load(&out.join(WEIGHTS_FILE), Device::Cpu).unwrap();
            assert_eq!(again.info, model.info);
            // The TorchScript file runs at batch 7 and agrees with the Rust net.
            let m = CModule::load(out.join(TORCHSCRIPT_FILE)).unwrap();
            let x = example_input(variant, PlaneSet::Board, 7);
            let got = tch::no_grad(|| m.forward_ts(&[&x]).unwrap());
            let want = tch::no_grad(|| model.net.forward_export(&x));
            assert_eq!(got.size(), vec![7, p as i64 + 4]);
            assert!(got.allclose(&want, 1e-5, 1e-5, false));
        }
    }

    /// `model.json` alone is enough to encode moves: the cell names, direction steps and
    /// index formula it states give `policy_index` for every legal move of positions of
    /// each variant, and its planes and scales are the encoder's.
    #[test]
    fn description_states_the_layout() {
        let rules = Rules::classic();
        for variant in Variant::ALL {
            let model = Model::new(ModelInfo::new(&tiny(), variant), Device::Cpu);
            let desc = describe(&model);
            let g = variant.geometry();
            let n = g.size as usize;
            let layout = input_layout(variant, PlaneSet::Board);
            let planes: Vec<&str> = desc["input"]["planes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(planes, layout.planes);
            let scales: Vec<f32> = desc["input"]["scale"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect();
            assert_eq!(scales, layout.scales);
            let cells = desc["board"]["cells"].as_array().unwrap();
            assert_eq!(cells.len(), n * n);
            assert_eq!(
                cells.iter().filter(|c| !c.is_null()).count(),
                g.num_cells as usize
            );
            let cell_of = |name: &str| cells.iter().position(|c| c == name).unwrap();
            let policy = &desc["output"]["policy_logits"];
            let steps: Vec<(i64, i64)> = policy["directions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    (
                        d["step"][0].as_i64().unwrap(),
                        d["step"][1].as_i64().unwrap(),
                    )
                })
                .collect();
            let extra_plane = policy["drop_plane"]
                .as_u64()
                .or(policy["remove_plane"].as_u64());
            let mut pos = Position::start(variant, &rules);
            for k in 0..40 {
                if pos.outcome(&rules).is_some() {
                    break;
                }
                let moves = pos.legal_moves(&rules);
                for &mv in moves.iter().filter(|m| !m.is_pass()) {
                    let from = cell_of(&name_on(mv.from(), g));
                    let index = if mv.is_drop() || mv.is_remove() {
                        extra_plane.unwrap() as usize * n * n + from
                    } else {
                        let to = cell_of(&name_on(mv.to(), g));
                        let (dc, dr) = (
                            (to % n) as i64 - (from % n) as i64,
                            (to / n) as i64 - (from / n) as i64,
                        );
                        let len = dc.abs().max(dr.abs());
                        let plane = steps
                            .iter()
                            .position(|&s| s == (dc / len, dr / len))
                            .unwrap();
                        plane * n * n + from
                    };
                    assert_eq!(Some(index), pos.policy_index(mv), "{variant} {mv}");
                }
                pos.play(moves[(k * 3 + 1) % moves.len()]);
            }
            let persp = desc["output"]["value"]["perspective"].as_str().unwrap();
            if variant == Variant::Ambiloa {
                assert!(persp.contains("team"));
                assert_eq!(desc["turn_order"][1], "west");
            }
            if variant == Variant::Alveole {
                assert_eq!(desc["board"]["shape"], "hex");
                assert!(cells[8].is_null()); // (col 8, row 0) is off the hexagon
                assert_eq!(cells[0], "a1");
                assert_eq!(cells[80], "i5");
            }
        }
    }
}
