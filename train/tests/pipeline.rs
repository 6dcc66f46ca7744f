//! The train crate as the run loop uses it: shards in a directory (one corrupt) →
//! replay window → training steps with metrics → checkpoint and model files → a
//! `NetEvaluator` on the model, hot-swapped to newer weights; for the square board, the
//! hexagonal board (`alveole`) and compound turns with drops (`parachute`).

use loa::{Move, Position, Rules, Variant};
use selfplay::data::{shard_file_name, write_shard, Sample};
use selfplay::{EvalBatch, Evaluator};
use train::metrics::MetricsLog;
use train::{InferenceConfig, NetConfig, NetEvaluator, ReplayWindow, TrainConfig, Trainer};

fn game_samples(variant: Variant, games: usize) -> Vec<Sample> {
    let rules = Rules::classic();
    let mut out = Vec::new();
    for g in 0..games {
        let mut pos = Position::start(variant, &rules);
        let mut k = g;
        let mut game = Vec::new();
        while pos.outcome(&rules).is_none() && pos.ply() < 60 {
            let moves: Vec<Move> = pos.legal_moves(&rules).to_vec();
            let n = moves.len();
            game.push(Sample {
                position: pos,
                rules,
                moves: moves.clone(),
                policy: if k % 4 == 0 {
                    vec![]
                } else {
                    vec![1.0 / n as f32; n]
                },
                search_value: 0.1,
                outcome: 0.0,
                tree_only: false,
                final_pieces: None,
            });
            k = k.wrapping_mul(31).wrapping_add(7);
            pos.play(moves[k % n]);
        }
        let result = pos.outcome(&rules);
        for s in &mut game {
            s.outcome = result.map_or(0.0, |o| o.score_for(s.position.to_move()));
        }
        out.extend(game);
    }
    out
}

#[test]
fn shards_to_trained_model_to_evaluator() {
    tch::set_num_threads(1);
    for variant in [Variant::Standard, Variant::Alveole, Variant::Parachute] {
        pipeline(variant);
    }
}

fn pipeline(variant: Variant) {
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    std::fs::create_dir_all(&shards).unwrap();
    let samples = game_samples(variant, 6);
    if variant == Variant::Parachute {
        assert!(samples.iter().any(|s| s.position.drop_pending()));
        assert!(samples.iter().any(|s| s.moves.iter().any(|m| m.is_drop())));
    }
    let half = samples.len() / 2;
    write_shard(&shards.join(shard_file_name("w0", 0)), &samples[..half]).unwrap();
    write_shard(&shards.join(shard_file_name("w0", 1)), &samples[half..]).unwrap();
    std::fs::write(shards.join("broken.shard"), b"LOAZSHRD\x01\x00").unwrap();

    let config = TrainConfig {
        net: NetConfig::tiny(),
        batch_size: 32,
        threads: 1,
        log_every: 5,
        window_positions: 10_000,
        ..TrainConfig::default()
    };
    let mut window = ReplayWindow::new(config.window_positions, variant);
    let report = window.refresh(&shards).unwrap();
    assert_eq!(report.new_shards, 2);
    assert_eq!(report.skipped.len(), 1);
    assert!(report.skipped[0].to_string().contains("broken.shard"));
    assert_eq!(window.len(), samples.len());

    let mut trainer = Trainer::new(config.clone(), variant).unwrap();
    let mut log = MetricsLog::open(&dir.path().join("metrics.jsonl")).unwrap();
    let summary = trainer.train(&window, 10, Some(&mut log)).unwrap();
    assert_eq!(summary.steps, 10);
    assert!(summary.stats.loss.is_finite());
    let model_path = dir.path().join("models/gen1.safetensors");
    std::fs::create_dir_all(model_path.parent().unwrap()).unwrap();
    trainer.save_model(&model_path).unwrap();
    trainer
        .save_checkpoint(&dir.path().join("checkpoint.safetensors"))
        .unwrap();

    let eval = NetEvaluator::load(&model_path, &InferenceConfig::default()).unwrap();
    assert_eq!(eval.info().step, 10);
    assert_eq!(eval.info().variant, variant);
    let mut batch = EvalBatch::new();
    // The first positions, and (parachute) positions owing a drop.
    for s in samples[..5]
        .iter()
        .chain(samples.iter().filter(|s| s.position.drop_pending()).take(3))
    {
        batch.push(s.position, &s.moves);
    }
    eval.evaluate(&mut batch).unwrap();
    for i in 0..batch.len() {
        let sum: f32 = batch.priors[batch.range(i)].iter().sum();
        assert!((sum - 1.0).abs() < 1e-4, "{variant}: priors sum to {sum}");
    }
    let before = batch.priors.clone();

    // More training, then hot-swap the evaluator's weights from the trainer.
    trainer.train(&window, 5, Some(&mut log)).unwrap();
    eval.set_weights(trainer.weights()).unwrap();
    eval.evaluate(&mut batch).unwrap();
    assert_ne!(before, batch.priors);
    // Also from a file.
    eval.load_weights(&model_path).unwrap();
    eval.evaluate(&mut batch).unwrap();
    assert_eq!(before, batch.priors);

    // Resume from the checkpoint with a new learning rate.
    let resumed = Trainer::resume(
        &dir.path().join("checkpoint.safetensors"),
        Some(TrainConfig {
            lr: 0.001,
            ..config
        }),
    )
    .unwrap();
    assert_eq!(resumed.step(), 10);
    let lines = std::fs::read_to_string(dir.path().join("metrics.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 3);
}

/// The network drives the selfplay crate's MCTS: a few moves of a game, legal each time,
/// on the square and the hexagonal board.
#[test]
fn mcts_plays_with_the_network() {
    tch::set_num_threads(1);
    for variant in [Variant::Standard, Variant::Alveole] {
        mcts_game(variant);
    }
}

fn mcts_game(variant: Variant) {
    tch::manual_seed(5);
    let net = NetConfig::tiny();
    let model = train::Model::new(train::ModelInfo::new(&net, variant), tch::Device::Cpu);
    let eval: std::sync::Arc<dyn Evaluator> = std::sync::Arc::new(
        NetEvaluator::from_weights(
            model.info.clone(),
            model.weights(),
            &InferenceConfig::default(),
            "tiny",
        )
        .unwrap(),
    );
    let mut player = selfplay::MctsPlayer::new(selfplay::MctsConfig::default(), 32, eval);
    let mut game = loa::Game::new(variant, Rules::classic());
    for _ in 0..4 {
        let mv = player.choose_move(&game).unwrap();
        assert!(game.legal_moves().as_slice().contains(&mv));
        game.play(mv).unwrap();
    }
}
