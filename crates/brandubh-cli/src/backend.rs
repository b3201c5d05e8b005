//! Which burn backend this binary was built with. Only the binary decides: the library
//! crates are generic over the device.
//!
//! The default build trains on the CPU with burn's `flex` backend. Built with `--features
//! cuda`, it trains on the first CUDA GPU.

use brandubh_net::Device;

/// The backend's name, for logs.
#[cfg(not(feature = "cuda"))]
pub const NAME: &str = "burn flex (CPU)";
/// The backend's name, for logs.
#[cfg(feature = "cuda")]
pub const NAME: &str = "burn cuda (GPU 0)";

/// Whether the training device is a GPU, where self-play should evaluate too.
pub const GPU: bool = cfg!(feature = "cuda");

/// The device training runs on.
#[cfg(not(feature = "cuda"))]
pub fn device() -> Device {
    Device::flex()
}

/// The device training runs on.
#[cfg(feature = "cuda")]
pub fn device() -> Device {
    Device::cuda(0)
}
