//! Devices and the torch runtime: [`selfplay::Device`] (`cpu`/`cuda[:N]`, parsed where
//! configs and specs are read) as torch's device, refusing CUDA where it is not available
//! (never a silent CPU run), threads, and facts for `loazero info`.

use selfplay::Device as DeviceName;
use selfplay::Precision;
use tch::Device;

/// Torch's device for `device` (`cuda` is CUDA device 0). Naming only; see
/// [`resolve_device`] for availability.
pub fn torch_device(device: DeviceName) -> Device {
    match device {
        DeviceName::Cpu => Device::Cpu,
        DeviceName::Cuda(n) => Device::Cuda(n.unwrap_or(0)),
    }
}

/// Torch's device for `device`, checked to exist: asking for CUDA on a machine (or a
/// torch build) without it is an error that says so.
pub fn resolve_device(device: DeviceName) -> anyhow::Result<Device> {
    let name = device;
    let device = torch_device(device);
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

/// A concrete [`selfplay::Precision`] on a torch device: the tensor kind it computes in.
/// `auto` is resolved before, by measuring on the CPU, with the network it runs
/// ([`crate::auto_precision::inference_precision`],
/// [`crate::auto_precision::training_precision`]); here an unresolved `Auto` counts as
/// `float`.
pub trait PrecisionOn {
    /// The tensor kind of inference or training on `device` (`Float` for fp32).
    fn kind_on(self, device: Device) -> tch::Kind;
    /// The tensor kind on `device` when it is below fp32; `None` for fp32.
    fn lower_kind(self, device: Device) -> Option<tch::Kind>;
}

impl PrecisionOn for Precision {
    fn kind_on(self, device: Device) -> tch::Kind {
        self.lower_kind(device).unwrap_or(tch::Kind::Float)
    }

    fn lower_kind(self, _device: Device) -> Option<tch::Kind> {
        match self {
            Precision::Auto | Precision::Float => None,
            Precision::Half => Some(tch::Kind::Half),
            Precision::Bfloat16 => Some(tch::Kind::BFloat16),
        }
    }
}

/// Holds torch's global RNG for the calling thread ([`torch_rng_lock`]) until dropped.
pub struct TorchRngGuard {
    guard: Option<std::sync::MutexGuard<'static, ()>>,
}

thread_local! {
    static HOLDS_TORCH_RNG: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Serialises the uses of torch's process-wide RNG that must not interleave with another
/// thread's: seeding it and drawing a network's initial weights from it
/// ([`crate::Trainer::new`]), and `auto` precision's throw-away networks and re-seeding
/// ([`crate::auto_precision::keeping_the_rng_stream`]). Reentrant: a thread that holds it
/// takes it again at no cost.
pub fn torch_rng_lock() -> TorchRngGuard {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    if HOLDS_TORCH_RNG.with(|h| h.get()) {
        return TorchRngGuard { guard: None };
    }
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    HOLDS_TORCH_RNG.with(|h| h.set(true));
    TorchRngGuard { guard: Some(guard) }
}

impl Drop for TorchRngGuard {
    fn drop(&mut self) {
        if self.guard.take().is_some() {
            HOLDS_TORCH_RNG.with(|h| h.set(false));
        }
    }
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
    fn torch_devices() {
        assert_eq!(torch_device(DeviceName::Cpu), Device::Cpu);
        assert_eq!(torch_device(DeviceName::Cuda(None)), Device::Cuda(0));
        assert_eq!(torch_device(DeviceName::Cuda(Some(1))), Device::Cuda(1));
    }

    #[test]
    fn cuda_without_cuda_is_an_error() {
        assert_eq!(resolve_device(DeviceName::Cpu).unwrap(), Device::Cpu);
        if !tch::Cuda::is_available() {
            let err = resolve_device(DeviceName::Cuda(None))
                .unwrap_err()
                .to_string();
            assert!(err.contains("CUDA is not available"), "{err}");
        }
    }

    #[test]
    fn the_torch_rng_lock_is_reentrant_and_exclusive() {
        let outer = torch_rng_lock();
        let inner = torch_rng_lock();
        drop(inner);
        let taken = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                let _g = torch_rng_lock();
                taken.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!taken.load(std::sync::atomic::Ordering::SeqCst));
            drop(outer);
            h.join().unwrap();
        });
        assert!(taken.load(std::sync::atomic::Ordering::SeqCst));
        drop(torch_rng_lock());
    }

    #[test]
    fn torch_is_found() {
        assert!(loaded_torch_lib_dir().is_some());
        let v = torch_version().unwrap();
        assert!(v.starts_with("2."), "{v}");
    }
}
