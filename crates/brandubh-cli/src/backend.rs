//! The device a command runs burn on, and which backends this binary was built with. Only
//! the binary decides: the library crates are generic over the device.
//!
//! Every build has the CPU (burn's `flex` backend beside the fast path's kernels). Built
//! with `--features gpu`, `--device gpu[:N]` runs burn on a GPU through its wgpu backend
//! (Vulkan, Metal or DX12; docs/guide/gpu.md).

use std::fmt;

use brandubh_net::Device;

/// `--device`: where burn runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The CPU.
    #[default]
    Cpu,
    /// A GPU: the one wgpu prefers (`None`), or the N-th discrete GPU.
    Gpu(Option<usize>),
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceChoice::Cpu => f.write_str("cpu"),
            DeviceChoice::Gpu(None) => f.write_str("gpu"),
            DeviceChoice::Gpu(Some(n)) => write!(f, "gpu:{n}"),
        }
    }
}

/// Parses `cpu`, `gpu` or `gpu:N` (clap's value parser for `--device`).
pub fn parse_device(text: &str) -> Result<DeviceChoice, String> {
    match text {
        "cpu" => Ok(DeviceChoice::Cpu),
        "gpu" => Ok(DeviceChoice::Gpu(None)),
        _ => text
            .strip_prefix("gpu:")
            .and_then(|n| n.parse::<usize>().ok())
            .map(|n| DeviceChoice::Gpu(Some(n)))
            .ok_or_else(|| format!("expected cpu, gpu or gpu:N, got {text:?}")),
    }
}

/// An opened device.
#[derive(Clone, Debug)]
pub struct Opened {
    /// burn's device.
    pub device: Device,
    /// What it is, for logs: `CPU (burn flex)` or `GPU <adapter> (burn wgpu)`.
    pub name: String,
}

impl Opened {
    /// Whether it is a GPU.
    pub fn is_gpu(&self) -> bool {
        !brandubh_net::device::is_cpu(&self.device)
    }
}

/// Opens the device `choice` names. Call once per process for a GPU. Without the `gpu`
/// feature, `gpu` is a one-line error saying how to build a binary that has it.
pub fn open(choice: DeviceChoice) -> anyhow::Result<Opened> {
    match choice {
        DeviceChoice::Cpu => Ok(Opened {
            device: brandubh_net::device::cpu(),
            name: "CPU (burn flex)".to_owned(),
        }),
        DeviceChoice::Gpu(index) => open_gpu(choice, index),
    }
}

#[cfg(feature = "gpu")]
fn open_gpu(choice: DeviceChoice, index: Option<usize>) -> anyhow::Result<Opened> {
    let gpu =
        brandubh_net::device::gpu(index).map_err(|e| anyhow::anyhow!("--device {choice}: {e}"))?;
    Ok(Opened {
        device: gpu.device,
        name: format!("GPU {} (burn wgpu)", gpu.name),
    })
}

#[cfg(not(feature = "gpu"))]
fn open_gpu(choice: DeviceChoice, _index: Option<usize>) -> anyhow::Result<Opened> {
    anyhow::bail!(
        "--device {choice}: this binary is built without GPU support; build one with `cargo build --release --features brandubh-cli/gpu`"
    )
}
