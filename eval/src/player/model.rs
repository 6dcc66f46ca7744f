//! The `model` kind: MCTS ([`super::mcts`]) with a trained network's policy and values.
//! The binary supplies the network loader ([`super::PlayerFactory::with_model_loader`]) so
//! that this crate stays free of torch.
//!
//! Model players search a fixed number of simulations with the Gumbel root unless
//! `gumbel=off`: it is how their networks were trained to be searched (self-play's policy
//! targets are the Gumbel root's), and it measured stronger than PUCT at a fixed count
//! (`docs/experiments.md`, batch 4). Against the clock (`ms=T`, the engine's time
//! controls) they search with PUCT unless `gumbel=on`: there PUCT measured stronger
//! (`docs/experiments.md`, play-time search).

use super::kind::{joined, Key, Network, Order, PlayerKind, Serve, Shown, ValueType};
use super::mcts::{self, SearchOptions, SEARCH_KEYS};
use anyhow::anyhow;

/// `path=`: the model file of a player with a network.
pub const PATH: Key = Key {
    name: "path",
    aliases: &[],
    value: ValueType::File,
    default: "",
    help: "the model file (.safetensors)",
    shown: Shown::Always,
    limit: false,
    serve: Serve::ServedFile,
};

/// `device=`: where the network runs.
pub const DEVICE: Key = Key {
    name: "device",
    aliases: &[],
    value: ValueType::Device,
    default: "cpu",
    help: "where the network runs",
    shown: Shown::UnlessDefault,
    limit: false,
    serve: Serve::Only("cpu", "the server runs models on the cpu only"),
};

/// `precision=`: the precision of the network's inference.
pub const PRECISION: Key = Key {
    name: "precision",
    aliases: &[],
    value: ValueType::Precision,
    default: "",
    help: "precision of its inference (default: the command's train.inference.precision)",
    shown: Shown::Always,
    limit: false,
    serve: Serve::Refused("the server chooses the precision of its models"),
};

/// `model:path=P[,sims=N][,ms=T][,device=…][,precision=…][,cpuct=C]...`.
pub static KIND: PlayerKind = PlayerKind {
    name: "model",
    aliases: &[],
    summary: "MCTS with a trained network (Gumbel root at fixed simulations, PUCT against \
              the clock, unless gumbel= says otherwise)",
    keys: &joined::<11>(&[
        &[PATH],
        &SEARCH_KEYS,
        &[super::threads::THREADS, DEVICE, PRECISION],
    ]),
    order: Order::Declared,
    network: Network::Always,
    served: true,
    // The served runs' models are offered by the web app itself.
    opponents: &[],
    complete: |settings| {
        if !settings.has("path") {
            return Err("model needs path=FILE".into());
        }
        mcts::fill_sims(settings)
    },
    build: |spec, factory, seed| {
        let (path, mut net) = spec
            .network()
            .ok_or_else(|| anyhow!("player '{spec}': no path"))?;
        let threads = factory.threads_of(spec);
        net.threads = threads;
        let evaluator = factory.network(spec, path, &net)?;
        let configs = SearchOptions::of(spec).mcts_configs(true);
        mcts::build(spec, evaluator, configs, threads, seed)
    },
};
