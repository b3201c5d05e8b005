//! Which burn backend this binary was built with. Only the binary decides: the library
//! crates are generic over the device.

use brandubh_net::Device;

/// The backend's name, for logs.
pub const NAME: &str = "burn flex (CPU)";

/// The device training runs on.
pub fn device() -> Device {
    Device::flex()
}
