//! The arithmetic the learned evaluation runs in: one instruction set chosen at load.
//!
//! The kernels are written once, as plain loops over fixed-size arrays, and compiled three
//! times: with AVX-512 enabled, with AVX2 and FMA enabled, and for the build's baseline (SSE2
//! on x86-64, whatever the target has elsewhere: the "scalar" path). The compiler
//! vectorises each for its instruction set; the float results of the paths may differ in
//! the last bits (FMA rounds once), the integer accumulators never do.

use anyhow::{bail, Result};

/// An instruction-set path of the learned evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    /// The build's baseline instructions (no AVX).
    Scalar,
    /// AVX2 with FMA (every x86-64 laptop of the last decade).
    Avx2,
    /// AVX-512 (F, BW, VL) with FMA.
    Avx512,
}

impl Simd {
    /// Every path, slowest first.
    pub const ALL: [Simd; 3] = [Simd::Scalar, Simd::Avx2, Simd::Avx512];

    /// The name `LOAZERO_SIMD` takes and `info` lines show.
    pub fn name(self) -> &'static str {
        match self {
            Simd::Scalar => "scalar",
            Simd::Avx2 => "avx2",
            Simd::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run the path.
    pub fn available(self) -> bool {
        match self {
            Simd::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => {
                Simd::Avx2.available()
                    && is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512vl")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The fastest path this CPU has.
    pub fn detected() -> Simd {
        *Simd::ALL
            .iter()
            .rev()
            .find(|s| s.available())
            .expect("scalar")
    }

    /// The path `LOAZERO_SIMD` asks for (`auto` or unset: [`Simd::detected`]); errors on an
    /// unknown name or a path this CPU lacks.
    pub fn from_env() -> Result<Simd> {
        match std::env::var("LOAZERO_SIMD") {
            Ok(v) if !v.is_empty() && v != "auto" => Simd::named(&v),
            _ => Ok(Simd::detected()),
        }
    }

    /// The path called `name`, if this CPU has it.
    pub fn named(name: &str) -> Result<Simd> {
        let Some(s) = Simd::ALL.into_iter().find(|s| s.name() == name) else {
            bail!("LOAZERO_SIMD={name}: expected auto, avx512, avx2 or scalar");
        };
        if !s.available() {
            bail!("LOAZERO_SIMD={name}: this CPU lacks the instructions of that path");
        }
        Ok(s)
    }
}
