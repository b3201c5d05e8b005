//! The devices a model runs on: the CPU (burn's `flex` backend) in every build, and with
//! this crate's `gpu` feature a GPU through burn's wgpu backend (Vulkan, Metal or DX12;
//! docs/guide/gpu.md). Which of them a command uses is the binary's choice.

use burn::tensor::Device;

/// The CPU device (burn's `flex` backend).
#[must_use]
pub fn cpu() -> Device {
    Device::flex()
}

/// Whether `device` (with or without autodiff) is the CPU's: the fast path's kernels,
/// inference and training step, run there and nowhere else.
#[must_use]
pub fn is_cpu(device: &Device) -> bool {
    device.clone().without_autodiff() == Device::flex()
}

/// How far a GPU's outputs (policy logits, values) may lie from the CPU's for the same
/// weights and inputs. Both compute in f32; they differ in the order of the sums (a 3x3
/// convolution over 32 channels sums 288 products, the policy head's dense layer more) and
/// in fused multiply-adds, each worth a few ulp (1.2e-7 relative) of a running sum. Logits
/// are of order 1, so the rounding accumulated over the tower stays below 1e-3, while a
/// kernel that is actually wrong (padding, a dropped channel) moves outputs by 1e-2 or more.
pub const GPU_TOLERANCE: f32 = 1e-3;

/// A GPU opened through wgpu: the device, and the adapter's name and graphics API for logs.
#[cfg(feature = "gpu")]
#[derive(Clone, Debug)]
pub struct Gpu {
    /// burn's device on it.
    pub device: Device,
    /// e.g. `NVIDIA H100 (Vulkan, DiscreteGpu)` or `llvmpipe (LLVM 15.0.6, 256 bits)
    /// (Vulkan, Cpu)` for Mesa's software Vulkan.
    pub name: String,
}

/// Opens a GPU: with `index` None, the adapter wgpu prefers (a high-power GPU, else what
/// there is, Mesa's software Vulkan included); with `Some(n)`, the `n`-th discrete GPU.
/// Call once per process (wgpu's runtime is initialised once per adapter). The error is
/// one line, e.g. when the machine has no Vulkan, Metal or DX12 adapter.
#[cfg(feature = "gpu")]
pub fn gpu(index: Option<usize>) -> Result<Gpu, String> {
    use burn::tensor::DeviceKind;
    let kind = index.map_or(DeviceKind::DefaultDevice, DeviceKind::DiscreteGpu);
    let (device, setup) = Device::wgpu_options()
        .device_kind(kind.clone())
        .init_with_setup()
        .map_err(|e| format!("no wgpu adapter for {kind:?}: {e}"))?;
    let info = setup.adapter.get_info();
    Ok(Gpu {
        device,
        name: format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type),
    })
}
