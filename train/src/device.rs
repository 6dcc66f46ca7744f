//! Devices and the torch runtime: parsing `cpu`/`cuda[:N]`, refusing CUDA where it is
//! not available (never a silent CPU run), threads, and facts for `loazero info`.

use tch::Device;

/// Parses a device name: `cpu`, `cuda` (device 0) or `cuda:N`. Syntax only; see
/// [`resolve_device`] for availability.
pub fn parse_device(name: &str) -> anyhow::Result<Device> {
    let name = name.trim().to_ascii_lowercase();
    match name.as_str() {
        "cpu" => Ok(Device::Cpu),
        "cuda" | "gpu" => Ok(Device::Cuda(0)),
        _ => match name.strip_prefix("cuda:") {
            Some(i) => i
                .parse::<usize>()
                .map(Device::Cuda)
                .map_err(|_| anyhow::anyhow!("bad CUDA device index in `{name}`")),
            None => Err(anyhow::anyhow!(
                "unknown device `{name}` (expected cpu, cuda or cuda:N)"
            )),
        },
    }
}

/// Parses a device name and checks that it exists: asking for CUDA on a machine (or a
/// torch build) without it is an error that says so.
pub fn resolve_device(name: &str) -> anyhow::Result<Device> {
    let device = parse_device(name)?;
    if let Device::Cuda(i) = device {
        if !tch::Cuda::is_available() {
            anyhow::bail!(
                "device `{name}` requested but CUDA is not available (torch {}, {} CUDA \
                 devices visible; see `loazero info`)",
                torch_version().unwrap_or_else(|| "?".into()),
                tch::Cuda::device_count()
            );
        }
        let count = tch::Cuda::device_count();
        if i as i64 >= count {
            anyhow::bail!("device `{name}` requested but only {count} CUDA device(s) exist");
        }
    }
    Ok(device)
}

/// A short name of a device for logs: `cpu` or `cuda:N`.
pub fn device_name(device: Device) -> String {
    match device {
        Device::Cpu => "cpu".into(),
        Device::Cuda(i) => format!("cuda:{i}"),
        other => format!("{other:?}").to_ascii_lowercase(),
    }
}

/// Sets torch's intra-op thread count (process-wide) when `threads > 0`.
pub fn set_threads(threads: usize) {
    if threads > 0 {
        tch::set_num_threads(threads as i32);
    }
}

/// The directory of the `libtorch_cpu.so` this process loaded (Linux: from
/// `/proc/self/maps`), if any.
pub fn loaded_torch_lib_dir() -> Option<std::path::PathBuf> {
    // Make sure libtorch is loaded (it is, as soon as any tch function ran).
    let _ = tch::get_num_threads();
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.ends_with("/libtorch_cpu.so"))
        .and_then(|p| std::path::Path::new(p).parent().map(|d| d.to_path_buf()))
}

/// Whether this process loaded torch's CUDA library (`libtorch_cuda.so`): true when
/// the binary is linked right and torch has CUDA support, even without a GPU.
pub fn cuda_library_loaded() -> bool {
    let _ = tch::get_num_threads();
    std::fs::read_to_string("/proc/self/maps")
        .map(|m| m.contains("/libtorch_cuda.so"))
        .unwrap_or(false)
}

/// The version of the loaded torch (`2.11.0+cu130`), read from the `version.py` of the
/// pip package it belongs to; `None` for a libtorch without it.
pub fn torch_version() -> Option<String> {
    let dir = loaded_torch_lib_dir()?;
    let text = std::fs::read_to_string(dir.parent()?.join("version.py")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("__version__ = "))
        .map(|v| v.trim().trim_matches('\'').trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_devices() {
        assert_eq!(parse_device("cpu").unwrap(), Device::Cpu);
        assert_eq!(parse_device("CUDA").unwrap(), Device::Cuda(0));
        assert_eq!(parse_device("cuda:1").unwrap(), Device::Cuda(1));
        assert!(parse_device("cuda:x").is_err());
        assert!(parse_device("tpu").unwrap_err().to_string().contains("tpu"));
    }

    #[test]
    fn cuda_without_cuda_is_an_error() {
        assert_eq!(resolve_device("cpu").unwrap(), Device::Cpu);
        if !tch::Cuda::is_available() {
            let err = resolve_device("cuda").unwrap_err().to_string();
            assert!(err.contains("CUDA is not available"), "{err}");
        }
    }

    #[test]
    fn torch_is_found() {
        assert!(loaded_torch_lib_dir().is_some());
        let v = torch_version().unwrap();
        assert!(v.starts_with("2."), "{v}");
    }
}
