//! Writes a freshly initialised model file: `init_model PRESET VARIANT PATH`
//! (e.g. `cargo run --release -p train --example init_model cpu standard net.model`).

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        anyhow::bail!("usage: init_model PRESET(cpu|gpu) VARIANT PATH");
    }
    let net = train::NetConfig::preset(&args[1])?;
    let variant: loa::Variant = args[2].parse().map_err(anyhow::Error::msg)?;
    let model = train::Model::new(train::ModelInfo::new(&net, variant), tch::Device::Cpu);
    model.save(std::path::Path::new(&args[3]))?;
    println!("wrote {}", args[3]);
    Ok(())
}
