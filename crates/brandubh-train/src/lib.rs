//! The AlphaZero loop of Brandubh Zero.
//!
//! - [`selfplay`]: many games at once on worker threads, each worker batching the leaves
//!   of all its games' searches into one evaluator call;
//! - [`run`]: `brandubh train` as a library: per iteration self-play → replay chunks →
//!   training on the window → checkpoint → metrics and plots, resumable after a crash.
//!
//! Architecture invariant: this crate uses the network only through `brandubh-net`'s API
//! and never names burn types; it knows nothing of clap or indicatif (progress is reported
//! through callbacks).
#![warn(missing_docs)]

pub mod run;
pub mod selfplay;
