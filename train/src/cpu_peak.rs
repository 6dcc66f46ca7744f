//! The nominal arithmetic peak of the CPU cores inference runs on, so that `bench net`
//! can say what fraction of it the network reaches.
//!
//! Peak = cores × clock × FP32 FLOPs per cycle per core, with
//! * cores: torch's intra-op threads (at most the logical CPUs);
//! * clock: measured on x86-64 by timing a chain of dependent 64-bit integer multiplies
//!   (latency 3 cycles on every Intel core since Sandy Bridge and every AMD Zen), which
//!   sees the turbo clock the code really runs at. (A chain of `add r, imm` does not
//!   work: Intel cores since Golden Cove fold immediate additions at register renaming
//!   and retire several per cycle, which read as a 24 GHz clock here.) elsewhere `cpu MHz` of `/proc/cpuinfo` (often the base clock);
//! * FLOPs per cycle from the vector units: two FMA pipes × lanes × 2 — AVX-512 on Intel
//!   and on AMD Zen 5 (family 26) and later (2 × 16 × 2 = 64), AVX-512 on Zen 4 (which
//!   runs 512-bit instructions on 256-bit pipes) and AVX2 (2 × 8 × 2 = 32), SSE otherwise
//!   (2 × 4 × 2 = 16).
//!
//! The bf16 peak (for `bfloat16` inference): AMX tiles (`amx_bf16`, Intel Sapphire Rapids
//! and later) do one 16 × 32 by 32 × 16 bf16 tile product per 16 cycles, 1024
//! multiply-accumulates = 2048 FLOP per cycle per core; bf16 dot products
//! (`avx512_bf16`) without AMX do twice the fp32 rate; without either, bf16 is converted
//! and runs at the fp32 rate.

/// The peak and how it was derived.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuPeak {
    /// Cores counted.
    pub cores: usize,
    /// Clock in GHz.
    pub ghz: f64,
    /// Where the clock comes from (`measured` or `/proc/cpuinfo`).
    pub clock_source: &'static str,
    /// FP32 FLOPs per cycle per core.
    pub flops_per_cycle: u32,
    /// The vector extension the figure assumes (`avx512`, `avx2` or `sse`).
    pub isa: &'static str,
    /// Whether the CPU has bf16 dot products (`avx512_bf16`).
    pub bf16: bool,
    /// Whether the CPU has AMX bf16 tile products (`amx_bf16`).
    pub amx: bool,
}

impl CpuPeak {
    /// The peak of `cores` cores of this machine, from `/proc/cpuinfo`; `None` where that
    /// file cannot be read or names no clock (not Linux, or an unusual kernel).
    pub fn detect(cores: usize) -> Option<CpuPeak> {
        let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
        let mut peak = CpuPeak::from_cpuinfo(&text, cores)?;
        if let Some(ghz) = measured_clock_ghz() {
            peak.ghz = ghz;
            peak.clock_source = "measured";
        }
        Some(peak)
    }

    /// [`CpuPeak::detect`] on the text of a `/proc/cpuinfo`.
    pub fn from_cpuinfo(text: &str, cores: usize) -> Option<CpuPeak> {
        let field = |name: &str| {
            text.lines()
                .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let mhz: f64 = field("cpu MHz")?.parse().ok()?;
        let flags = field("flags").unwrap_or_default();
        let has = |f: &str| flags.split_whitespace().any(|x| x == f);
        let amd = field("vendor_id").is_some_and(|v| v == "AuthenticAMD");
        let family: u32 = field("cpu family")
            .and_then(|f| f.parse().ok())
            .unwrap_or(0);
        let (isa, flops_per_cycle) = if has("avx512f") && (!amd || family >= 26) {
            ("avx512", 64)
        } else if has("avx512f") {
            ("avx512", 32)
        } else if has("avx2") && has("fma") {
            ("avx2", 32)
        } else {
            ("sse", 16)
        };
        let logical = text.lines().filter(|l| l.starts_with("processor")).count();
        Some(CpuPeak {
            cores: cores.clamp(1, logical.max(1)),
            ghz: mhz / 1000.0,
            clock_source: "/proc/cpuinfo",
            flops_per_cycle,
            isa,
            bf16: has("avx512_bf16"),
            amx: has("amx_bf16") && has("amx_tile"),
        })
    }

    /// Peak FP32 GFLOP/s.
    pub fn gflops(&self) -> f64 {
        self.cores as f64 * self.ghz * self.flops_per_cycle as f64
    }

    /// bf16 FLOPs per cycle per core (see the module docs).
    pub fn bf16_flops_per_cycle(&self) -> u32 {
        if self.amx {
            2048
        } else if self.bf16 {
            2 * self.flops_per_cycle
        } else {
            self.flops_per_cycle
        }
    }

    /// Peak bf16 GFLOP/s.
    pub fn bf16_gflops(&self) -> f64 {
        self.cores as f64 * self.ghz * self.bf16_flops_per_cycle() as f64
    }

    /// One line: the peak and its derivation.
    pub fn describe(&self) -> String {
        format!(
            "{:.0} GFLOP/s fp32 = {} cores x {:.2} GHz ({}) x {} FLOP/cycle ({}); \
             {:.0} GFLOP/s bf16 = x {} FLOP/cycle ({})",
            self.gflops(),
            self.cores,
            self.ghz,
            self.clock_source,
            self.flops_per_cycle,
            self.isa,
            self.bf16_gflops(),
            self.bf16_flops_per_cycle(),
            if self.amx {
                "AMX tiles"
            } else if self.bf16 {
                "avx512_bf16 dot products"
            } else {
                "no bf16 hardware"
            }
        )
    }
}

/// The environment's caps on the instruction sets torch uses: `ONEDNN_MAX_CPU_ISA` (or
/// `DNNL_MAX_CPU_ISA`) and `ATEN_CPU_CAPABILITY`, where set.
pub fn isa_caps() -> (Option<String>, Option<String>) {
    let var = |name: &str| std::env::var(name).ok();
    (
        var("ONEDNN_MAX_CPU_ISA").or_else(|| var("DNNL_MAX_CPU_ISA")),
        var("ATEN_CPU_CAPABILITY"),
    )
}

/// Whether torch computes bf16 in hardware on this machine, which makes bf16 a candidate
/// of `auto` precision's measurement ([`crate::auto_precision`]): the CPU has bf16 dot products (`avx512_bf16`: AMD Zen 4 and later,
/// Intel Cooper Lake) or AMX bf16 tiles (Intel Sapphire Rapids and later), and the
/// environment does not hide them from torch (see [`bf16_in_hardware`]). False where
/// `/proc/cpuinfo` cannot be read. Read once per process.
pub fn has_bf16_hardware() -> bool {
    static BF16: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *BF16.get_or_init(|| {
        let peak = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| CpuPeak::from_cpuinfo(&text, 1));
        let (onednn, aten) = isa_caps();
        peak.is_some_and(|p| bf16_in_hardware(&p, onednn.as_deref(), aten.as_deref()))
    })
}

/// Whether this CPU has AMX bf16 tile products (`amx_bf16` and `amx_tile` in the flags of
/// `/proc/cpuinfo`) that the environment leaves to torch (see [`bf16_in_hardware`]);
/// false where that file cannot be read. Read once per process.
pub fn has_amx_bf16() -> bool {
    static AMX: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AMX.get_or_init(|| {
        has_bf16_hardware()
            && std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|text| CpuPeak::from_cpuinfo(&text, 1))
                .is_some_and(|p| p.amx)
    })
}

/// Whether a CPU of `peak`'s flags computes bf16 in hardware under torch, given the
/// caps of oneDNN (`ONEDNN_MAX_CPU_ISA`, which picks the convolution kernels) and of
/// ATen (`ATEN_CPU_CAPABILITY`, the element-wise kernels): bf16 dot products or AMX
/// tiles, and neither cap below AVX-512 with bf16. A cap is how a user (or the issue's
/// acceptance) stands an AVX2 laptop in for this CPU; under it bf16 would be converted
/// to fp32 and run slower than fp32, so `auto` must not pick it.
pub fn bf16_in_hardware(peak: &CpuPeak, onednn_cap: Option<&str>, aten_cap: Option<&str>) -> bool {
    // oneDNN's ISA names below `AVX512_CORE_BF16` (its `cpu_isa_t` order); any other
    // value (`AVX512_CORE_BF16`, the AMX and AVX10 levels, `ALL`) keeps bf16.
    const ONEDNN_WITHOUT_BF16: [&str; 7] = [
        "SSE41",
        "AVX",
        "AVX2",
        "AVX2_VNNI",
        "AVX2_VNNI_2",
        "AVX512_CORE",
        "AVX512_CORE_VNNI",
    ];
    let onednn_hides = onednn_cap
        .is_some_and(|cap| ONEDNN_WITHOUT_BF16.contains(&cap.trim().to_ascii_uppercase().as_str()));
    // ATen's capabilities: `default`, `avx2`, `avx512`, ... (x86); only the AVX-512 ones
    // (and AMX) run its bf16 kernels on the vector units bf16 needs.
    let aten_hides = aten_cap.is_some_and(|cap| {
        let cap = cap.trim().to_ascii_lowercase();
        !(cap.is_empty() || cap.starts_with("avx512") || cap.starts_with("amx"))
    });
    (peak.bf16 || peak.amx) && !onednn_hides && !aten_hides
}

/// The clock of the core this thread runs on, in GHz: the best of a few timings of a
/// chain of dependent multiplies (latency three cycles). `None` off x86-64.
pub fn measured_clock_ghz() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        const CYCLES_PER_ROUND: u64 = 3 * 100;
        let rounds: u64 = 100_000;
        let mut best = 0f64;
        for _ in 0..5 {
            let start = std::time::Instant::now();
            let mut x: u64 = 1;
            let odd: u64 = 0x9E37_79B9_7F4A_7C15;
            for _ in 0..rounds {
                // SAFETY: register-only arithmetic on `x`; no memory, no stack, flags only.
                unsafe {
                    std::arch::asm!(
                        ".rept 100",
                        "imul {x}, {odd}",
                        ".endr",
                        x = inout(reg) x,
                        odd = in(reg) odd,
                        options(nomem, nostack),
                    );
                }
            }
            let secs = start.elapsed().as_secs_f64();
            std::hint::black_box(x);
            best = best.max((rounds * CYCLES_PER_ROUND) as f64 / secs / 1e9);
        }
        Some(best)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZEN4: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu MHz\t\t: 2596.124\n\
        flags\t\t: fpu sse avx2 fma avx512f avx512_vnni avx512_bf16\n\
        processor\t: 1\nvendor_id\t: AuthenticAMD\ncpu MHz\t\t: 2596.124\n";

    #[test]
    fn peaks_follow_the_vector_units() {
        let p = CpuPeak::from_cpuinfo(ZEN4, 2).unwrap();
        assert_eq!(
            (p.cores, p.flops_per_cycle, p.isa, p.bf16),
            (2, 32, "avx512", true)
        );
        assert!((p.gflops() - 2.0 * 2.596124 * 32.0).abs() < 1e-9);
        // More threads than logical CPUs count as the CPUs.
        assert_eq!(CpuPeak::from_cpuinfo(ZEN4, 8).unwrap().cores, 2);
        let zen5 = ZEN4.replace(
            "vendor_id\t: AuthenticAMD\n",
            "vendor_id\t: AuthenticAMD\ncpu family\t: 26\n",
        );
        assert_eq!(CpuPeak::from_cpuinfo(&zen5, 1).unwrap().flops_per_cycle, 64);
        let intel = ZEN4.replace("AuthenticAMD", "GenuineIntel");
        assert_eq!(
            CpuPeak::from_cpuinfo(&intel, 1).unwrap().flops_per_cycle,
            64
        );
        assert_eq!(p.bf16_flops_per_cycle(), 64);
        let spr = intel.replace("avx512_bf16", "avx512_bf16 amx_bf16 amx_tile");
        let spr = CpuPeak::from_cpuinfo(&spr, 2).unwrap();
        assert!(spr.amx);
        assert!((spr.bf16_gflops() - 2.0 * 2.596124 * 2048.0).abs() < 1e-6);
        let old = "processor : 0\ncpu MHz : 2000\nflags : sse sse2\n";
        assert_eq!(CpuPeak::from_cpuinfo(old, 1).unwrap().gflops(), 2.0 * 16.0);
        assert_eq!(
            CpuPeak::from_cpuinfo(old, 1).unwrap().bf16_gflops(),
            2.0 * 16.0
        );
        assert!(CpuPeak::from_cpuinfo("processor : 0\n", 1).is_none());
    }

    #[test]
    fn bf16_counts_as_hardware_unless_the_environment_hides_it() {
        let zen4 = CpuPeak::from_cpuinfo(ZEN4, 2).unwrap();
        let zen3 = CpuPeak::from_cpuinfo(&ZEN4.replace(" avx512f avx512_vnni avx512_bf16", ""), 2)
            .unwrap();
        let spr = CpuPeak::from_cpuinfo(
            &ZEN4
                .replace("AuthenticAMD", "GenuineIntel")
                .replace("avx512_bf16", "avx512_bf16 amx_bf16 amx_tile"),
            2,
        )
        .unwrap();
        assert!(bf16_in_hardware(&zen4, None, None));
        assert!(bf16_in_hardware(&spr, None, None));
        assert!(!bf16_in_hardware(&zen3, None, None));
        // The stand-in for an AVX2 laptop: either cap hides bf16.
        assert!(!bf16_in_hardware(&zen4, Some("AVX2"), None));
        assert!(!bf16_in_hardware(&zen4, Some("avx512_core"), None));
        assert!(!bf16_in_hardware(&spr, None, Some("avx2")));
        assert!(!bf16_in_hardware(&zen4, None, Some("default")));
        // Caps at or above bf16 keep it; a cap cannot add hardware the CPU lacks.
        assert!(bf16_in_hardware(
            &zen4,
            Some("AVX512_CORE_BF16"),
            Some("avx512")
        ));
        assert!(bf16_in_hardware(&spr, Some("AVX512_CORE_AMX"), Some("")));
        assert!(bf16_in_hardware(&zen4, Some("ALL"), None));
        assert!(!bf16_in_hardware(&zen3, Some("ALL"), Some("avx512")));
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_measured_clock_is_a_plausible_clock() {
        let ghz = measured_clock_ghz().unwrap();
        assert!((0.3..8.0).contains(&ghz), "{ghz} GHz");
    }
}
